//! Preflight checks of the commands agents may start: MCP servers and `run`.

use std::collections::BTreeSet;

use indexmap::IndexMap;

use super::{Findings, HostView, Input, Level, grouped, has_run};
use crate::tools::RunApproval;
use crate::village::AgentSpec;
use crate::village::mcp_config::McpServerEntry;

/// Agents with `run` whose unknown commands will wait for an approval no one gives.
pub(super) fn run_approval_required(i: &Input<'_>, out: &mut Findings) {
    let view = i.view;
    let started = &i.started[..];
    let runners: Vec<&str> = started
        .iter()
        .filter(|a| has_run(a))
        .map(|a| a.id.as_str())
        .collect();
    if view.run_approval == RunApproval::Required && !runners.is_empty() {
        let agents = runners.join(", ");
        out.add(
            Level::Warn,
            "RUN_APPROVAL_REQUIRED",
            format!("{agents} の未知のコマンドは承認待ちに積まれ、誰も承認しません。"),
            format!("Unknown commands of {agents} will wait for an approval no one gives."),
            "run.json の allow を足すか、--run-approval を変えてください。",
            "Extend run.json's allow list, or choose another --run-approval.",
        );
    }
}

/// A stdio MCP server's command cannot be found (one per command, the servers listed).
pub(super) fn mcp_command_not_found(i: &Input<'_>, out: &mut Findings) {
    let view = i.view;
    for (command, servers) in &mcp_commands_not_found(view) {
        let servers = servers.join(", ");
        out.add(
            Level::Warn,
            "MCP_COMMAND_NOT_FOUND",
            format!("MCP サーバー {servers} のコマンド {command} が見つかりません。"),
            format!("The command {command} of MCP servers {servers} is not found."),
            "コマンドを入れるか、リモート MCP（type http）に寄せてください。",
            "Install the command, or use a remote MCP server (type http).",
        );
    }
}

/// An allowed `run` command cannot be found (one per command, the agents listed).
pub(super) fn run_command_not_found(i: &Input<'_>, out: &mut Findings) {
    let view = i.view;
    let started = &i.started[..];
    for (program, agents) in &run_commands_not_found(started, view) {
        let agents = agents.join(", ");
        out.add(
            Level::Warn,
            "RUN_COMMAND_NOT_FOUND",
            format!("run.json が許すコマンド {program} が見つかりません（個体: {agents}）。"),
            format!("The command {program} allowed in run.json is not found (agents: {agents})."),
            "コマンドを入れるか、allow の行を直してください（相対パスは作業フォルダから数えます）。",
            "Install it, or fix the allow line (a relative path counts from the work folder).",
        );
    }
}

/// Commands may run on a kernel without Landlock.
pub(super) fn run_unconfined_check(i: &Input<'_>, out: &mut Findings) {
    let view = i.view;
    let confined = crate::process::confinement_available();
    if run_unconfined(confined, view.run_approval, view.start, view.run_allow) {
        out.add(
            Level::Warn,
            "RUN_UNCONFINED",
            "このカーネルには Landlock がありません。run のコマンドは作業フォルダの外も読み書きできます。".to_owned(),
            "This kernel has no Landlock: run commands are not confined to the work folder.".to_owned(),
            "Landlock のある Linux（5.13 以降、LSM で有効）で動かすか、run.json の allow を絞ってください。",
            "Run on Linux with Landlock enabled (5.13+, in the LSM list), or keep run.json's allow list tight.",
        );
    }
}

/// `"network": false` that this kernel cannot enforce.
pub(super) fn run_network_unconfined_check(i: &Input<'_>, out: &mut Findings) {
    let view = i.view;
    let network_rules = crate::process::network_confinement_available();
    if let Some(agent) = run_network_unconfined(
        network_rules,
        view.run_approval,
        view.run_network_denied,
        view.run_allow,
    ) {
        out.add(
            Level::Warn,
            "RUN_NETWORK_UNCONFINED",
            format!(
                "{agent} の run.json は \"network\": false ですが、このカーネルでは効きません（Landlock ABI 4、Linux 6.7 以降が必要）。run のコマンドは TCP で接続できます。"
            ),
            format!(
                "{agent}'s run.json says \"network\": false, but this kernel cannot enforce it (needs Landlock ABI 4, Linux 6.7+): run commands can open TCP connections."
            ),
            "Linux 6.7 以降（Landlock 有効）で動かすか、ネットワークを使えるコマンドを allow から外してください。",
            "Run on Linux 6.7+ with Landlock enabled, or keep commands that can use the network off the allow list.",
        );
    }
}

/// The commands of enabled stdio MCP servers (shared, and the start agents' own) that cannot be
/// found, each with its servers (`name (file)`).
fn mcp_commands_not_found(view: &HostView<'_>) -> IndexMap<String, Vec<String>> {
    let mut out: IndexMap<String, Vec<String>> = IndexMap::new();
    for (owner, config) in view
        .mcp
        .iter()
        .filter(|(o, _)| o.is_empty() || view.start.contains(o))
    {
        let whose = if owner.is_empty() {
            "mcp.json".to_owned()
        } else {
            format!("agents/{owner}/mcp.json")
        };
        for (name, entry) in &config.mcp_servers {
            if let McpServerEntry::Stdio(s) = entry
                && s.enabled
                && !(view.command_found)(&s.command)
            {
                out.entry(s.command.clone())
                    .or_default()
                    .push(format!("{name} ({whose})"));
            }
        }
    }
    out
}

/// The first words of the allow lines of start agents that have `run` which cannot be found:
/// a name on PATH, an absolute path, or a relative path from the agent's work folder (where
/// `run` starts commands). Each with its agents.
fn run_commands_not_found<'a>(
    started: &[&'a AgentSpec],
    view: &'a HostView<'_>,
) -> IndexMap<&'a str, Vec<&'a str>> {
    let pairs = started.iter().filter(|a| has_run(a)).flat_map(|a| {
        view.run_allow
            .iter()
            .filter(move |(id, _)| id == a.id.as_str())
            .flat_map(|(_, allow)| allow.iter())
            .filter_map(|line| line.split_whitespace().next())
            .filter(move |program| !run_command_found(program, a.work_dir.as_deref(), view))
            .map(move |program| (program, a.id.as_str()))
    });
    grouped(pairs)
}

fn run_command_found(program: &str, work_dir: Option<&str>, view: &HostView<'_>) -> bool {
    let path = std::path::Path::new(program);
    match work_dir {
        Some(dir) if program.contains('/') && path.is_relative() => {
            (view.command_found)(&std::path::Path::new(dir).join(path).to_string_lossy())
        }
        _ => (view.command_found)(program),
    }
}

/// Whether a start agent may run commands (allow lines, or a mode that runs unknown ones) on a
/// machine where Landlock cannot confine them.
pub fn run_unconfined(
    confined: bool,
    approval: RunApproval,
    start: &BTreeSet<String>,
    run_allow: &[(String, Vec<String>)],
) -> bool {
    let may_run = approval != RunApproval::Required
        || run_allow
            .iter()
            .any(|(agent, allow)| start.contains(agent) && !allow.is_empty());
    !confined && may_run
}

/// The first start agent that asks for `"network": false` and may run commands, when the
/// kernel cannot enforce network rules (`network_rules` false); `None` otherwise.
pub fn run_network_unconfined<'a>(
    network_rules: bool,
    approval: RunApproval,
    network_denied: &'a [String],
    run_allow: &[(String, Vec<String>)],
) -> Option<&'a str> {
    if network_rules {
        return None;
    }
    network_denied
        .iter()
        .find(|agent| {
            approval != RunApproval::Required
                || run_allow
                    .iter()
                    .any(|(a, allow)| a == *agent && !allow.is_empty())
        })
        .map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::{RunApproval, run_network_unconfined};

    #[test]
    fn network_false_warns_only_where_the_kernel_cannot_enforce_it_and_commands_may_run() {
        let denied = vec!["rec".to_owned()];
        let allow = vec![("rec".to_owned(), vec!["curl *".to_owned()])];
        let none = vec![("rec".to_owned(), Vec::new())];
        let required = RunApproval::Required;
        assert_eq!(
            run_network_unconfined(false, required, &denied, &allow),
            Some("rec")
        );
        assert_eq!(
            run_network_unconfined(true, required, &denied, &allow),
            None
        );
        assert_eq!(run_network_unconfined(false, required, &[], &allow), None);
        assert_eq!(
            run_network_unconfined(false, required, &denied, &none),
            None
        );
        assert_eq!(
            run_network_unconfined(false, RunApproval::AutoApprove, &denied, &none),
            Some("rec")
        );
    }
}
