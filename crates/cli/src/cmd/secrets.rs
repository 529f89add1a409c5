//! `fuseforks-cli secrets set|delete|list --data-dir D`: keys in the OS keyring (the store
//! `--secrets keyring` reads). `set` reads the value from a terminal without echo, or from stdin
//! with `--stdin` (one trailing newline dropped); no value is ever printed. `list` shows the keys
//! the village uses and whether each is present. Every command says which store it used.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;

use clap::{Args, Subcommand};
use fuseforks_core::Coded;
use fuseforks_host::HostPaths;
use fuseforks_host::secret_names::{NeededKey, needed_keys};
use fuseforks_host::secrets::{KeyringSecretStore, SecretError, SecretStore, value_problem};
use serde_json::json;

use crate::exit;
use crate::output::Out;

/// The longest value `set` stores.
pub(crate) use fuseforks_host::secrets::MAX_VALUE_BYTES;
/// The longest key name.
const MAX_KEY_CHARS: usize = 256;

/// Arguments of `secrets`.
#[derive(Debug, Args)]
pub(crate) struct SecretsArgs {
    #[command(subcommand)]
    pub action: SecretsAction,
}

/// What `secrets` does.
#[derive(Debug, Subcommand)]
pub(crate) enum SecretsAction {
    /// Store a key's value (read from the terminal without echo, or from stdin with --stdin).
    Set {
        /// The key: a template id, `mcp:NAME`, `door_token` or `jev_api_token`.
        key: String,
        /// Read the value from stdin (one trailing newline is dropped).
        #[arg(long)]
        stdin: bool,
        #[command(flatten)]
        place: Place,
    },
    /// Remove a key.
    Delete {
        /// The key.
        key: String,
        #[command(flatten)]
        place: Place,
    },
    /// Show the keys the village uses and whether each is present (never a value).
    List {
        #[command(flatten)]
        place: Place,
        /// Print `{"store":…,"persistent":…,"keys":[…]}` on stdout.
        #[arg(long)]
        json: bool,
    },
}

/// The village the keys are for.
#[derive(Debug, Args)]
pub(crate) struct Place {
    /// The data folder; the village is DATA_DIR/workspace.
    #[arg(long, value_name = "DATA_DIR")]
    pub data_dir: PathBuf,
}

/// A refusal: exit code, machine code, message, fix.
struct Refusal(u8, &'static str, String, Option<String>);

impl Refusal {
    /// A typed error as a refusal with `exit`: its code, message and fix.
    fn of(exit: u8, e: &dyn Coded) -> Self {
        Self(exit, e.code(), e.to_string(), crate::remedy::of(e))
    }
}

/// Runs `secrets`.
pub(crate) fn run(args: &SecretsArgs, out: &Out) -> u8 {
    let result = match &args.action {
        SecretsAction::Set { key, stdin, place } => set(key, *stdin, place, out),
        SecretsAction::Delete { key, place } => delete(key, place, out),
        SecretsAction::List { place, json } => list(place, *json, out),
    };
    match result {
        Ok(()) => exit::OK,
        Err(Refusal(code, name, message, fix)) => {
            out.cli("error", name, &message, fix.as_deref());
            code
        }
    }
}

fn set(key: &str, from_stdin: bool, place: &Place, out: &Out) -> Result<(), Refusal> {
    check_key(key)?;
    let needed = needed_keys(&village(place)?).ok();
    let value = read_value(key, from_stdin, out)?;
    let store = open(out)?;
    store.set(key, &value).map_err(store_refusal)?;
    drop(value);
    if let Some(needed) = needed
        && !needed.iter().any(|n| n.key == key)
    {
        out.cli(
            "warn",
            "SECRET_KEY_UNUSED",
            &format!("no template or mcp.json of this village uses the key {key}; stored anyway"),
            Some(&format!(
                "check the spelling against `fuseforks-cli secrets list --data-dir {}`",
                place.data_dir.display()
            )),
        );
    }
    crate::outln!("stored: {key} in {}", store.backend().label());
    Ok(())
}

fn delete(key: &str, place: &Place, out: &Out) -> Result<(), Refusal> {
    check_key(key)?;
    village(place)?;
    let store = open(out)?;
    let present = store.get(key).map_err(store_refusal)?.is_some();
    store.delete(key).map_err(store_refusal)?;
    let what = if present { "deleted" } else { "not present" };
    crate::outln!("{what}: {key} in {}", store.backend().label());
    Ok(())
}

fn list(place: &Place, as_json: bool, out: &Out) -> Result<(), Refusal> {
    let paths = village(place)?;
    let needed = needed_keys(&paths).map_err(|e| Refusal::of(exit::BOOT_FAILED, &e))?;
    let store = open(out)?;
    let mut rows = Vec::new();
    for n in &needed {
        let present = store.get(&n.key).map_err(store_refusal)?.is_some();
        rows.push((n, present));
    }
    let backend = store.backend();
    if as_json {
        let keys: Vec<_> = rows
            .iter()
            .map(|(n, present)| row_json(n, *present))
            .collect();
        crate::outln!(
            "{}",
            json!({"store": backend.id(), "persistent": backend.persistent(), "keys": keys})
        );
        return Ok(());
    }
    let persistent = if backend.persistent() {
        "persistent"
    } else {
        "not persistent: lost at a reboot"
    };
    crate::outln!("store: {} ({persistent})", backend.label());
    let width = rows.iter().map(|(n, _)| n.key.len()).max().unwrap_or(0);
    for (n, present) in &rows {
        let state = if *present { "present" } else { "missing" };
        let optional = if n.required { "" } else { " (optional)" };
        let line = format!("{:width$}  {state:7}  {}{optional}", n.key, n.used_by);
        crate::outln!("{}", crate::terminal::for_stdout(&line));
    }
    Ok(())
}

/// The village at `--data-dir`, or `VILLAGE_MISSING` (with "use its parent" when the folder
/// is a workspace). Keys are kept per machine, by key name, but a command names its village so
/// that a typo in the folder is not a silent success.
fn village(place: &Place) -> Result<HostPaths, Refusal> {
    let paths = HostPaths::new(&place.data_dir);
    match paths.village_missing() {
        None => Ok(paths),
        Some(missing) => Err(Refusal::of(exit::BOOT_FAILED, &missing)),
    }
}

fn row_json(n: &NeededKey, present: bool) -> serde_json::Value {
    json!({"key": n.key, "present": present, "usedBy": n.used_by, "required": n.required})
}

/// Opens the OS keyring and says on stderr what the choice means (a fallback, keys lost at a
/// reboot).
fn open(out: &Out) -> Result<KeyringSecretStore, Refusal> {
    let store = KeyringSecretStore::open().map_err(store_refusal)?;
    if let Some(notice) = store.notice() {
        out.cli("warn", "SECRET_STORE_NOT_PERSISTENT", notice, None);
    }
    Ok(store)
}

fn check_key(key: &str) -> Result<(), Refusal> {
    let bad = key.is_empty()
        || key.chars().count() > MAX_KEY_CHARS
        || key.chars().any(|c| c.is_whitespace() || c.is_control());
    if bad {
        return Err(Refusal(
            exit::USAGE,
            "SECRET_KEY_INVALID",
            format!(
                "the key must be 1 to {MAX_KEY_CHARS} characters without spaces or control characters"
            ),
            Some("use a template id, mcp:NAME, door_token or jev_api_token".into()),
        ));
    }
    Ok(())
}

/// Reads the value: stdin with `--stdin`, else the terminal without echo.
fn read_value(key: &str, from_stdin: bool, out: &Out) -> Result<String, Refusal> {
    let raw = if from_stdin {
        let mut buf = Vec::new();
        std::io::stdin()
            .lock()
            .take(MAX_VALUE_BYTES as u64 + 3)
            .read_to_end(&mut buf)
            .map_err(|e| read_refusal(&e))?;
        buf
    } else {
        if !std::io::stdin().is_terminal() {
            return Err(Refusal(
                exit::USAGE,
                "USAGE",
                "stdin is not a terminal, so the value cannot be typed without echo".into(),
                Some("pass --stdin to read the value from stdin".into()),
            ));
        }
        out.prompt(&format!("Value for {key} (not shown): "));
        let line = no_echo::read_line().map_err(|e| read_refusal(&e));
        out.prompt_done();
        line?
    };
    let value = String::from_utf8(strip_newline(raw)).map_err(|_| {
        Refusal(
            exit::USAGE,
            "SECRET_VALUE_INVALID",
            "the value is not UTF-8 text".into(),
            None,
        )
    })?;
    if value.trim().is_empty() {
        return Err(Refusal(
            exit::USAGE,
            "SECRET_VALUE_EMPTY",
            "the value is empty or blank; nothing was stored".into(),
            Some(
                "to remove a key use `fuseforks-cli secrets delete KEY --data-dir DATA_DIR`".into(),
            ),
        ));
    }
    if value.len() > MAX_VALUE_BYTES {
        return Err(Refusal(
            exit::USAGE,
            "SECRET_VALUE_TOO_LARGE",
            format!("the value is longer than {MAX_VALUE_BYTES} bytes; nothing was stored"),
            Some("an API key is far shorter: check what was pasted".into()),
        ));
    }
    if let Some(why) = value_problem(&value) {
        return Err(Refusal(
            exit::USAGE,
            "SECRET_VALUE_INVALID",
            format!("{why}; nothing was stored"),
            Some("give the key alone, on one line".into()),
        ));
    }
    Ok(value)
}

/// Drops one trailing `\n` (or `\r\n`).
fn strip_newline(mut raw: Vec<u8>) -> Vec<u8> {
    if raw.last() == Some(&b'\n') {
        raw.pop();
        if raw.last() == Some(&b'\r') {
            raw.pop();
        }
    }
    raw
}

fn read_refusal(e: &std::io::Error) -> Refusal {
    Refusal(
        exit::CORE_ERROR,
        "SECRET_VALUE_UNREADABLE",
        format!("the value could not be read: {}", e.kind()),
        None,
    )
}

fn store_refusal(e: SecretError) -> Refusal {
    Refusal::of(exit::BOOT_FAILED, &e)
}

#[cfg(unix)]
mod no_echo {
    //! One line from the terminal on stdin with echo off (restored on every path).

    use std::io::{BufRead, Read};

    use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};

    struct Restore(rustix::termios::Termios);

    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, &self.0);
        }
    }

    pub(super) fn read_line() -> std::io::Result<Vec<u8>> {
        let stdin = std::io::stdin();
        let before = tcgetattr(&stdin)?;
        let mut quiet = before.clone();
        quiet.local_modes -= LocalModes::ECHO;
        quiet.local_modes |= LocalModes::ECHONL;
        tcsetattr(&stdin, OptionalActions::Now, &quiet)?;
        let _restore = Restore(before);
        let mut line = Vec::new();
        stdin
            .lock()
            .take(super::MAX_VALUE_BYTES as u64 + 3)
            .read_until(b'\n', &mut line)?;
        Ok(line)
    }
}

#[cfg(not(unix))]
mod no_echo {
    //! No echo-less terminal read is built here yet: `--stdin` is the way.

    pub fn read_line() -> std::io::Result<Vec<u8>> {
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "pass --stdin: typing without echo is not supported on this platform yet",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_trailing_newline_is_dropped() {
        assert_eq!(strip_newline(b"sk-1\n".to_vec()), b"sk-1");
        assert_eq!(strip_newline(b"sk-1\r\n".to_vec()), b"sk-1");
        assert_eq!(strip_newline(b"sk-1\n\n".to_vec()), b"sk-1\n");
        assert_eq!(strip_newline(b"sk-1".to_vec()), b"sk-1");
    }

    #[test]
    fn a_store_error_keeps_its_code_and_fix_apart_from_the_message() {
        let Refusal(exit, code, message, fix) =
            store_refusal(SecretError::Unavailable("no bus".into()));
        assert_eq!(
            (exit, code),
            (exit::BOOT_FAILED, "SECRET_STORE_UNAVAILABLE")
        );
        assert!(
            !message.contains("Fix") && !message.starts_with('['),
            "{message}"
        );
        assert!(fix.is_some_and(|f| f.contains("--secrets env")));
    }
}
