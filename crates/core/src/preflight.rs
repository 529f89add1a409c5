//! Headless preflight (seed 001 D5, seed 004 D5, reference §3.12): a pure function from the
//! village files and a view of the host (which secrets exist, which commands are on PATH, …)
//! to findings — reject / warn / info, each with a code, a message and a fix in the village
//! language, sorted heaviest first, then in the table's order. It calls no model, connects no
//! MCP server, writes nothing and takes no lock.

use std::collections::BTreeSet;

use indexmap::IndexMap;
use sha2::{Digest, Sha256};

use crate::tools::RunApproval;
use crate::village::mcp_config::{McpConfig, McpServerEntry};
use crate::village::schedule::{Recurrence, ScheduleProbe, ScheduledTask};
use crate::village::{AgentSpec, Credential, EndpointProblem, EndpointSecurity, Language, World};

/// Which command the preflight is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeadlessMode {
    /// `ask`: one request to the reception.
    Ask,
    /// `serve`: agents, schedules and the door until a signal.
    Serve,
}

/// How heavy a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// The command refuses to run.
    Reject,
    /// It runs, but something will not work.
    Warn,
    /// Worth knowing.
    Info,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// Level.
    pub level: Level,
    /// Stable code.
    pub code: &'static str,
    /// What is wrong (names agents, keys and variables; never secret values).
    pub message: String,
    /// How to fix it.
    pub fix: String,
}

/// What the preflight may know about the host. Every fact is a plain value or a lookup, so the
/// preflight itself stays pure.
pub struct HostView<'a> {
    /// The command.
    pub mode: HeadlessMode,
    /// The agents that will start (for `ask`, the reception is already in).
    pub start: &'a BTreeSet<String>,
    /// Whether the chosen secret store holds a key (values are never seen).
    pub secret_present: &'a dyn Fn(&str) -> bool,
    /// Whether a probe is approved on this shelf.
    pub probe_approved: &'a dyn Fn(&ScheduleProbe) -> bool,
    /// Whether a program can be found (absolute path exists, or a name on PATH).
    pub command_found: &'a dyn Fn(&str) -> bool,
    /// Whether a folder exists.
    pub dir_exists: &'a dyn Fn(&str) -> bool,
    /// Whether a folder overlaps this village's data folder (is it, holds it, or lies in it).
    pub dir_holds_village: &'a dyn Fn(&str) -> bool,
    /// The shared `mcp.json` and each agent's (`(agent id or "", config)`).
    pub mcp: &'a [(String, McpConfig)],
    /// Each start agent's `run.json` allow lines.
    pub run_allow: &'a [(String, Vec<String>)],
    /// The start agents whose `run.json` says `"network": false`.
    pub run_network_denied: &'a [String],
    /// `jev.json` pruning switch, and whether its token exists.
    pub jev_pruning_enabled: bool,
    /// `--bypass-plan-review`.
    pub bypass_plan_review: bool,
    /// `--run-approval`.
    pub run_approval: RunApproval,
    /// `--door-port` (serve).
    pub door_port: Option<u16>,
    /// The time zone the schedules will fire in (`TZ`, else the system's).
    pub time_zone: Option<String>,
    /// `bake.json`'s source time zone, in a bake copy.
    pub baked_time_zone: Option<String>,
    /// Language of the findings.
    pub language: Language,
}

/// The SHA-256 key of a probe approval: canonical JSON `{args, command, cwd, villageId}`.
pub fn probe_key(probe: &ScheduleProbe, village_id: &str) -> String {
    let canonical = serde_json::json!({"args": probe.args, "command": probe.command, "cwd": probe.cwd, "villageId": village_id});
    // serde_json (preserve_order) keeps the order written above, which is the sorted order.
    let digest = Sha256::digest(canonical.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs every check.
pub fn headless_preflight(
    world: &World,
    schedules: &[ScheduledTask],
    view: &HostView<'_>,
) -> Vec<Finding> {
    let ja = view.language == Language::Ja;
    let mut out: Vec<Finding> = Vec::new();
    let mut add = |level, code, ja_msg: String, en_msg: String, ja_fix: &str, en_fix: &str| {
        out.push(Finding {
            level,
            code,
            message: if ja { ja_msg } else { en_msg },
            fix: if ja {
                ja_fix.to_owned()
            } else {
                en_fix.to_owned()
            },
        });
    };
    let started: Vec<&crate::village::AgentSpec> = world
        .agents
        .iter()
        .filter(|a| view.start.contains(a.id.as_str()))
        .collect();
    let serve = view.mode == HeadlessMode::Serve;

    // PLAN_REVIEW_WAITS
    if !view.bypass_plan_review {
        for a in started.iter().filter(|a| a.plan_review) {
            add(
                Level::Reject,
                "PLAN_REVIEW_WAITS",
                format!(
                    "{} は計画の確認が ON です。画面の無い実行では確認が永久に来ません。",
                    a.id
                ),
                format!(
                    "{} has plan review on; without a GUI no one will ever review its plans.",
                    a.id
                ),
                "--bypass-plan-review を付けるか、この個体の planReview を切ってください。",
                "Pass --bypass-plan-review, or turn planReview off for this agent.",
            );
        }
    }
    // SECRET_MISSING (templates, then ${secret:NAME} in MCP headers)
    let mut templates_checked = BTreeSet::new();
    for a in &started {
        if let Some(t) = world.template(&a.model_template_id) {
            let needs_key = t.credential != Credential::NotRequired;
            if needs_key
                && templates_checked.insert(t.id.as_str())
                && !(view.secret_present)(t.id.as_str())
            {
                let var = crate::preflight::env_var_name(t.id.as_str());
                add(
                    Level::Reject,
                    "SECRET_MISSING",
                    format!(
                        "テンプレート {} の API キーがありません（鍵 {} / 環境変数 {var}）。",
                        t.id, t.id
                    ),
                    format!(
                        "No API key for template {} (key {} / variable {var}).",
                        t.id, t.id
                    ),
                    "資格情報ストアに鍵を置くか、--secrets env で環境変数を設定してください。",
                    "Store the key in the OS keyring, or set the variable and pass --secrets env.",
                );
            }
        }
    }
    for name in secret_refs(view.mcp, view.start) {
        let key = format!("mcp:{name}");
        if !(view.secret_present)(&key) {
            let var = env_var_name(&key);
            add(
                Level::Reject,
                "SECRET_MISSING",
                format!("MCP のヘッダーが参照する秘密 {key} がありません（環境変数 {var}）。"),
                format!(
                    "The secret {key} referenced by an MCP header is missing (variable {var})."
                ),
                &format!(
                    "秘密 {key}（環境変数 {var}）を置いてください。無いとそのサーバーには繋がりません。"
                ),
                &format!(
                    "Provide the secret {key} (variable {var}); without it that server is not connected."
                ),
            );
        }
    }
    // MODEL_TEMPLATE_MISSING (one per template, the agents listed)
    let missing = grouped(
        started
            .iter()
            .filter(|a| world.template(&a.model_template_id).is_none())
            .map(|a| (a.model_template_id.as_str(), a.id.as_str())),
    );
    for (template, agents) in &missing {
        let agents = agents.join(", ");
        add(
            Level::Reject,
            "MODEL_TEMPLATE_MISSING",
            format!("テンプレート {template} がありません（使う個体: {agents}）。"),
            format!("Template {template} does not exist (used by {agents})."),
            "world.json の modelTemplateId を存在するテンプレートに直すか、そのテンプレートを足してください。",
            "Point modelTemplateId in world.json at an existing template, or add that template.",
        );
    }
    // ENDPOINT_INVALID / ENDPOINT_INSECURE (reject); ENDPOINT_INSECURE_ALLOWED (warn)
    let mut endpoints_checked = BTreeSet::new();
    for t in started
        .iter()
        .filter_map(|a| world.template(&a.model_template_id))
        .filter(|t| endpoints_checked.insert(t.id.as_str()))
    {
        match t.endpoint_security() {
            Ok(EndpointSecurity::Tls | EndpointSecurity::Loopback) => {}
            Ok(EndpointSecurity::InsecureAllowed) => add(
                Level::Warn,
                "ENDPOINT_INSECURE_ALLOWED",
                format!(
                    "テンプレート {} の baseUrl は平文の http です（allowInsecureHttp）。鍵と会話が暗号化されずに流れます。",
                    t.id
                ),
                format!(
                    "Template {}: baseUrl is plain http (allowInsecureHttp); the key and the conversation travel unencrypted.",
                    t.id
                ),
                "信頼できる自前の網の中だけで使ってください。できれば https にしてください。",
                "Use it only inside a network you trust; prefer https.",
            ),
            Err(EndpointProblem::Invalid { why }) => add(
                Level::Reject,
                "ENDPOINT_INVALID",
                format!("テンプレート {} の baseUrl が使えません（{why}）。", t.id),
                format!("Template {}: baseUrl {why}.", t.id),
                "world.json の modelTemplates[].baseUrl に https://api.openai.com/v1 のような絶対 URL を書いてください。",
                "Write an absolute URL such as https://api.openai.com/v1 in modelTemplates[].baseUrl of world.json.",
            ),
            Err(EndpointProblem::Insecure { host }) => add(
                Level::Reject,
                "ENDPOINT_INSECURE",
                format!(
                    "テンプレート {} の baseUrl は平文の http で {host} へ向かいます。API キーが暗号化されずに流れます。",
                    t.id
                ),
                format!(
                    "Template {}: baseUrl is plain http to {host}; the API key would travel unencrypted.",
                    t.id
                ),
                "https にしてください。自前の網のモデルサーバーなら、テンプレートに \"allowInsecureHttp\": true を書けます。",
                "Use https; for a model server on your own network, set \"allowInsecureHttp\": true on the template.",
            ),
        }
    }
    // RECEPTION_UNSET / RECEPTION_MISSING
    if view.mode == HeadlessMode::Ask {
        match &world.reception {
            None => add(
                Level::Reject,
                "RECEPTION_UNSET",
                "窓口の個体が決まっていません。".into(),
                "The village has no reception agent.".into(),
                "world.json の reception に個体の ID を書いてください。",
                "Set reception in world.json to an agent id.",
            ),
            Some(r) if world.agent(r).is_none() => add(
                Level::Reject,
                "RECEPTION_MISSING",
                format!("窓口の {r} はもういません。"),
                format!("The reception {r} no longer exists."),
                "world.json の reception を今いる個体に直してください。",
                "Point reception in world.json at an existing agent.",
            ),
            Some(_) => {}
        }
    }
    // DOOR_TOKEN_MISSING
    if serve && view.door_port.is_some() && !(view.secret_present)("door_token") {
        add(
            Level::Reject,
            "DOOR_TOKEN_MISSING",
            "--door-port がありますが、扉のトークン door_token がありません。".into(),
            "--door-port is given but the door token (door_token) is missing.".into(),
            "秘密 door_token（環境変数 FUSEFORKS_SECRET_DOOR_TOKEN）を置いてください。",
            "Provide the secret door_token (variable FUSEFORKS_SECRET_DOOR_TOKEN).",
        );
    }
    // WORK_DIR_MISSING (one per folder, the agents listed)
    let missing = grouped(started.iter().filter_map(|a| {
        a.work_dir
            .as_deref()
            .filter(|d| !(view.dir_exists)(d))
            .map(|d| (d, a.id.as_str()))
    }));
    for (dir, agents) in &missing {
        let agents = agents.join(", ");
        add(
            Level::Reject,
            "WORK_DIR_MISSING",
            format!("作業フォルダ {dir} がありません（個体: {agents}）。"),
            format!("The work folder {dir} does not exist (agents: {agents})."),
            "フォルダを作るか、workDir を直してください（コンテナでは bake の --map）。",
            "Create the folder or fix workDir (in a container: bake --map).",
        );
    }
    // WORK_DIR_CONTAINS_VILLAGE (one per folder, the agents listed)
    let holding = grouped(started.iter().filter_map(|a| {
        a.work_dir
            .as_deref()
            .filter(|d| (view.dir_holds_village)(d))
            .map(|d| (d, a.id.as_str()))
    }));
    for (dir, agents) in &holding {
        let agents = agents.join(", ");
        add(
            Level::Reject,
            "WORK_DIR_CONTAINS_VILLAGE",
            format!(
                "作業フォルダ {dir} が村のフォルダを含んでいます（個体: {agents}。道具で自分の権限を書き換えられます）。"
            ),
            format!(
                "The work folder {dir} holds the village's own folder (agents: {agents}; their tools could rewrite their own rights)."
            ),
            "村のデータフォルダの外にある作業用フォルダを workDir にしてください。",
            "Point workDir at a folder outside the village's data folder.",
        );
    }
    // SCHEDULE_TARGET_OUTSIDE
    if serve {
        for s in schedules
            .iter()
            .filter(|s| s.enabled && !view.start.contains(s.to.as_str()))
        {
            add(
                Level::Warn,
                "SCHEDULE_TARGET_OUTSIDE",
                format!(
                    "予定 {} の宛先 {} は起動しません。発火しても届きません。",
                    s.id, s.to
                ),
                format!(
                    "Schedule {} targets {}, which will not run; it will fire into nothing.",
                    s.id, s.to
                ),
                "--start に宛先を含めるか、予定を無効にしてください。",
                "Include the target in --start, or disable the schedule.",
            );
        }
    }
    // RUN_APPROVAL_REQUIRED (one finding, the agents listed)
    let runners: Vec<&str> = started
        .iter()
        .filter(|a| has_run(a))
        .map(|a| a.id.as_str())
        .collect();
    if view.run_approval == RunApproval::Required && !runners.is_empty() {
        let agents = runners.join(", ");
        add(
            Level::Warn,
            "RUN_APPROVAL_REQUIRED",
            format!("{agents} の未知のコマンドは承認待ちに積まれ、誰も承認しません。"),
            format!("Unknown commands of {agents} will wait for an approval no one gives."),
            "run.json の allow を足すか、--run-approval を変えてください。",
            "Extend run.json's allow list, or choose another --run-approval.",
        );
    }
    // PROBE_UNAPPROVED
    if serve {
        for s in schedules.iter().filter(|s| s.enabled) {
            let probes = [s.probe.as_ref(), s.acceptance.as_ref().map(|a| &a.probe)];
            for p in probes
                .into_iter()
                .flatten()
                .filter(|p| !(view.probe_approved)(p))
            {
                add(
                    Level::Warn,
                    "PROBE_UNAPPROVED",
                    format!(
                        "予定 {} の検査コマンド {} はこの棚で承認されていません。",
                        s.id, p.command
                    ),
                    format!(
                        "The probe {} of schedule {} is not approved on this shelf.",
                        p.command, s.id
                    ),
                    "GUI で承認して probe_approvals.json を一緒に持ってきてください。",
                    "Approve it in the GUI and bring probe_approvals.json along.",
                );
            }
        }
    }
    // JEV_TOKEN_MISSING
    if (!world.judges.is_empty() || view.jev_pruning_enabled)
        && !(view.secret_present)("jev_api_token")
    {
        add(
            Level::Warn,
            "JEV_TOKEN_MISSING",
            "判断役かツール結果の圧縮がありますが、Jev のトークンがありません。".into(),
            "Judges or tool-result pruning are configured, but the Jev token is missing.".into(),
            "秘密 jev_api_token を置いてください。無いと判断役は無効で、圧縮は走りません。",
            "Provide jev_api_token; without it judges are disabled and pruning does not run.",
        );
    }
    // RAG_SOURCE_MISSING (one per folder, the agents listed)
    let missing = grouped(started.iter().flat_map(|a| {
        a.rag_sources
            .iter()
            .filter(|s| !(view.dir_exists)(s))
            .map(|s| (s.as_str(), a.id.as_str()))
    }));
    for (src, agents) in &missing {
        let agents = agents.join(", ");
        add(
            Level::Warn,
            "RAG_SOURCE_MISSING",
            format!("資料フォルダ {src} がありません（個体: {agents}）。"),
            format!("The source folder {src} does not exist (agents: {agents})."),
            "フォルダを用意するか、ragSources を直してください。",
            "Provide the folder or fix ragSources.",
        );
    }
    // MCP_COMMAND_NOT_FOUND (one per command, the servers listed)
    for (command, servers) in &mcp_commands_not_found(view) {
        let servers = servers.join(", ");
        add(
            Level::Warn,
            "MCP_COMMAND_NOT_FOUND",
            format!("MCP サーバー {servers} のコマンド {command} が見つかりません。"),
            format!("The command {command} of MCP servers {servers} is not found."),
            "コマンドを入れるか、リモート MCP（type http）に寄せてください。",
            "Install the command, or use a remote MCP server (type http).",
        );
    }
    // RUN_COMMAND_NOT_FOUND (one per command, the agents listed; agents with `run` only)
    for (program, agents) in &run_commands_not_found(&started, view) {
        let agents = agents.join(", ");
        add(
            Level::Warn,
            "RUN_COMMAND_NOT_FOUND",
            format!("run.json が許すコマンド {program} が見つかりません（個体: {agents}）。"),
            format!("The command {program} allowed in run.json is not found (agents: {agents})."),
            "コマンドを入れるか、allow の行を直してください（相対パスは作業フォルダから数えます）。",
            "Install it, or fix the allow line (a relative path counts from the work folder).",
        );
    }
    // RUN_UNCONFINED
    let confined = crate::process::confinement_available();
    if run_unconfined(confined, view.run_approval, view.start, view.run_allow) {
        add(
            Level::Warn,
            "RUN_UNCONFINED",
            "このカーネルには Landlock がありません。run のコマンドは作業フォルダの外も読み書きできます。".to_owned(),
            "This kernel has no Landlock: run commands are not confined to the work folder.".to_owned(),
            "Landlock のある Linux（5.13 以降、LSM で有効）で動かすか、run.json の allow を絞ってください。",
            "Run on Linux with Landlock enabled (5.13+, in the LSM list), or keep run.json's allow list tight.",
        );
    }
    // RUN_NETWORK_UNCONFINED
    let network_rules = crate::process::network_confinement_available();
    if let Some(agent) = run_network_unconfined(
        network_rules,
        view.run_approval,
        view.run_network_denied,
        view.run_allow,
    ) {
        add(
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
    // TIMEZONE_MISMATCH
    let clock_schedules = schedules
        .iter()
        .any(|s| s.enabled && matches!(s.recurrence, Recurrence::Daily(_) | Recurrence::Weekly(_)));
    if serve
        && clock_schedules
        && let (Some(here), Some(baked)) = (&view.time_zone, &view.baked_time_zone)
        && here != baked
    {
        add(
            Level::Warn,
            "TIMEZONE_MISMATCH",
            format!("予定は {here} で発火しますが、村は {baked} で作られました。"),
            format!("Schedules will fire in {here}, but the village was made in {baked}."),
            "コンテナの TZ を合わせてください。",
            "Set TZ in the container to match.",
        );
    }
    // RECEPTION_TARGETS_OUTSIDE
    if view.mode == HeadlessMode::Ask
        && let Some(reception) = world.reception.as_ref().and_then(|r| world.agent(r))
    {
        let outside: Vec<String> = reception
            .connected_agents
            .iter()
            .filter(|c| world.agent(c).is_some() && !view.start.contains(c.as_str()))
            .map(|c| c.to_string())
            .collect();
        if !outside.is_empty() {
            add(
                Level::Info,
                "RECEPTION_TARGETS_OUTSIDE",
                format!(
                    "窓口の相手 {} は起動しません。委譲は NOT_RUNNING で返ります。",
                    outside.join(", ")
                ),
                format!(
                    "The reception's peers {} will not run; delegating to them answers NOT_RUNNING.",
                    outside.join(", ")
                ),
                "要るなら --start に含めてください。",
                "Include them in --start if they are needed.",
            );
        }
    }
    out.sort_by_key(|f| f.level); // stable: table order within a level
    out
}

/// Pairs `(key, agent)` grouped by key, keys and agents in first-seen order, each agent once.
fn grouped<'a>(pairs: impl Iterator<Item = (&'a str, &'a str)>) -> IndexMap<&'a str, Vec<&'a str>> {
    let mut groups: IndexMap<&str, Vec<&str>> = IndexMap::new();
    for (key, agent) in pairs {
        let agents = groups.entry(key).or_default();
        if !agents.contains(&agent) {
            agents.push(agent);
        }
    }
    groups
}

/// Whether the agent is offered the `run` tool.
fn has_run(agent: &AgentSpec) -> bool {
    agent
        .enabled_tools
        .as_ref()
        .is_some_and(|t| t.iter().any(|n| n == "run"))
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

/// The `${secret:NAME}` names referenced by the MCP headers the start set will use.
fn secret_refs(mcp: &[(String, McpConfig)], start: &BTreeSet<String>) -> BTreeSet<String> {
    mcp.iter()
        .filter(|(o, _)| o.is_empty() || start.contains(o))
        .flat_map(|(_, config)| config.mcp_servers.values())
        .filter_map(|entry| match entry {
            McpServerEntry::Http(h) if h.enabled => Some(h.secret_names()),
            _ => None,
        })
        .flatten()
        .collect()
}

/// `FUSEFORKS_SECRET_` + the key upper-cased, non-alphanumerics turned into `_`.
pub fn env_var_name(key: &str) -> String {
    let mut name = String::from("FUSEFORKS_SECRET_");
    name.extend(key.chars().map(|c| {
        if c.is_ascii_alphanumeric() {
            c.to_ascii_uppercase()
        } else {
            '_'
        }
    }));
    name
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
