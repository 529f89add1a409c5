//! Decisions of the `run` tool from `run.json` (docs/formats/run.json.md): deny wins, then allow,
//! else unknown (refused and recorded in `pending`); malformed calls are refused in every mode.
//! Patterns match argv tokens; a trailing `*` means "any remaining arguments".

use crate::village::run_policy::{CommandPolicy, MAX_PENDING, PendingCommand};

/// What the policy says about a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// An allow line matches and no deny line does.
    Allowed,
    /// A deny line matches.
    Denied,
    /// Nothing matches.
    Unknown,
    /// The call itself is malformed (empty command, whitespace in it, NUL bytes).
    Malformed,
}

/// True when a pattern (`git status`, `cargo *`) matches the argv.
pub(crate) fn matches(pattern: &str, argv: &[&str]) -> bool {
    let tokens: Vec<&str> = pattern.split_whitespace().collect();
    match tokens.split_last() {
        None => false,
        Some((&"*", fixed)) => {
            argv.len() >= fixed.len() && fixed.iter().zip(argv).all(|(p, a)| p == a)
        }
        Some(_) => tokens.len() == argv.len() && tokens.iter().zip(argv).all(|(p, a)| p == a),
    }
}

/// Decides a call.
pub fn decide(policy: &CommandPolicy, command: &str, args: &[String]) -> Decision {
    let malformed = command.is_empty()
        || command.chars().any(char::is_whitespace)
        || command.contains('\0')
        || args.iter().any(|a| a.contains('\0'));
    if malformed {
        return Decision::Malformed;
    }
    let mut argv: Vec<&str> = vec![command];
    argv.extend(args.iter().map(String::as_str));
    if policy.deny.iter().any(|p| matches(p, &argv)) {
        Decision::Denied
    } else if policy.allow.iter().any(|p| matches(p, &argv)) {
        Decision::Allowed
    } else {
        Decision::Unknown
    }
}

/// Records an unknown call in `pending` (counted when it repeats; the oldest evicted past 20).
pub(crate) fn record_pending(
    policy: &mut CommandPolicy,
    command: &str,
    args: &[String],
    now_ms: i64,
) {
    if let Some(p) = policy
        .pending
        .iter_mut()
        .find(|p| p.command == command && p.args == args)
    {
        p.count += 1;
        return;
    }
    policy.pending.push(PendingCommand {
        command: command.to_owned(),
        args: args.to_vec(),
        first_requested_at_ms: now_ms,
        count: 1,
        extra: Default::default(),
    });
    while policy.pending.len() > MAX_PENDING {
        policy.pending.remove(0);
    }
}

/// The exact allow line auto-approve appends, when the call can be written as one
/// (no argument that is empty, holds whitespace, or ends in `*`).
pub(crate) fn exact_allow_line(command: &str, args: &[String]) -> Option<String> {
    if args
        .iter()
        .any(|a| a.is_empty() || a.chars().any(char::is_whitespace) || a.ends_with('*'))
    {
        return None;
    }
    let mut line = command.to_owned();
    for a in args {
        line.push(' ');
        line.push_str(a);
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(allow: &[&str], deny: &[&str]) -> CommandPolicy {
        CommandPolicy {
            allow: allow.iter().map(|s| (*s).to_owned()).collect(),
            deny: deny.iter().map(|s| (*s).to_owned()).collect(),
            ..CommandPolicy::default()
        }
    }

    #[test]
    fn decisions() {
        let p = policy(&["git status", "cargo *", "ls"], &["cargo publish *"]);
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
        assert_eq!(decide(&p, "git", &s(&["status"])), Decision::Allowed);
        assert_eq!(
            decide(&p, "git", &s(&["status", "-s"])),
            Decision::Unknown,
            "exact lines match exactly"
        );
        assert_eq!(
            decide(&p, "cargo", &s(&["test", "--all"])),
            Decision::Allowed
        );
        assert_eq!(
            decide(&p, "cargo", &[]),
            Decision::Allowed,
            "* matches no arguments too"
        );
        assert_eq!(
            decide(&p, "cargo", &s(&["publish", "--dry-run"])),
            Decision::Denied,
            "deny wins"
        );
        assert_eq!(decide(&p, "rm", &s(&["-rf", "/"])), Decision::Unknown);
        assert_eq!(decide(&p, "git status", &[]), Decision::Malformed);
        assert_eq!(decide(&p, "", &[]), Decision::Malformed);
        assert_eq!(
            exact_allow_line("ls", &s(&["-la"])).as_deref(),
            Some("ls -la")
        );
        assert_eq!(exact_allow_line("ls", &s(&["a b"])), None);
        assert_eq!(exact_allow_line("ls", &s(&["*"])), None);
    }

    #[test]
    fn pending_counts_and_evicts() {
        let mut p = CommandPolicy::default();
        for i in 0..25 {
            record_pending(&mut p, "tool", &[format!("{i}")], i);
        }
        record_pending(&mut p, "tool", &["24".to_owned()], 99);
        assert_eq!(p.pending.len(), 20);
        assert_eq!(p.pending[0].args, ["5"]);
        assert_eq!(p.pending[19].count, 2);
    }
}
