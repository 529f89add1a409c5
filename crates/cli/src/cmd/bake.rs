//! `fuseforks-cli bake --data-dir SOURCE --out COPY [--map FROM=TO …] [--update]
//! [--source-time-zone IANA] [--allow-plaintext-headers] [--json] [--env-out PATH]`: the
//! container copy of a village (the work is `fuseforks_host::bake`).
//! Warnings go to stderr with their codes; the summary (or `--json`) to stdout. Exit 2, 3, 4,
//! 5, 10 and 11 write nothing.

use std::path::PathBuf;

use clap::Args;
use fuseforks_host::bake::{BakeOptions, BakeReport, bake};
use fuseforks_host::secrets::{EnvSecretStore, KeyringSecretStore, SecretStore};
use serde_json::json;

use super::headless::SecretsArg;
use crate::exit;
use crate::output::Out;

/// Arguments of `bake`.
#[derive(Debug, Args)]
pub(crate) struct BakeArgs {
    /// The GUI's data folder (the source village is DATA_DIR/workspace).
    #[arg(long, value_name = "SOURCE")]
    pub data_dir: PathBuf,
    /// The copy's data folder: absent or empty (first bake), or a copy bake made (--update).
    #[arg(long, value_name = "COPY")]
    pub out: PathBuf,
    /// Rewrite paths starting with FROM (whole components; a Windows FROM matches
    /// case-insensitively and `\` becomes `/`) to TO; the longest FROM wins. With --update and
    /// no --map, the copy's maps are kept; any --map replaces the whole set.
    #[arg(long = "map", value_name = "FROM=TO")]
    pub maps: Vec<String>,
    /// Re-bake a copy: design and shelf files replaced one by one, container state kept.
    #[arg(long)]
    pub update: bool,
    /// The IANA zone of the GUI machine (default: this machine's zone, `TZ` over it, said when they differ).
    #[arg(long, value_name = "IANA")]
    pub source_time_zone: Option<String>,
    /// Copy credential-like MCP headers that hold plaintext values (else exit 10).
    #[arg(long)]
    pub allow_plaintext_headers: bool,
    /// Print the result as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Also write the container's .env (TZ and FUSEFORKS_SECRET_*; 0600; values never printed).
    #[arg(long, value_name = "PATH")]
    pub env_out: Option<PathBuf>,
    /// Where --env-out reads the secret values.
    #[arg(long, value_enum, default_value = "keyring")]
    pub secrets: SecretsArg,
}

/// Runs `bake`.
pub(crate) fn run(args: &BakeArgs, out: &Out) -> u8 {
    let store: Option<Box<dyn SecretStore>> = match (&args.env_out, args.secrets) {
        (None, _) => None,
        (Some(_), SecretsArg::Env) => Some(Box::new(EnvSecretStore::from_env())),
        (Some(_), SecretsArg::Keyring) => match KeyringSecretStore::open() {
            Ok(store) => Some(Box::new(store)),
            Err(e) => {
                out.error(&e);
                return exit::BOOT_FAILED;
            }
        },
    };
    let now_ms = jiff::Timestamp::now().as_millisecond();
    let opts = BakeOptions {
        source: args.data_dir.clone(),
        out: args.out.clone(),
        maps: args.maps.clone(),
        update: args.update,
        source_time_zone: args.source_time_zone.clone(),
        allow_plaintext_headers: args.allow_plaintext_headers,
        env_out: args.env_out.clone().zip(store.as_deref()),
        app_version: env!("FUSEFORKS_VERSION").to_owned(),
        now_ms,
        tz_var: std::env::var_os("TZ").map(|v| v.to_string_lossy().into_owned()),
    };
    match bake(&opts) {
        Ok(report) => {
            for w in &report.warnings {
                out.cli("warn", w.code, &w.message, None);
            }
            if args.json {
                crate::outln!("{}", as_json(args, &report));
            } else {
                out.result(&summary(args, &report));
            }
            exit::OK
        }
        Err(e) => {
            out.error(&e);
            exit::for_bake_failure(e.failure())
        }
    }
}

fn as_json(args: &BakeArgs, r: &BakeReport) -> serde_json::Value {
    json!({
        "out": args.out.display().to_string(),
        "update": args.update,
        "written": r.written,
        "removed": r.removed,
        "rewrittenFields": r.rewritten_fields,
        "approvalsCarried": r.approvals_carried,
        "warnings": r.warnings.iter().map(|w| json!({"code": w.code, "message": w.message})).collect::<Vec<_>>(),
        "bake": r.record,
        "mapsAdded": r.maps_added,
        "mapsRemoved": r.maps_removed,
        "envOut": r.env.as_ref().map(|e| json!({
            "path": e.path().display().to_string(),
            "variables": e.variables,
            "commentedOut": e.commented,
        })),
    })
}

fn summary(args: &BakeArgs, r: &BakeReport) -> String {
    let mut text = format!(
        "baked: {} -> {} ({})\nfiles written: {}, removed: {}\npath fields rewritten: {}\nprobe approvals carried: {}\n",
        args.data_dir.display(),
        args.out.display(),
        if args.update { "update" } else { "first bake" },
        r.written.len(),
        r.removed.len(),
        r.rewritten_fields,
        r.approvals_carried,
    );
    if let Some(zone) = &r.record.source_time_zone {
        text.push_str(&format!(
            "source time zone: {zone} (give the container TZ={zone})\n"
        ));
    }
    for m in &r.record.maps {
        text.push_str(&format!("map: {}={}\n", m.from, m.to));
    }
    for m in &r.maps_added {
        text.push_str(&format!("map added: {m}\n"));
    }
    for m in &r.maps_removed {
        text.push_str(&format!("map removed: {m}\n"));
    }
    if let Some(env) = &r.env {
        text.push_str(&format!(
            "env file: {} (values: {}; commented out: {})\n",
            env.path().display(),
            list(&env.variables),
            list(&env.commented)
        ));
    }
    if !r.warnings.is_empty() {
        text.push_str(&format!("warnings: {} (on stderr)\n", r.warnings.len()));
    }
    text
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "none".into()
    } else {
        items.join(", ")
    }
}
