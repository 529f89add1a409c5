//! Exit codes of `fuseforks-cli`, in one place.

use fuseforks_core::orchestrator::PlanTaskState;
use fuseforks_host::HostError;
use fuseforks_host::lock::LockError;
use fuseforks_host::preflight_view::PreflightError;

/// Success (`ask` answered or handed off; `check` without rejections; `serve` closed normally).
pub(crate) const OK: u8 = 0;
/// The core returned an error.
pub(crate) const CORE_ERROR: u8 = 1;
/// Usage error (a `FUSEFORKS_REQUIRE_BAKE` other than `1`/`0` too).
pub(crate) const USAGE: u8 = 2;
/// The preflight rejected (`NOT_A_BAKE_COPY` too).
pub(crate) const REJECTED: u8 = 3;
/// The village lock or `sessions.redb` is held by another process.
pub(crate) const LOCKED: u8 = 4;
/// Boot failure: a broken or missing `world.json`, a secret-name collision, a data folder this
/// process may not write (`DATA_DIR_READ_ONLY`, `DATA_DIR_NOT_WRITABLE`), a file error.
pub(crate) const BOOT_FAILED: u8 = 5;
/// `ask`: no answer (the model call failed — stderr says why —, the tool-round cap
/// `maxToolIterations` was reached, or the repeat guard stopped the turn: each with its own
/// fixed line on stdout), or undeliverable.
pub(crate) const NO_ANSWER: u8 = 6;
/// `ask`: the wait ran out.
pub(crate) const TIMED_OUT: u8 = 7;
/// `ask`: interrupted (Ctrl+C included).
pub(crate) const INTERRUPTED: u8 = 8;
/// `ask`: the budget ceiling stopped it.
pub(crate) const BUDGET_EXHAUSTED: u8 = 9;
/// `bake`: a credential-like MCP header holds a plaintext value (nothing written).
pub(crate) const PLAINTEXT_HEADERS: u8 = 10;
/// The output already holds state (`init`: a village exists at `--data-dir`).
pub(crate) const OUTPUT_EXISTS: u8 = 11;
/// `ask --accept`: the goal was not reached after `--max-attempts` attempts, or the
/// acceptance command could not be checked (`error` / `timeout`: not retried). Stdout ends
/// with a fixed line saying which; stderr has `GOAL_NOT_REACHED` or `GOAL_CHECK_FAILED`.
pub(crate) const GOAL_NOT_REACHED: u8 = 12;
/// `audit verify`: the audit log's chain is broken (stderr names the first broken line and
/// why: edited, deleted, reordered, truncated, malformed).
pub(crate) const AUDIT_BROKEN: u8 = 13;
/// `ask` / `serve`: the village is halted (the `halt` marker on the shelf, or a halt while
/// running); `fuseforks-cli resume --data-dir D` lifts it.
pub(crate) const HALTED: u8 = 14;
/// `ask`: needs input — the reception asked the person a question (`ask_user`); stdout has
/// the question, stderr the conversation to answer with `ask --resume ID "answer"`.
pub(crate) const NEEDS_INPUT: u8 = 15;

/// Every exit code with its meaning, as `--help` prints it (and the README's table says).
pub(crate) const TABLE: [(u8, &str); 16] = [
    (OK, "ok"),
    (CORE_ERROR, "core error"),
    (
        USAGE,
        "usage error (init: also a --base-url the endpoint rule refuses)",
    ),
    (
        REJECTED,
        "preflight rejected (judge validate: a broken judge file; bake: an unmapped path)",
    ),
    (LOCKED, "village locked by another process"),
    (
        BOOT_FAILED,
        "boot failure (broken or missing world.json, secret-name collision, a data folder\n      this process may not write)",
    ),
    (
        NO_ANSWER,
        "no answer; stderr says why (a failed model call with its code, HTTP status or\n      network class, template and host; the tool-round cap maxToolIterations; the repeat\n      guard), and stdout has a line of its own; judge try: undecided; demo: the work\n      was not done",
    ),
    (TIMED_OUT, "timed out"),
    (INTERRUPTED, "interrupted (Ctrl+C), or no at a confirmation"),
    (BUDGET_EXHAUSTED, "budget exhausted"),
    (
        PLAINTEXT_HEADERS,
        "bake: a credential-like MCP header holds a plaintext value",
    ),
    (
        OUTPUT_EXISTS,
        "the output already holds state (init: a village; bake: --out / --env-out;\n      sessions export --out, demo --keep: the path exists; servants/templates add:\n      the id is taken)",
    ),
    (
        GOAL_NOT_REACHED,
        "ask --accept: goal not reached after --max-attempts, or the acceptance command\n      could not run or timed out (not retried); stdout ends with a fixed line",
    ),
    (
        AUDIT_BROKEN,
        "audit verify: the audit log's chain is broken (the first broken line and why)",
    ),
    (
        HALTED,
        "village halted (ask/serve refuse until `fuseforks-cli resume --data-dir D`)",
    ),
    (
        NEEDS_INPUT,
        "ask: needs input: the question is on stdout; answer it with\n      `ask --resume SESSION \"answer\"` (stderr names SESSION)",
    ),
];

/// The `Exit codes:` paragraph of `--help`, from [`TABLE`].
pub(crate) fn help_table() -> String {
    let mut text = String::from("Exit codes:");
    for (code, meaning) in TABLE {
        text.push_str(&format!("\n  {code:>2}  {meaning}"));
    }
    text
}

/// The exit code for a village error.
pub(crate) fn for_village_error(err: &fuseforks_core::village::VillageError) -> u8 {
    match err {
        fuseforks_core::village::VillageError::AlreadyExists { .. } => OUTPUT_EXISTS,
        _ => BOOT_FAILED,
    }
}

/// The exit code of a failed `bake` (nothing was written).
pub(crate) fn for_bake_failure(failure: fuseforks_host::bake::BakeFailure) -> u8 {
    use fuseforks_host::bake::BakeFailure;
    match failure {
        BakeFailure::Usage => USAGE,
        BakeFailure::Unmapped => REJECTED,
        BakeFailure::Locked => LOCKED,
        BakeFailure::Unreadable => BOOT_FAILED,
        BakeFailure::PlaintextHeaders => PLAINTEXT_HEADERS,
        BakeFailure::OutState => OUTPUT_EXISTS,
    }
}

/// The exit code of an `ask` outcome.
pub(crate) fn for_outcome(state: PlanTaskState) -> u8 {
    match state {
        PlanTaskState::Answered | PlanTaskState::HandedOff => OK,
        PlanTaskState::NoAnswer
        | PlanTaskState::Undeliverable
        | PlanTaskState::Running
        | PlanTaskState::ToolLimit
        | PlanTaskState::Repeat => NO_ANSWER,
        PlanTaskState::TimedOut => TIMED_OUT,
        PlanTaskState::Interrupted => INTERRUPTED,
        PlanTaskState::BudgetExhausted => BUDGET_EXHAUSTED,
        PlanTaskState::NeedsInput => NEEDS_INPUT,
    }
}

/// The exit code of a failed boot.
pub(crate) fn for_host_error(err: &HostError) -> u8 {
    match err {
        HostError::Lock(LockError::Held(_)) | HostError::SessionStoreLocked(_) => LOCKED,
        HostError::Core(_) => CORE_ERROR,
        _ => BOOT_FAILED,
    }
}

/// The exit code of a preflight that could not run.
pub(crate) fn for_preflight_error(err: &PreflightError) -> u8 {
    match err {
        PreflightError::Usage(_) | PreflightError::RequireBake(_) => USAGE,
        _ => BOOT_FAILED,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_table_names_every_code_once() {
        let codes: Vec<u8> = TABLE.iter().map(|(c, _)| *c).collect();
        assert_eq!(
            codes,
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
        );
        let help = help_table();
        assert!(
            help.contains("\n  11  the output already holds state (init: a village;"),
            "{help}"
        );
    }

    #[test]
    fn outcomes_map_to_the_table() {
        assert_eq!(for_outcome(PlanTaskState::Answered), 0);
        assert_eq!(for_outcome(PlanTaskState::HandedOff), 0);
        assert_eq!(for_outcome(PlanTaskState::Undeliverable), 6);
        assert_eq!(for_outcome(PlanTaskState::NoAnswer), 6);
        assert_eq!(for_outcome(PlanTaskState::TimedOut), 7);
        assert_eq!(for_outcome(PlanTaskState::Interrupted), 8);
        assert_eq!(for_outcome(PlanTaskState::BudgetExhausted), 9);
        assert_eq!(for_outcome(PlanTaskState::ToolLimit), 6);
        assert_eq!(for_outcome(PlanTaskState::Repeat), 6);
        assert_eq!(for_outcome(PlanTaskState::NeedsInput), 15);
    }

    #[test]
    fn bake_failures_map_to_seed_004_d2() {
        use fuseforks_host::bake::BakeFailure;
        let got: Vec<u8> = [
            BakeFailure::Usage,
            BakeFailure::Unmapped,
            BakeFailure::Locked,
            BakeFailure::Unreadable,
            BakeFailure::PlaintextHeaders,
            BakeFailure::OutState,
        ]
        .into_iter()
        .map(for_bake_failure)
        .collect();
        assert_eq!(got, [2, 3, 4, 5, 10, 11]);
    }
}
