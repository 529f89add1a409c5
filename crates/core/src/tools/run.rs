//! The `run` tool: runs `command` + `args` without a shell, in the work folder, with the
//! environment cleared (only `PATH` kept), under the `run.json` policy and the approval mode,
//! with a timeout that kills the whole process group, and capped output (stdout 8,000 and
//! stderr 4,000 characters).

use std::process::Stdio;
use std::time::Duration;

use process_wrap::tokio::{CommandWrap, KillOnDrop};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt};

use super::run_policy::{Decision, decide, exact_allow_line, record_pending};
use super::{RunApproval, ToolContext, ToolOutput, cap, str_arg};

/// Characters of stdout shown.
pub const STDOUT_MAX_CHARS: usize = 8_000;
/// Characters of stderr shown.
pub const STDERR_MAX_CHARS: usize = 4_000;
/// Bytes kept of each stream (the rest is drained so the child never blocks on a full pipe).
const KEEP_BYTES: usize = 64 * 1024;

/// Runs one `run` call.
pub async fn run(args: &Value, ctx: &ToolContext) -> ToolOutput {
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
    let mut policy = match ctx.agent_files.load_run_policy() {
        Ok(loaded) => loaded.value,
        Err(e) => return ToolOutput::fail(format!("run.json: {}", e.code())),
    };
    let save = |policy: &crate::village::run_policy::CommandPolicy| {
        ctx.agent_files.save_run_policy(policy).is_ok()
    };
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
        (Decision::Allowed, _) | (Decision::Unknown, RunApproval::NoApproval) => {}
        (Decision::Unknown, RunApproval::Required) => {
            record_pending(&mut policy, &command, &argv, now_ms());
            let recorded = save(&policy);
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
            });
        }
        (Decision::Unknown, RunApproval::AutoApprove) => {
            if let Some(line) = exact_allow_line(&command, &argv) {
                policy.allow.push(line);
                let _ = save(&policy);
            }
        }
    }
    execute(
        &jail,
        &command,
        &argv,
        Duration::from_secs(policy.timeout_secs.clamp(1, 3600)),
        ctx,
    )
    .await
}

async fn execute(
    jail: &super::WorkDir,
    command: &str,
    argv: &[String],
    timeout: Duration,
    ctx: &ToolContext,
) -> ToolOutput {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut wrapped = CommandWrap::with_new(command, |cmd| {
        cmd.args(argv)
            .env_clear()
            .env("PATH", &path)
            .current_dir(jail.root())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
    });
    #[cfg(unix)]
    wrapped.wrap(process_wrap::tokio::ProcessGroup::leader());
    wrapped.wrap(KillOnDrop);
    let mut child = match wrapped.spawn() {
        Ok(c) => c,
        Err(e) => {
            return ToolOutput::fail(format!(
                "{}: {e}",
                ctx.say("起動できません", "Cannot start")
            ));
        }
    };
    let stdout = child.stdout().take();
    let stderr = child.stderr().take();
    let reading = async {
        let (out, err) = tokio::join!(read_capped(stdout), read_capped(stderr));
        let status = child.wait().await;
        (out, err, status)
    };
    match tokio::time::timeout(timeout, reading).await {
        Ok((out, err, status)) => {
            let code = status
                .ok()
                .and_then(|s| s.code())
                .map_or_else(|| "signal".to_owned(), |c| c.to_string());
            let body = format!(
                "exit: {code}\n--- stdout ---\n{}\n--- stderr ---\n{}",
                cap(&out, STDOUT_MAX_CHARS),
                cap(&err, STDERR_MAX_CHARS)
            );
            ToolOutput {
                ok: code == "0",
                body,
            }
        }
        Err(_) => {
            // Kill the whole process group (the command and anything it started), then reap.
            let _ = child.start_kill();
            let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
            ToolOutput::fail(format!(
                "{} ({} s)",
                ctx.say("時間切れで止めました", "Timed out and killed"),
                timeout.as_secs()
            ))
        }
    }
}

async fn read_capped(stream: Option<impl AsyncRead + Unpin>) -> String {
    let Some(mut stream) = stream else {
        return String::new();
    };
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = KEEP_BYTES.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
