//! `ask --output stream-json` and `ask --stream`: what the village does while the request runs,
//! on stdout as it happens (the host hands each piece over as a `RequestEvent`).
//! `stream-json`: one JSON line per answer piece (`{"type":"delta", agentId, text}`, from
//! templates with `streaming`) and per tool call (`{"type":"tool", agentId, tool, ok}`, with
//! `exitCode` for `run`), then the result object with `"type": "result"`; a stream sent again
//! after its connection broke says `"restart": true`. `--stream` (text): the reception's answer
//! pieces as they arrive, then a line end instead of the whole answer.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use fuseforks_host::lifecycle::RequestEvent;
use serde_json::json;

/// What is streamed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// JSON lines of every piece and tool call.
    Json,
    /// The reception's answer text.
    Text,
}

/// Prints one piece in `mode`; `printed` is set once some of the reception's answer is on
/// the screen (text mode).
pub(crate) fn say(event: &RequestEvent, mode: Mode, printed: &AtomicBool) {
    let mut stdout = std::io::stdout().lock();
    match (event, mode) {
        (
            RequestEvent::Delta {
                agent_id,
                text,
                restart,
                ..
            },
            Mode::Json,
        ) => {
            let mut line = json!({"type": "delta", "agentId": agent_id, "text": text});
            if *restart {
                line["restart"] = json!(true);
            }
            let _ = writeln!(stdout, "{line}");
        }
        (
            RequestEvent::Delta {
                text,
                restart,
                reception: true,
                ..
            },
            Mode::Text,
        ) => {
            // A stream sent again starts on a line of its own: what was printed stays printed.
            let text = if *restart { "\n" } else { text.as_str() };
            let _ = write!(stdout, "{}", crate::terminal::for_stdout(text));
            printed.store(true, Ordering::SeqCst);
        }
        (
            RequestEvent::Tool {
                agent_id,
                tool,
                ok,
                exit_code,
            },
            Mode::Json,
        ) => {
            let mut line = json!({"type": "tool", "agentId": agent_id, "tool": tool, "ok": ok});
            if let Some(code) = exit_code {
                line["exitCode"] = json!(code);
            }
            let _ = writeln!(stdout, "{line}");
        }
        _ => return,
    }
    let _ = stdout.flush();
}
