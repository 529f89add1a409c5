//! `fuseforks-cli schedules --data-dir D [--json]`: every schedule of the village with its
//! target, recurrence in words, next due time (in the process zone, as `serve` computes it),
//! last consumed due time, and its probes with their approval on
//! this machine. `fuseforks-cli schedules approve --data-dir D ID [--acceptance] [--yes]`: shows
//! the exact command line, cwd and village id of a schedule's probe, asks for confirmation on
//! a terminal (`--yes` for scripts; without a terminal and without `--yes` it refuses), then
//! approves it through the core's one writer (`fuseforks_core::probe::approve_probe`).
//! Reads and writes files only: no lock, no model call, nothing runs.

use std::io::{BufRead, IsTerminal};
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use fuseforks_core::Coded;
use fuseforks_core::probe::{approval_state, approve_probe};
use fuseforks_core::schedule::{Clock, Decision, SystemClock, Timing, decide, next_due};
use fuseforks_core::village::{
    Recurrence, ScheduleProbe, ScheduledTask, ShelfStore, VillageStore, Weekday,
};
use fuseforks_host::HostPaths;
use fuseforks_host::surface_audit::{SurfaceAuditError, record_probe_approval};
use serde_json::{Value, json};

use crate::exit;
use crate::output::Out;
use crate::terminal::for_stdout;

/// Arguments of `schedules`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct SchedulesArgs {
    #[command(subcommand)]
    pub action: Option<SchedulesAction>,
    /// The data folder; the village is DATA_DIR/workspace.
    #[arg(long, value_name = "DATA_DIR", required = true)]
    pub data_dir: Option<PathBuf>,
    /// Print `{"timeZone":…,"schedules":[…]}` on stdout (`timeZone`: the IANA name, or null).
    #[arg(long)]
    pub json: bool,
}

/// What `schedules` does besides listing.
#[derive(Debug, Subcommand)]
pub(crate) enum SchedulesAction {
    /// Approve a schedule's probe on this machine (shows it and asks first).
    Approve {
        /// The data folder; the village is DATA_DIR/workspace.
        #[arg(long, value_name = "DATA_DIR")]
        data_dir: PathBuf,
        /// The schedule's id (see `fuseforks-cli schedules --data-dir D`).
        id: String,
        /// Approve the acceptance probe instead of the pre-check probe.
        #[arg(long)]
        acceptance: bool,
        /// Do not ask (for scripts): approve what is shown.
        #[arg(long)]
        yes: bool,
        /// Where the audit key comes from (the approval's audit line is marked with it when
        /// no process runs the village).
        #[arg(long, value_enum, default_value = "keyring")]
        secrets: super::headless::SecretsArg,
    },
}

/// A refusal: exit code, machine code, message, fix.
struct Refusal(u8, &'static str, String, Option<String>);

impl Refusal {
    fn of(exit: u8, e: &dyn Coded) -> Self {
        Self(exit, e.code(), e.to_string(), crate::remedy::of(e))
    }
}

/// Runs `schedules`.
pub(crate) fn run(args: &SchedulesArgs, out: &Out) -> u8 {
    let result = match (&args.action, &args.data_dir) {
        (
            Some(SchedulesAction::Approve {
                data_dir,
                id,
                acceptance,
                yes,
                secrets,
            }),
            _,
        ) => approve(data_dir, id, (*acceptance, *yes), *secrets, out),
        (None, Some(data_dir)) => list(data_dir, args.json),
        (None, None) => Err(Refusal(
            exit::USAGE,
            "USAGE",
            "--data-dir is required".into(),
            Some("fuseforks-cli schedules --data-dir DATA_DIR".into()),
        )),
    };
    match result {
        Ok(code) => code,
        Err(Refusal(code, name, message, fix)) => {
            out.cli("error", name, &message, fix.as_deref());
            code
        }
    }
}

/// The village at `data_dir`, its schedules and its shelf.
struct Village {
    store: VillageStore,
    shelf: ShelfStore,
    schedules: Vec<ScheduledTask>,
}

fn open(data_dir: &Path) -> Result<Village, Refusal> {
    let paths = HostPaths::new(data_dir);
    if let Some(missing) = paths.village_missing() {
        return Err(Refusal::of(exit::BOOT_FAILED, &missing));
    }
    let store = paths.village();
    let schedules = store
        .load_schedules()
        .map_err(|e| Refusal::of(exit::BOOT_FAILED, &e))?
        .value
        .0;
    Ok(Village {
        store,
        shelf: paths.shelf(),
        schedules,
    })
}

fn list(data_dir: &Path, as_json: bool) -> Result<u8, Refusal> {
    let v = open(data_dir)?;
    let village_id = v
        .store
        .read_village_id()
        .map_err(|e| Refusal::of(exit::BOOT_FAILED, &e))?
        .unwrap_or_default();
    // The zone `serve` fires in (`TZ` first, `:` stripped, else the system's); never a guess.
    let process_zone = fuseforks_host::preflight_view::process_zone()
        .map_err(|e| Refusal::of(exit::BOOT_FAILED, &e))?;
    let zone = process_zone.zone().clone();
    let now_ms = SystemClock.now_ms();
    let rows: Vec<Value> = v
        .schedules
        .iter()
        .map(|s| row_json(s, &v.shelf, &village_id, &zone, now_ms))
        .collect();
    if as_json {
        let zone_name = zone.iana_name();
        crate::outln!("{}", json!({"timeZone": zone_name, "schedules": rows}));
        return Ok(exit::OK);
    }
    if rows.is_empty() {
        crate::outln!("no schedules (workspace/schedules.json is absent or empty)");
    }
    for row in &rows {
        crate::outln!("{}", for_stdout(&human_row(row)));
    }
    Ok(exit::OK)
}

/// One schedule as JSON; `nextDue`: the first due instant after now and after the last
/// consumed one, in the zone (null when disabled).
fn row_json(
    s: &ScheduledTask,
    shelf: &ShelfStore,
    village_id: &str,
    zone: &jiff::tz::TimeZone,
    now_ms: i64,
) -> Value {
    let after = s.last_consumed_due_ms.map_or(now_ms, |c| c.max(now_ms));
    let next_due_ms = s
        .enabled
        .then(|| next_due(&s.recurrence, s.created_at_ms, zone, after))
        .flatten();
    // A due instant owed now (within grace, not consumed): `serve` fires it as it starts.
    let owed_due_ms = match s.enabled.then(|| decide(Timing::from(s), zone, now_ms)) {
        Some(Decision::Fire { due_ms }) => Some(due_ms),
        _ => None,
    };
    let probe = |p: &ScheduleProbe| {
        json!({
            "command": p.command, "args": p.args, "cwd": p.cwd, "expect": p.expect,
            "timeoutSecs": p.timeout_secs,
            "approval": approval_state(shelf, p, village_id).as_str(),
        })
    };
    let acceptance = s.acceptance.as_ref().map(|a| {
        let mut v = probe(&a.probe);
        v["maxAttempts"] = json!(a.max_attempts);
        v
    });
    json!({
        "id": s.id,
        "to": s.to.as_str(),
        "enabled": s.enabled,
        "recurrence": recurrence_words(&s.recurrence),
        "lastConsumedDueMs": s.last_consumed_due_ms,
        "lastConsumed": s.last_consumed_due_ms.and_then(|ms| local_time(ms, zone)),
        "nextDueMs": next_due_ms,
        "nextDue": next_due_ms.and_then(|ms| local_time(ms, zone)),
        "owedDueMs": owed_due_ms,
        "probe": s.probe.as_ref().map(probe),
        "acceptance": acceptance,
    })
}

/// `id  -> target  recurrence  next: …  last: …  probe: …  acceptance: …`.
fn human_row(row: &Value) -> String {
    let text = |v: &Value| v.as_str().unwrap_or("-").to_owned();
    let probe = |v: &Value| match v.get("approval") {
        Some(a) => format!("{} ({})", text(&v["command"]), text(a)),
        None => "-".to_owned(),
    };
    let disabled = if row["enabled"] == json!(false) {
        "  (disabled)"
    } else {
        ""
    };
    let owed = if row["owedDueMs"].is_i64() {
        "due now (serve fires it as it starts), then "
    } else {
        ""
    };
    format!(
        "{}  -> {}  {}  next: {owed}{}  last: {}  probe: {}  acceptance: {}{disabled}",
        text(&row["id"]),
        text(&row["to"]),
        text(&row["recurrence"]),
        text(&row["nextDue"]),
        text(&row["lastConsumed"]),
        probe(&row["probe"]),
        probe(&row["acceptance"]),
    )
}

/// The recurrence in words: `every 15 minutes`, `daily at 09:00`, `weekly on Monday at 09:00`.
fn recurrence_words(r: &Recurrence) -> String {
    match r {
        Recurrence::Interval(i) if i.every_minutes == 1 => "every minute".into(),
        Recurrence::Interval(i) => format!("every {} minutes", i.every_minutes),
        Recurrence::Daily(t) => format!("daily at {:02}:{:02}", t.hour, t.minute),
        Recurrence::Weekly(w) => format!(
            "weekly on {} at {:02}:{:02}",
            weekday_name(w.weekday),
            w.hour,
            w.minute
        ),
    }
}

fn weekday_name(day: Weekday) -> &'static str {
    match day {
        Weekday::Mon => "Monday",
        Weekday::Tue => "Tuesday",
        Weekday::Wed => "Wednesday",
        Weekday::Thu => "Thursday",
        Weekday::Fri => "Friday",
        Weekday::Sat => "Saturday",
        Weekday::Sun => "Sunday",
    }
}

/// A time in ms since the epoch as ISO 8601 with the offset of `zone`.
fn local_time(ms: i64, zone: &jiff::tz::TimeZone) -> Option<String> {
    let when = jiff::Timestamp::from_millisecond(ms).ok()?;
    Some(
        when.to_zoned_datetime(zone.clone())
            .strftime("%Y-%m-%dT%H:%M:%S%:z")
            .to_string(),
    )
}

fn approve(
    data_dir: &Path,
    id: &str,
    (acceptance, yes): (bool, bool),
    secrets: super::headless::SecretsArg,
    out: &Out,
) -> Result<u8, Refusal> {
    let v = open(data_dir)?;
    let list_fix = format!(
        "list them: fuseforks-cli schedules --data-dir {}",
        data_dir.display()
    );
    let Some(schedule) = v.schedules.iter().find(|s| s.id == id) else {
        return Err(Refusal(
            exit::USAGE,
            "SCHEDULE_NOT_FOUND",
            format!("no schedule with the id {id} in schedules.json"),
            Some(list_fix),
        ));
    };
    let (what, probe) = if acceptance {
        (
            "acceptance probe",
            schedule.acceptance.as_ref().map(|a| &a.probe),
        )
    } else {
        ("probe", schedule.probe.as_ref())
    };
    let Some(probe) = probe else {
        let other = if acceptance { "" } else { " (or --acceptance)" };
        return Err(Refusal(
            exit::USAGE,
            "SCHEDULE_PROBE_MISSING",
            format!("schedule {id} has no {what}"),
            Some(format!("{list_fix}{other}")),
        ));
    };
    let village_id = v
        .store
        .village_id()
        .map_err(|e| Refusal::of(exit::BOOT_FAILED, &e))?;
    // What is shown is what runs: no hidden characters, the folder's real path.
    let cwd = fuseforks_core::probe::plain_cwd(probe, v.store.workspace())
        .map_err(|why| {
            Refusal(
                exit::USAGE,
                "PROBE_NOT_PLAIN",
                format!("the {what} of schedule {id} cannot be approved: {why}"),
                Some("edit schedules.json: the command and its arguments without control characters, cwd as a real folder path (no symlink, no ..)".into()),
            )
        })?
        .display()
        .to_string()
        + if probe.cwd.is_none() { " (the workspace)" } else { "" };
    let shown = format!(
        "schedule:   {id} ({what})\ncommand:    {}\ncwd:        {cwd}\nvillage id: {village_id}\n",
        command_line(probe)
    );
    out.result(&for_stdout(&shown));
    if !yes && !confirmed(out)? {
        return Err(Refusal(
            exit::INTERRUPTED,
            "APPROVAL_DECLINED",
            "not approved; nothing was written".into(),
            None,
        ));
    }
    let written = approve_probe(&v.shelf, probe, &village_id)
        .map_err(|e| Refusal::of(exit::for_village_error(&e), &e))?;
    let state = if written.already {
        "already approved"
    } else {
        let kind = if acceptance { "acceptance" } else { "probe" };
        let paths = HostPaths::new(data_dir);
        let source = match secrets {
            super::headless::SecretsArg::Keyring => fuseforks_host::SecretSource::Keyring,
            super::headless::SecretsArg::Env => fuseforks_host::SecretSource::Env,
        };
        let recorded = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| SurfaceAuditError::Local(e.kind().to_string()))
            .and_then(|runtime| {
                runtime.block_on(record_probe_approval(
                    &paths,
                    id,
                    kind,
                    &written.key,
                    source,
                ))
            });
        if let Err(e) = recorded {
            use fuseforks_core::Coded as _;
            out.cli(
                "warn",
                e.code(),
                &e.to_string(),
                crate::remedy::of(&e).as_deref(),
            );
        }
        "approved"
    };
    crate::outln!(
        "{state}: {what} of schedule {id} on this machine (key {})",
        written.key
    );
    Ok(exit::OK)
}

/// Asks on the terminal; refuses when stdin is not one.
fn confirmed(out: &Out) -> Result<bool, Refusal> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(Refusal(
            exit::USAGE,
            "CONFIRMATION_REQUIRED",
            "stdin is not a terminal, so the approval cannot be confirmed; nothing was written"
                .into(),
            Some("run it on a terminal, or pass --yes to approve the command shown above".into()),
        ));
    }
    out.prompt("Approve this command to run unattended on this machine? [y/N] ");
    let mut line = String::new();
    let read = stdin.lock().read_line(&mut line);
    out.prompt_done();
    read.map_err(|e| {
        Refusal(
            exit::CORE_ERROR,
            "CONFIRMATION_UNREADABLE",
            format!("the answer could not be read: {}", e.kind()),
            None,
        )
    })?;
    Ok(matches!(
        line.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// The command line as shell words (quoted where needed), for a person to read.
fn command_line(probe: &ScheduleProbe) -> String {
    std::iter::once(&probe.command)
        .chain(&probe.args)
        .map(|w| shell_word(w))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_only_where_needed() {
        assert_eq!(shell_word("status"), "status");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn times_carry_the_offset_of_the_zone() {
        let zone = jiff::tz::TimeZone::get("Asia/Tokyo").unwrap();
        assert_eq!(
            local_time(0, &zone).as_deref(),
            Some("1970-01-01T09:00:00+09:00")
        );
    }
}
