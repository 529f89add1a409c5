//! `fuseforks-cli audit verify --data-dir D [--json] [--secrets keyring|env] [--accept-ahead]
//! [--accept-unrecorded-head]`: checks the audit log's hash chain (`workspace/audit.jsonl` and
//! its rotated files), each line's mark under the audit key from the secret store, and the
//! recorded heads (`sessions.redb`, `DATA_DIR/audit-head.json`); exit 0, or 13 naming the
//! first broken line and why.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use fuseforks_core::safety::{
    AuditKey, HeadCheck, RecordedHead, VerifyError, VerifyOptions, VerifyReport,
    read_session_heads, read_shelf_head, verify_keyed,
};
use fuseforks_core::sessions::{SessionError, SessionStore};
use fuseforks_host::audit_key::{AUDIT_UNKEYED, fetch_key};
use fuseforks_host::{SecretSource, boot::secret_store};

use super::headless::SecretsArg;
use crate::exit;
use crate::output::Out;

/// Arguments of `audit`.
#[derive(Debug, Args)]
pub(crate) struct AuditArgs {
    #[command(subcommand)]
    pub command: AuditCommand,
}

/// `audit` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum AuditCommand {
    /// Check the hash chain, its marks and the recorded head; exit 13 names the first broken
    /// line and why.
    Verify(VerifyArgs),
}

/// Arguments of `audit verify`.
#[derive(Debug, Args)]
pub(crate) struct VerifyArgs {
    /// The data folder of the village.
    #[arg(long, value_name = "DATA_DIR")]
    pub data_dir: PathBuf,
    /// One JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Where the audit key comes from (`audit_key`, or FUSEFORKS_SECRET_AUDIT_KEY).
    #[arg(long, value_enum, default_value = "keyring")]
    pub secrets: SecretsArg,
    /// Accept lines past the recorded head: the head is committed at most every second and
    /// at close, so a crash can leave a second of lines past it.
    #[arg(long)]
    pub accept_ahead: bool,
    /// Accept a log whose head is recorded nowhere (sessions.redb and DATA_DIR/audit-head.json
    /// both gone): lines cut off its end cannot be seen then.
    #[arg(long)]
    pub accept_unrecorded_head: bool,
}

/// Runs `audit`.
pub(crate) fn run(args: &AuditArgs, out: &Out) -> u8 {
    let AuditCommand::Verify(args) = &args.command;
    if let Some(missing) = fuseforks_host::HostPaths::new(&args.data_dir).village_missing() {
        out.error(&missing);
        return exit::BOOT_FAILED;
    }
    let workspace = args.data_dir.join("workspace");
    let key = audit_key(args.secrets, out);
    let options = VerifyOptions {
        heads: recorded_heads(&args.data_dir, &workspace, out),
        key: key.as_ref(),
        accept_ahead: args.accept_ahead,
        accept_unrecorded_head: args.accept_unrecorded_head,
    };
    match verify_keyed(&workspace, &options) {
        Ok(report) => {
            if report.keyed && report.unkeyed_lines == report.lines && report.lines > 0 {
                out.cli(
                    "warn",
                    AUDIT_UNKEYED,
                    "no line of the audit log carries a mark: it was written without the key (an old village, or --secrets env without FUSEFORKS_SECRET_AUDIT_KEY), or its marks were removed",
                    None,
                );
            }
            print_report(&report, args.json, out);
            exit::OK
        }
        Err(e) => {
            if args.json {
                let (line, kind) = match &e {
                    VerifyError::Broken { line, kind, .. } => (Some(*line), kind.as_str()),
                    VerifyError::Unreadable { .. } => (None, "unreadable"),
                };
                let failed = VerifyFailed {
                    ok: false,
                    line,
                    reason: kind,
                    keyed: key.is_some(),
                    message: e.to_string(),
                };
                out.result(&format!("{}\n", json_line(&failed)));
            }
            out.error(&e);
            match e {
                VerifyError::Broken { .. } => exit::AUDIT_BROKEN,
                VerifyError::Unreadable { .. } => exit::CORE_ERROR,
            }
        }
    }
}

/// The audit key, or `None` with an `AUDIT_UNKEYED` warning saying why (never the value).
fn audit_key(secrets: SecretsArg, out: &Out) -> Option<AuditKey> {
    let source = match secrets {
        SecretsArg::Keyring => SecretSource::Keyring,
        SecretsArg::Env => SecretSource::Env,
    };
    let found = secret_store(source)
        .map_err(fuseforks_host::audit_key::Unkeyed::Store)
        .and_then(|store| fetch_key(&*store));
    match found {
        Ok(key) => Some(key),
        Err(why) => {
            let message = format!(
                "the audit key is not available ({why}): the marks are not checked, only the hash chain and the recorded head"
            );
            out.cli("warn", AUDIT_UNKEYED, &message, None);
            None
        }
    }
}

/// The heads recorded in `sessions.redb` (unless a running process holds it) and on the shelf.
fn recorded_heads(data_dir: &Path, workspace: &Path, out: &Out) -> Vec<RecordedHead> {
    let sessions = workspace.join("sessions.redb");
    let mut heads = match SessionStore::open(&sessions) {
        Ok(store) => read_session_heads(&store),
        Err(SessionError::Locked(_)) => {
            out.cli("warn", "AUDIT_HEAD_UNCHECKED", "sessions.redb is held by a running process: its head was not compared (the shelf's was)", None);
            Vec::new()
        }
        Err(_) => {
            out.cli(
                "warn",
                "AUDIT_HEAD_UNCHECKED",
                "sessions.redb could not be read: its head was not compared (the shelf's was)",
                None,
            );
            Vec::new()
        }
    };
    match read_shelf_head(data_dir) {
        Ok(head) => heads.extend(head),
        Err(e) => out.cli(
            "warn",
            "AUDIT_HEAD_UNCHECKED",
            &format!(
                "DATA_DIR/audit-head.json could not be read ({}): its head was not compared",
                e.kind()
            ),
            None,
        ),
    }
    heads
}

fn print_report(report: &VerifyReport, json: bool, out: &Out) {
    let head = match report.head {
        HeadCheck::Matches => "matches".to_owned(),
        HeadCheck::NotStored => "not_stored".to_owned(),
        HeadCheck::Ahead(n) => format!("ahead_by_{n}"),
    };
    if json {
        let held = VerifyHeld {
            ok: true,
            lines: report.lines,
            files: report.files,
            head: &head,
            keyed: report.keyed,
            unkeyed_lines: report.unkeyed_lines,
            heads_refused: report.heads_refused,
        };
        out.result(&format!("{}\n", json_line(&held)));
    } else {
        let keyed = if report.keyed {
            format!("marks checked, {} unkeyed line(s)", report.unkeyed_lines)
        } else {
            "marks not checked (no key)".to_owned()
        };
        out.result(&format!(
            "audit log ok: {} line(s) in {} file(s), head {head}, {keyed}\n",
            report.lines, report.files
        ));
    }
}

/// `audit verify --json` when the chain holds.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct VerifyHeld<'a> {
    ok: bool,
    lines: u64,
    files: usize,
    head: &'a str,
    keyed: bool,
    unkeyed_lines: u64,
    heads_refused: usize,
}

/// `audit verify --json` when it does not.
#[derive(serde::Serialize)]
struct VerifyFailed<'a> {
    ok: bool,
    line: Option<u64>,
    reason: &'a str,
    keyed: bool,
    message: String,
}

/// One JSON line (a struct of plain fields always serialises).
fn json_line(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}
