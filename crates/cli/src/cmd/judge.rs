//! `fuseforks-cli judge validate --data-dir D [ID…] [--json]`: checks each judge's
//! `judge.toml` (docs/formats/judge.toml.md; `to` against the village's servants) and prints every
//! finding as `file:line:col CODE message` (and its fix); exit 0 when all are valid, 3 otherwise.
//! Reads files only: no lock, no log, no model call, nothing written. `judge try` is in
//! `judge_try.rs`.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use fuseforks_core::judge::{Finding, INVALID_JUDGE_FILE, JudgeState, judge_states};
use fuseforks_core::village::World;
use fuseforks_host::HostPaths;
use serde_json::{Value, json};

use super::headless::SecretsArg;
use crate::exit;
use crate::output::Out;
use crate::terminal::for_stdout;

/// Arguments of `judge`.
#[derive(Debug, Args)]
pub(crate) struct JudgeArgs {
    #[command(subcommand)]
    pub action: JudgeAction,
}

/// What `judge` does.
#[derive(Debug, Subcommand)]
pub(crate) enum JudgeAction {
    /// Check judge files; exit 0 when all are valid, 3 with every finding otherwise.
    Validate {
        /// The data folder; the village is DATA_DIR/workspace.
        #[arg(long, value_name = "DATA_DIR")]
        data_dir: PathBuf,
        /// Judge ids (default: every judge of the village).
        ids: Vec<String>,
        /// Print `{"judges":[{id,file,valid,findings:[{line,col,code,message,fix}]}]}`.
        #[arg(long)]
        json: bool,
    },
    /// Run one judge on a sample text and show what it would do; delivers nothing.
    Try {
        /// The data folder; the village is DATA_DIR/workspace.
        #[arg(long, value_name = "DATA_DIR")]
        data_dir: PathBuf,
        /// Where the Jev token and template keys come from.
        #[arg(long, value_enum, default_value = "keyring")]
        secrets: SecretsArg,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
        /// The judge's id.
        id: String,
        /// The sample text, or `-` for stdin.
        text: String,
    },
}

/// Runs `judge`.
pub(crate) fn run(args: &JudgeArgs, out: &Out) -> u8 {
    match &args.action {
        JudgeAction::Try {
            data_dir,
            secrets,
            json,
            id,
            text,
        } => {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(r) => r,
                Err(e) => {
                    out.cli("error", "RUNTIME_FAILED", &e.to_string(), None);
                    return exit::CORE_ERROR;
                }
            };
            let args = super::judge_try::TryArgs {
                data_dir,
                id,
                secrets: *secrets,
                text,
                json: *json,
            };
            runtime.block_on(super::judge_try::run(args, out))
        }
        JudgeAction::Validate {
            data_dir,
            ids,
            json,
        } => validate(data_dir, ids, *json, out),
    }
}

/// The village's world and its judges' states, or the exit code after an error line.
pub(crate) fn open_judges(data_dir: &Path, out: &Out) -> Result<(World, Vec<JudgeState>), u8> {
    let paths = HostPaths::new(data_dir);
    if let Some(missing) = paths.village_missing() {
        out.error(&missing);
        return Err(exit::BOOT_FAILED);
    }
    let store = paths.village();
    let world = match store.load_world() {
        Ok(w) => w.value,
        Err(e) => {
            out.error(&e);
            return Err(exit::for_village_error(&e));
        }
    };
    let states = judge_states(&store, &world);
    Ok((world, states))
}

/// The states of `ids` (all when empty); an unknown id is a usage error.
pub(crate) fn pick<'a>(
    states: &'a [JudgeState],
    ids: &[String],
    out: &Out,
) -> Result<Vec<&'a JudgeState>, u8> {
    if ids.is_empty() {
        return Ok(states.iter().collect());
    }
    let mut picked = Vec::new();
    for id in ids {
        match states.iter().find(|s| s.spec.id.as_str() == id) {
            Some(s) => picked.push(s),
            None => {
                let known: Vec<&str> = states.iter().map(|s| s.spec.id.as_str()).collect();
                out.cli(
                    "error",
                    "JUDGE_NOT_FOUND",
                    &format!("no judge with id {id:?}"),
                    Some(&format!("use one of: {}", known.join(", "))),
                );
                return Err(exit::USAGE);
            }
        }
    }
    Ok(picked)
}

/// Each finding as `file:line:col CODE message`, its fix on the next line.
pub(crate) fn print_findings(file: &str, findings: &[Finding]) {
    for f in findings {
        let line = format!(
            "{file}:{}:{} {INVALID_JUDGE_FILE} {}\n  Fix: {}",
            f.line, f.col, f.message, f.fix
        );
        crate::outln!("{}", for_stdout(&line));
    }
}

fn validate(data_dir: &Path, ids: &[String], as_json: bool, out: &Out) -> u8 {
    let (_world, states) = match open_judges(data_dir, out) {
        Ok(v) => v,
        Err(code) => return code,
    };
    let picked = match pick(&states, ids, out) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut invalid = 0usize;
    let mut findings_total = 0usize;
    let mut rows: Vec<Value> = Vec::new();
    for state in &picked {
        let file = state.path.display().to_string();
        let findings = match &state.rules {
            Ok(_) => Vec::new(),
            Err(f) => f.clone(),
        };
        if !findings.is_empty() {
            invalid += 1;
            findings_total += findings.len();
        }
        if as_json {
            rows.push(json!({
                "id": state.spec.id.as_str(),
                "file": file,
                "valid": findings.is_empty(),
                "findings": findings.iter().map(|f| json!({
                    "line": f.line, "col": f.col, "code": INVALID_JUDGE_FILE,
                    "message": f.message, "fix": f.fix,
                })).collect::<Vec<_>>(),
            }));
            continue;
        }
        if let Ok(rules) = &state.rules {
            let line = format!(
                "{file}: ok ({} questions, {} rules)",
                rules.questions.len(),
                rules.rules.len()
            );
            crate::outln!("{}", for_stdout(&line));
        }
        for f in &findings {
            let line = format!(
                "{file}:{}:{} {INVALID_JUDGE_FILE} {}\n  Fix: {}",
                f.line, f.col, f.message, f.fix
            );
            crate::outln!("{}", for_stdout(&line));
        }
    }
    if as_json {
        crate::outln!("{}", json!({ "judges": rows }));
    }
    if invalid == 0 {
        return exit::OK;
    }
    out.cli(
        "error",
        INVALID_JUDGE_FILE,
        &format!("{findings_total} finding(s) in {invalid} judge file(s)"),
        Some("correct each place shown (file:line:col) as its fix says"),
    );
    exit::REJECTED
}
