//! `fuseforks-cli sessions list|show|export|fork|delete --data-dir D`: the village's stored
//! conversations (`sessions.redb`) from the command line, through the core's session store:
//! list (id, title, updated, records, tokens; `--json`), show as readable text, export as JSON
//! lines (stdout, or `--out FILE`: a new file, 0600), fork before a record, delete (asks on a
//! terminal, `--yes` for scripts). Under the village lock: exit 4 while a process holds it.

use std::io::{BufRead, IsTerminal};
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use fuseforks_core::sessions::{Record, SessionStore, StoredRecord};
use fuseforks_core::village::World;
use fuseforks_host::HostPaths;
use fuseforks_host::lock::{LockError, VillageLock};
use serde_json::{Value, json};

use crate::exit;
use crate::output::Out;
use crate::terminal::for_stdout;

/// Arguments of `sessions`.
#[derive(Debug, Args)]
pub(crate) struct SessionsArgs {
    #[command(subcommand)]
    pub command: SessionsCommand,
}

/// `sessions` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum SessionsCommand {
    /// The conversations, newest first.
    List {
        /// The data folder of the village.
        #[arg(long, value_name = "DATA_DIR")]
        data_dir: PathBuf,
        /// One JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// One conversation's messages as text.
    Show {
        /// The conversation's id.
        id: String,
        /// The data folder of the village.
        #[arg(long, value_name = "DATA_DIR")]
        data_dir: PathBuf,
    },
    /// One conversation as JSON lines (each record with its `seq`).
    Export {
        /// The conversation's id.
        id: String,
        /// The data folder of the village.
        #[arg(long, value_name = "DATA_DIR")]
        data_dir: PathBuf,
        /// Write a new file (0600) instead of stdout; an existing one is refused (exit 11).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// A copy of a conversation up to (before) record SEQ; prints the new id.
    Fork {
        /// The conversation's id.
        id: String,
        /// The record to fork before (its `seq` from `export`, or `show`'s `#N`).
        #[arg(long, value_name = "SEQ")]
        before: u64,
        /// The data folder of the village.
        #[arg(long, value_name = "DATA_DIR")]
        data_dir: PathBuf,
    },
    /// Delete a conversation (asks first; `--yes` without a terminal).
    Delete {
        /// The conversation's id.
        id: String,
        /// The data folder of the village.
        #[arg(long, value_name = "DATA_DIR")]
        data_dir: PathBuf,
        /// Delete without asking.
        #[arg(long)]
        yes: bool,
    },
}

/// A village opened for reading its conversations, with its lock held.
pub(crate) struct QuietVillage {
    /// The registry.
    pub world: World,
    /// The conversations.
    pub sessions: SessionStore,
    _lock: VillageLock,
}

/// Opens a village that no process runs: the lock (exit 4 when held), `world.json`, and
/// `sessions.redb`.
pub(crate) fn open_quiet_village(data_dir: &Path, out: &Out) -> Result<QuietVillage, u8> {
    let paths = HostPaths::new(data_dir);
    if let Some(missing) = paths.village_missing() {
        out.error(&missing);
        return Err(exit::BOOT_FAILED);
    }
    let workspace = paths.workspace();
    let lock = VillageLock::acquire(&workspace).map_err(|e| {
        out.error(&e);
        if matches!(e, LockError::Held(_)) {
            exit::LOCKED
        } else {
            exit::BOOT_FAILED
        }
    })?;
    let world = paths.village().load_world().map_err(|e| {
        out.error(&e);
        exit::for_village_error(&e)
    })?;
    let sessions = SessionStore::open(&workspace.join("sessions.redb")).map_err(|e| {
        out.error(&e);
        exit::BOOT_FAILED
    })?;
    Ok(QuietVillage {
        world: world.value,
        sessions,
        _lock: lock,
    })
}

/// Runs `sessions`.
pub(crate) fn run(args: &SessionsArgs, out: &Out) -> u8 {
    let data_dir = match &args.command {
        SessionsCommand::List { data_dir, .. }
        | SessionsCommand::Show { data_dir, .. }
        | SessionsCommand::Export { data_dir, .. }
        | SessionsCommand::Fork { data_dir, .. }
        | SessionsCommand::Delete { data_dir, .. } => data_dir,
    };
    let village = match open_quiet_village(data_dir, out) {
        Ok(v) => v,
        Err(code) => return code,
    };
    let store = &village.sessions;
    let done = match &args.command {
        SessionsCommand::List { json, .. } => list(store, *json),
        SessionsCommand::Show { id, .. } => show(store, id, out),
        SessionsCommand::Export { id, out: file, .. } => export(store, id, file.as_deref(), out),
        SessionsCommand::Fork { id, before, .. } => store
            .fork(id, *before, now_ms())
            .map(|new| crate::outln!("{new}"))
            .map_err(|e| refuse(out, &e)),
        SessionsCommand::Delete { id, yes, .. } => delete(store, id, *yes, out),
    };
    match done {
        Ok(()) => exit::OK,
        Err(code) => code,
    }
}

fn refuse(out: &Out, e: &fuseforks_core::sessions::SessionError) -> u8 {
    out.error(e);
    if matches!(
        e.code(),
        "SESSION_NOT_FOUND" | "SESSION_FORK_PAST_END" | "SESSION_FORK_SPLITS_EXCHANGE"
    ) {
        exit::USAGE
    } else {
        exit::BOOT_FAILED
    }
}

fn now_ms() -> i64 {
    jiff::Timestamp::now().as_millisecond()
}

/// The records of a conversation that exist (or exit 2 naming the id).
fn records(
    store: &SessionStore,
    id: &str,
) -> Result<Vec<(u64, Record)>, fuseforks_core::sessions::SessionError> {
    Ok(store
        .records(id)?
        .into_iter()
        .filter_map(|(seq, r)| match r {
            StoredRecord::Known(r) => Some((seq, r)),
            StoredRecord::Unknown { .. } => None,
        })
        .collect())
}

fn list(store: &SessionStore, as_json: bool) -> Result<(), u8> {
    let mut all = store.list().map_err(|_| exit::BOOT_FAILED)?;
    all.sort_by_key(|(_, meta)| std::cmp::Reverse(meta.updated_at));
    let mut rows = Vec::new();
    for (id, meta) in all {
        let recs = records(store, &id).unwrap_or_default();
        let tokens: u64 = recs
            .iter()
            .map(|(_, r)| match r {
                Record::Turn(t) => t.prompt + t.completion,
                _ => 0,
            })
            .sum();
        rows.push(
            json!({"id": id, "title": meta.title, "createdAtMs": meta.created_at,
            "updatedAtMs": meta.updated_at, "records": recs.len(), "tokens": tokens}),
        );
    }
    if as_json {
        crate::outln!("{}", json!({ "sessions": rows }));
        return Ok(());
    }
    for r in &rows {
        let when = jiff::Timestamp::from_millisecond(r["updatedAtMs"].as_i64().unwrap_or(0))
            .map(|t| t.strftime("%Y-%m-%d %H:%M").to_string())
            .unwrap_or_default();
        crate::outln!(
            "{}  {when}  {:>5} records  {:>9} tokens  {}",
            r["id"].as_str().unwrap_or(""),
            r["records"],
            r["tokens"],
            one_line(r["title"].as_str().unwrap_or(""))
        );
    }
    Ok(())
}

/// A title on one row: line ends, tabs and other control characters as spaces (a title is the
/// start of a request, which may hold them), then the terminal's own stripping.
fn one_line(title: &str) -> String {
    let flat: String = title
        .trim()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    for_stdout(&flat).into_owned()
}

fn show(store: &SessionStore, id: &str, out: &Out) -> Result<(), u8> {
    let recs = records(store, id).map_err(|e| refuse(out, &e))?;
    for (seq, record) in recs {
        if let Record::Message(m) = record {
            crate::outln!(
                "#{seq} {} -> {}:\n{}\n",
                m.from.label(),
                m.to.label(),
                for_stdout(&m.content)
            );
        }
    }
    Ok(())
}

fn export(store: &SessionStore, id: &str, file: Option<&Path>, out: &Out) -> Result<(), u8> {
    let recs = records(store, id).map_err(|e| refuse(out, &e))?;
    let mut text = String::new();
    for (seq, record) in recs {
        let mut line = serde_json::to_value(&record).unwrap_or(Value::Null);
        line["seq"] = json!(seq);
        text.push_str(&line.to_string());
        text.push('\n');
    }
    let Some(file) = file else {
        out.result(&text);
        return Ok(());
    };
    if std::fs::symlink_metadata(file).is_ok() {
        out.cli(
            "error",
            "EXPORT_EXISTS",
            &format!("{} exists; nothing was written", file.display()),
            Some("name a new file"),
        );
        return Err(exit::OUTPUT_EXISTS);
    }
    fuseforks_core::village::write_secret_file_atomically(file, text.as_bytes()).map_err(|e| {
        out.cli(
            "error",
            "EXPORT_WRITE_FAILED",
            &format!("cannot write {}: {}", file.display(), e.kind()),
            Some("name a file in a folder that exists and that you may write to"),
        );
        exit::BOOT_FAILED
    })
}

fn delete(store: &SessionStore, id: &str, yes: bool, out: &Out) -> Result<(), u8> {
    store.meta(id).map_err(|e| refuse(out, &e))?;
    if !yes {
        if !std::io::stdin().is_terminal() {
            out.cli(
                "error",
                "CONFIRMATION_REQUIRED",
                "stdin is not a terminal, so the deletion cannot be confirmed; nothing was deleted",
                Some("run it on a terminal, or pass --yes"),
            );
            return Err(exit::USAGE);
        }
        out.prompt(&format!("Delete conversation {id}? [y/N] "));
        let mut line = String::new();
        let _ = std::io::stdin().lock().read_line(&mut line);
        out.prompt_done();
        if !matches!(line.trim(), "y" | "Y" | "yes") {
            out.cli("error", "DELETE_DECLINED", "not deleted", None);
            return Err(exit::INTERRUPTED);
        }
    }
    store.delete(id).map_err(|e| refuse(out, &e))?;
    crate::outln!("deleted: {id}");
    Ok(())
}
