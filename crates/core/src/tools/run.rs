//! The `run` tool: runs `command` + `args` without a shell, in the work folder, with the
//! environment cleared (only `PATH`, and `TMPDIR` pointing at a temp folder of the call's own),
//! under the `run.json` policy and the approval mode, in its own process group (see
//! [`crate::process`]) that a timeout ends (SIGTERM, SIGKILL 2 s later), with capped output
//! (stdout 8,000 and stderr 4,000 characters; on a timeout, what was written until the kill,
//! and `exit: timeout`), and an optional `stdin` text (at most 1 MiB). On Linux, Landlock confines it: read-write in
//! the work folder and its temp folder, read and execute in the system folders, those on
//! `PATH` and the toolchains they need (`toolchains.rs`), nothing else; `"network": false` in `run.json` also refuses TCP connect and bind.
//! The allow list decides *which* commands run; Landlock decides *what they can reach*
//! (`docs/threat-model.md`).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use super::run_output::{Captured, read_ends};
use super::run_policy::{Decision, decide, exact_allow_line, record_pending};
use super::specs::{prop, schema};
use super::{ApprovalNote, RunApproval, ToolContext, ToolOutput, str_arg};
use crate::clock::now_ms;
use crate::process::{self, Confinement};
use crate::village::Language;

/// Characters of stdout shown.
pub(crate) const STDOUT_MAX_CHARS: usize = 8_000;
/// Characters of stderr shown.
pub(crate) const STDERR_MAX_CHARS: usize = 4_000;
/// Bytes kept of each stream (the rest is drained so the child never blocks on a full pipe).
const KEEP_BYTES: usize = 64 * 1024;
/// The most text `stdin` may hold (bytes); more is refused with `RUN_STDIN_TOO_LARGE`.
pub(crate) const STDIN_MAX_BYTES: usize = 1024 * 1024;
/// How long the pipes are still drained after a timeout's kill (what the group wrote last).
const DRAIN_AFTER_KILL: Duration = Duration::from_secs(1);
/// What a confined command may read and execute besides its folders (when present).
/// Not `/proc`: a confined child could read `/proc/<our pid>/environ` there, with our secrets
/// (Landlock's ptrace scoping did not stop it in a test).
const SYSTEM_PATHS: [&str; 11] = [
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/etc",
    "/opt",
    "/dev/urandom",
    "/dev/random",
    "/dev/zero",
];

/// Runs one `run` call.
pub(crate) async fn run(args: &Value, ctx: &ToolContext) -> ToolOutput {
    let jail = match ctx.jail() {
        Ok(j) => j.clone(),
        Err(out) => return out,
    };
    let command = str_arg(args, "command").unwrap_or("").to_owned();
    let argv: Option<Vec<String>> = match args.get("args") {
        None => Some(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect(),
        Some(_) => None,
    };
    let Some(argv) = argv else {
        return ToolOutput::fail(ctx.say(
            "args は文字列の配列にしてください。",
            "args must be an array of strings.",
        ));
    };
    let stdin = match stdin_arg(args, ctx) {
        Ok(s) => s,
        Err(out) => return out,
    };
    let mut policy = match ctx.agent_files.load_run_policy() {
        Ok(loaded) => loaded.value,
        Err(e) => return ToolOutput::fail(format!("run.json: {}", e.code())),
    };
    let save = |policy: &crate::village::run_policy::CommandPolicy| {
        ctx.agent_files.save_run_policy(policy).is_ok()
    };
    let mut note = None;
    match (decide(&policy, &command, &argv), ctx.approval) {
        (Decision::Malformed, _) => {
            return ToolOutput::fail(ctx.say(
                "コマンドの形が不正です（空、空白、NUL を含む）。シェルは使えません。",
                "Malformed command (empty, or holds whitespace or NUL). There is no shell.",
            ));
        }
        (Decision::Denied, _) => {
            return ToolOutput::fail(ctx.say(
                "このコマンドは run.json で禁止されています。",
                "This command is denied by run.json.",
            ));
        }
        (Decision::Allowed, _) => note = Some(ApprovalNote::AllowedByRule),
        (Decision::Unknown, RunApproval::NoApproval) => {}
        (Decision::Unknown, RunApproval::Required) => {
            if let Some(out) = ctx.would(|| {
                format!("record `{command}` for a human's approval (run.json does not allow it)")
            }) {
                return out;
            }
            record_pending(&mut policy, &command, &argv, now_ms());
            let recorded = save(&policy);
            let note = recorded.then_some(ApprovalNote::Pending);
            return ToolOutput::fail(if recorded {
                ctx.say(
                    "許可されていないコマンドです。人の承認待ちに記録しました。",
                    "This command is not allowed. It was recorded for a human to approve.",
                )
            } else {
                ctx.say(
                    "許可されていないコマンドです（承認待ちへの記録に失敗しました）。",
                    "This command is not allowed (recording it for approval failed).",
                )
            })
            .with_approval(note);
        }
        (Decision::Unknown, RunApproval::AutoApprove) => {
            if let Some(line) = exact_allow_line(&command, &argv)
                && !ctx.dry_run
            {
                policy.allow.push(line);
                if save(&policy) {
                    note = Some(ApprovalNote::AutoApproved);
                }
            }
        }
    }
    let call = Call {
        command: &command,
        argv: &argv,
        timeout: Duration::from_secs(policy.timeout_secs.clamp(1, 3600)),
        deny_network: policy.network == Some(false),
        stdin,
    };
    if let Some(out) = ctx.would(|| {
        let argv: Vec<&str> = std::iter::once(command.as_str())
            .chain(argv.iter().map(String::as_str))
            .collect();
        format!("run {}", serde_json::to_string(&argv).unwrap_or_default())
    }) {
        return out.with_approval(note);
    }
    execute(&jail, &call, ctx).await.with_approval(note)
}

/// One command to execute.
struct Call<'a> {
    command: &'a str,
    argv: &'a [String],
    timeout: Duration,
    deny_network: bool,
    stdin: Option<Vec<u8>>,
}

/// The optional `stdin` text, at most [`STDIN_MAX_BYTES`].
fn stdin_arg(args: &Value, ctx: &ToolContext) -> Result<Option<Vec<u8>>, ToolOutput> {
    match args.get("stdin") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if text.len() > STDIN_MAX_BYTES => {
            Err(ToolOutput::fail(format!(
                "RUN_STDIN_TOO_LARGE: {} ({} > {STDIN_MAX_BYTES})",
                ctx.say(
                    "stdin が大きすぎます。作業フォルダのファイルに書いて、そのパスを渡してください",
                    "stdin is too large; write it to a file in the work folder and pass its path instead",
                ),
                text.len()
            )))
        }
        Some(Value::String(text)) => Ok(Some(text.clone().into_bytes())),
        Some(_) => Err(ToolOutput::fail(ctx.say(
            "stdin は文字列にしてください。",
            "stdin must be a string.",
        ))),
    }
}

async fn execute(jail: &super::WorkDir, call: &Call<'_>, ctx: &ToolContext) -> ToolOutput {
    let temp = match CallTemp::create() {
        Ok(t) => t,
        Err(e) => {
            return ToolOutput::fail(format!(
                "{}: {e}",
                ctx.say("一時フォルダを作れません", "Cannot create a temp folder")
            ));
        }
    };
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut cmd = tokio::process::Command::new(call.command);
    cmd.args(call.argv)
        .env_clear()
        .env("PATH", &path)
        .env("TMPDIR", temp.path())
        .current_dir(jail.root())
        .stdin(if call.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let confinement = confinement(jail.root(), temp.path(), &path, call.deny_network);
    let mut group = match process::spawn(cmd, Some(&confinement)) {
        Ok(g) => g,
        Err(e) => {
            return ToolOutput::fail(format!(
                "{}: {e}",
                ctx.say("起動できません", "Cannot start")
            ));
        }
    };
    let timeout = call.timeout;
    let child = group.child_mut();
    let (mut stdout, mut stderr) = (child.stdout.take(), child.stderr.take());
    let stdin = child.stdin.take().zip(call.stdin.as_deref());
    let (mut out, mut err) = (Captured::default(), Captured::default());
    let status = {
        let reading = async {
            tokio::join!(
                read_ends(&mut stdout, &mut out),
                read_ends(&mut stderr, &mut err),
                feed(stdin),
            );
            child.wait().await
        };
        tokio::time::timeout(timeout, reading).await
    };
    let code = match status {
        Ok(status) => status
            .ok()
            .and_then(|s| s.code())
            .map_or_else(|| "signal".to_owned(), |c| c.to_string()),
        Err(_) => {
            // End the whole process group (the command and anything it started), reap it,
            // and keep what it wrote until then.
            group.terminate().await;
            let _ = tokio::time::timeout(DRAIN_AFTER_KILL, async {
                tokio::join!(
                    read_ends(&mut stdout, &mut out),
                    read_ends(&mut stderr, &mut err)
                )
            })
            .await;
            "timeout".to_owned()
        }
    };
    let mut body = format!(
        "exit: {code}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.render(STDOUT_MAX_CHARS),
        err.render(STDERR_MAX_CHARS)
    );
    if code == "timeout" {
        body.push_str(&format!(
            "\n{} ({} s)",
            ctx.say("時間切れで止めました", "Timed out and killed"),
            timeout.as_secs()
        ));
    }
    ToolOutput {
        ok: code == "0",
        body,
        approval: None,
    }
}

/// Writes `stdin` to the child and closes it; a child that does not read it (a broken pipe)
/// is not an error.
async fn feed(stdin: Option<(tokio::process::ChildStdin, &[u8])>) {
    if let Some((mut pipe, bytes)) = stdin {
        let _ = pipe.write_all(bytes).await;
        let _ = pipe.shutdown().await;
    }
}

/// The Landlock rules of one call (also a probe's: `crate::probe`).
pub(crate) fn confinement(
    work: &Path,
    temp: &Path,
    path_var: &OsStr,
    deny_network: bool,
) -> Confinement {
    let mut read_only: Vec<PathBuf> = SYSTEM_PATHS.iter().map(PathBuf::from).collect();
    // Relative entries (`.`) would mean the work folder, already writable; `/` would mean all.
    read_only.extend(
        std::env::split_paths(path_var).filter(|p| p.is_absolute() && p.parent().is_some()),
    );
    // A shim or a link on PATH runs what lies beneath its toolchain's root (pyenv, nvm, asdf,
    // mise, rustup, `~/.local/bin`): read and execute there too, never write.
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let rustup_home = std::env::var_os("RUSTUP_HOME").map(PathBuf::from);
    read_only.extend(super::toolchains::toolchain_roots(
        path_var,
        home.as_deref(),
        rustup_home.as_deref(),
    ));
    Confinement {
        read_write: vec![
            work.to_path_buf(),
            temp.to_path_buf(),
            PathBuf::from("/dev/null"),
        ],
        read_only,
        deny_network,
    }
}

/// A temp folder of one call (`TMPDIR`), private (0700), removed with everything in it after.
pub(crate) struct CallTemp(PathBuf);

impl CallTemp {
    pub(crate) fn create() -> std::io::Result<Self> {
        let path =
            std::env::temp_dir().join(format!("fuseforks-run-{}", uuid::Uuid::new_v4().simple()));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&path)?;
        Ok(Self(path))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for CallTemp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Reads `stream` to its end into `kept`, keeping at most [`KEEP_BYTES`] and draining the
/// rest; the stream is dropped at its end, so a second call returns at once.
pub(crate) async fn read_capped(stream: &mut Option<impl AsyncRead + Unpin>, kept: &mut Vec<u8>) {
    let Some(reader) = stream.as_mut() else {
        return;
    };
    let mut buf = [0u8; 8192];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = KEEP_BYTES.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    *stream = None;
}

/// `run`'s description and schema.
pub(crate) fn spec(l: Language, approval: RunApproval) -> (String, Value) {
    let mut d = l.pick("許可されたコマンドを実行します（シェルは使いません）。run.json の許可に無いコマンドは断られ、人の承認待ちに記録されます。結果は exit 行と stdout・stderr です。時間切れでは exit: timeout と、それまでの出力を返します。",
                "Run an allowed command (no shell). A command not allowed in run.json is refused and recorded for a human to approve. The result is an exit line, stdout and stderr; on a timeout, exit: timeout with the output written until then.",
            );
    match approval {
        RunApproval::Required => {}
        RunApproval::AutoApprove => d.push_str(&l.pick(
            "今は自動承認モードです。未知のコマンドは許可に追加されて実行されます。",
            " Auto-approve mode is on: an unknown command is added to the allow list and run.",
        )),
        RunApproval::NoApproval => d.push_str(&l.pick(
            "今は承認不要モードです。未知のコマンドもそのまま実行されます。",
            " No-approval mode is on: an unknown command runs as it is.",
        )),
    }
    (
        d,
        schema(
            &["command"],
            json!({
                "command": prop("string", l.pick("実行するプログラム。", "The program.")),
                "args": {"type": "array", "items": {"type": "string"}, "description": l.pick("引数。", "Arguments.")},
                "stdin": prop("string", l.pick("コマンドの標準入力に渡すテキスト（任意、1 MiB まで）。", "Text given to the command on its standard input (optional, at most 1 MiB)."))
            }),
            l,
        ),
    )
}
