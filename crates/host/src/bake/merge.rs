//! The mixed files of `bake`: `schedules.json` (definitions from the source, each
//! schedule's `lastConsumedDueMs` from the copy) and `run.json` (`allow`/`deny`/timeout from
//! the source, `pending` from the copy, lines the new rules settle pruned). What a merge drops
//! is named in a [`Warning`].

use fuseforks_core::tools::{Decision, decide};
use fuseforks_core::village::{CommandPolicy, Schedules};

use super::Warning;

/// `source`'s schedules carrying the copy's consumption records (`None` on a first bake: the
/// records are dropped). A record of a schedule the source no longer has is dropped and named
/// (`CONSUMED_RECORD_DROPPED`).
pub(super) fn schedules(
    source: &Schedules,
    copy: Option<&Schedules>,
    warnings: &mut Vec<Warning>,
) -> Schedules {
    let mut merged = source.clone();
    for task in &mut merged.0 {
        task.last_consumed_due_ms = copy
            .and_then(|c| c.0.iter().find(|t| t.id == task.id))
            .and_then(|t| t.last_consumed_due_ms);
    }
    if let Some(copy) = copy {
        for gone in copy
            .0
            .iter()
            .filter(|t| t.last_consumed_due_ms.is_some())
            .filter(|t| !source.0.iter().any(|s| s.id == t.id))
        {
            warnings.push(Warning::new(
                "CONSUMED_RECORD_DROPPED",
                format!(
                    "schedules.json: schedule {} is no longer in the source; the copy's consumption record of it was dropped",
                    gone.id
                ),
            ));
        }
    }
    merged
}

/// `source`'s rules with the copy's `pending` (none on a first bake), minus the pending lines
/// the new rules settle (allowed or denied now). `allow` lines the copy has and the source
/// does not are named (`ALLOW_LINE_DROPPED`): the container's auto-approvals vanish with a
/// re-bake unless they are copied back into the GUI's village.
pub(super) fn run_policy(
    agent: &str,
    source: &CommandPolicy,
    copy: Option<&CommandPolicy>,
    warnings: &mut Vec<Warning>,
) -> CommandPolicy {
    let mut merged = source.clone();
    merged.pending = copy
        .map(|c| c.pending.clone())
        .unwrap_or_default()
        .into_iter()
        .filter(|p| decide(source, &p.command, &p.args) == Decision::Unknown)
        .collect();
    if let Some(copy) = copy {
        for line in copy.allow.iter().filter(|l| !source.allow.contains(l)) {
            warnings.push(Warning::new(
                "ALLOW_LINE_DROPPED",
                format!(
                    "agents/{agent}/run.json: the copy's allow line {line:?} is not in the source and was dropped (add it in the GUI's village to keep it)"
                ),
            ));
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(json: &str) -> CommandPolicy {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn settled_pending_lines_go_and_open_ones_stay() {
        let source = policy(r#"{"allow":["git status"],"deny":["rm *"]}"#);
        let copy = policy(
            r#"{"allow":["git status","ls"],"pending":[
            {"command":"git","args":["status"],"firstRequestedAtMs":1,"count":1},
            {"command":"rm","args":["-rf","x"],"firstRequestedAtMs":2,"count":1},
            {"command":"make","args":[],"firstRequestedAtMs":3,"count":2}]}"#,
        );
        let mut warnings = Vec::new();
        let merged = run_policy("a", &source, Some(&copy), &mut warnings);
        assert_eq!(merged.allow, ["git status"]);
        assert_eq!(merged.pending.len(), 1);
        assert_eq!(merged.pending[0].command, "make");
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].message.contains("\"ls\""));
        let first = run_policy("a", &copy, None, &mut warnings);
        assert!(first.pending.is_empty());
    }
}
