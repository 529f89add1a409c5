//! `fuseforks-cli audit verify --data-dir D [--json]`: checks the audit log's hash chain
//! (`workspace/audit.jsonl` and its rotated files) against the head stored in
//! `sessions.redb`; exit 0, or 13 naming the first broken line and why.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use fuseforks_core::safety::{HeadCheck, VerifyError, verify_chain};
use fuseforks_core::sessions::{SessionError, SessionStore};

use crate::exit;
use crate::output::Out;

/// Arguments of `audit`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    #[command(subcommand)]
    pub command: AuditCommand,
}

/// `audit` subcommands.
#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Check the hash chain; exit 13 names the first broken line and why.
    Verify {
        /// The data folder of the village.
        #[arg(long, value_name = "DATA_DIR")]
        data_dir: PathBuf,
        /// One JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
}

/// Runs `audit`.
pub fn run(args: &AuditArgs, out: &Out) -> u8 {
    let AuditCommand::Verify { data_dir, json } = &args.command;
    let workspace = data_dir.join("workspace");
    // The head lives in sessions.redb; a running process holds it (then the file alone).
    let (head, head_note) = match SessionStore::open(&workspace.join("sessions.redb")) {
        Ok(store) => (store.audit_head().ok().flatten(), None),
        Err(SessionError::Locked(_)) => (
            None,
            Some("sessions.redb is held by a running process: the stored head was not compared"),
        ),
        Err(_) => (
            None,
            Some("sessions.redb could not be read: the stored head was not compared"),
        ),
    };
    if let Some(note) = head_note {
        out.cli("warn", "AUDIT_HEAD_UNCHECKED", note, None);
    }
    match verify_chain(&workspace, head.as_ref()) {
        Ok(report) => {
            let head = match report.head {
                HeadCheck::Matches => "matches".to_owned(),
                HeadCheck::NotStored => "not_stored".to_owned(),
                HeadCheck::Ahead(n) => format!("ahead_by_{n}"),
            };
            if *json {
                out.result(&format!(
                    "{}\n",
                    serde_json::json!({"ok": true, "lines": report.lines, "files": report.files, "head": head})
                ));
            } else {
                out.result(&format!(
                    "audit log ok: {} line(s) in {} file(s), head {head}\n",
                    report.lines, report.files
                ));
            }
            exit::OK
        }
        Err(e) => {
            if *json {
                let (line, kind) = match &e {
                    VerifyError::Broken { line, kind, .. } => (Some(*line), kind.as_str()),
                    VerifyError::Unreadable { .. } => (None, "unreadable"),
                };
                out.result(&format!(
                    "{}\n",
                    serde_json::json!({"ok": false, "line": line, "reason": kind, "message": e.to_string()})
                ));
            }
            out.error(&e);
            match e {
                VerifyError::Broken { .. } => exit::AUDIT_BROKEN,
                VerifyError::Unreadable { .. } => exit::CORE_ERROR,
            }
        }
    }
}
