//! `fuseforks-cli init`: founds a village in `DATA_DIR/workspace` and says what to do next.
//! Refuses (exit 11, nothing touched) when `world.json` already exists there.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use fuseforks_core::village::founding::{FoundingPlan, FoundingReport, found_village};
use fuseforks_core::village::presets::{PRESETS, ProviderPreset, preset};
use fuseforks_core::village::{Credential, Language};
use fuseforks_host::HostPaths;
use fuseforks_host::secret_names::env_var_name;

use crate::exit;

/// Examples shown by `init --help`.
pub const EXAMPLES: &str = "\
Examples:
  fuseforks-cli init --data-dir ~/villages/demo
  fuseforks-cli init --data-dir ./village --language ja --provider anthropic
  fuseforks-cli init --data-dir ./village --provider ollama     # local model, no key

Providers: openai, openai-responses, anthropic, gemini, xai, meta, perplexity, ollama, lmstudio.
The model name is a starting point: change it in world.json (modelTemplates[0].model).";

/// Arguments of `init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The data folder; the village goes into DATA_DIR/workspace. Required: there is no default.
    #[arg(long, value_name = "DATA_DIR")]
    data_dir: PathBuf,
    /// Language of the agents' model-facing text [default: from LANG / LC_ALL, else en].
    #[arg(long, value_enum)]
    language: Option<LanguageArg>,
    /// Provider of the first model template.
    #[arg(long, default_value = "openai", value_parser = provider_keys())]
    provider: String,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum LanguageArg {
    Ja,
    En,
}

fn provider_keys() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(PRESETS.iter().map(|p| p.key))
}

/// Runs `init`; returns the exit code.
pub fn run(args: &InitArgs) -> u8 {
    let Some(preset) = preset(&args.provider) else {
        // clap has already refused unknown values; this cannot be reached from the command line.
        eprintln!("error: unknown provider {:?}", args.provider);
        return 2;
    };
    let language = match args.language {
        Some(LanguageArg::Ja) => Language::Ja,
        Some(LanguageArg::En) => Language::En,
        None => Language::from_locale(os_locale().as_deref()),
    };
    let paths = HostPaths::new(&args.data_dir);
    match found_village(&paths.village(), &FoundingPlan { language, preset }) {
        Ok(report) => {
            print!("{}", summary(&paths, preset, &report));
            exit::OK
        }
        Err(err) => {
            crate::output::Out::default().cli("error", err.code(), &err.to_string(), None);
            exit::for_village_error(&err)
        }
    }
}

fn os_locale() -> Option<String> {
    ["LC_ALL", "LC_MESSAGES", "LANG"]
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .find(|value| !value.trim().is_empty())
}

fn summary(paths: &HostPaths, preset: &ProviderPreset, report: &FoundingReport) -> String {
    let data_dir = paths.data_dir().display();
    let mut out = String::new();
    let _ = writeln!(out, "Founded a village in {}", report.workspace.display());
    let _ = writeln!(out, "  village id: {}", report.village_id);
    let _ = writeln!(
        out,
        "  template:   {} ({} via {}, model {})",
        report.template_id,
        preset.name,
        preset.provider.as_str(),
        preset.model
    );
    let _ = writeln!(out, "  reception:  {}", report.reception);
    for file in &report.created {
        let _ = writeln!(out, "  created:    {}", file.display());
    }
    for file in &report.kept {
        let _ = writeln!(out, "  kept:       {} (already there)", file.display());
    }
    let _ = writeln!(out, "\nNext:");
    let mut step = 1;
    if report.credential == Credential::Keyring {
        let _ = writeln!(
            out,
            "  {step}. Give the template its API key, either in the OS secret store under the key \"{}\"\n     (the GUI's template settings), or for headless runs in the environment:\n       export {}=<your API key>     (then pass --secrets env)",
            report.template_id,
            env_var_name(report.template_id.as_str())
        );
    } else {
        let _ = writeln!(
            out,
            "  {step}. Start the local server at {} (no API key needed).",
            preset.base_url
        );
    }
    step += 1;
    let secrets = if report.credential == Credential::Keyring {
        " --secrets env"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "  {step}. Check it without calling a model:\n       fuseforks-cli check --for ask --data-dir {data_dir} --start reception{secrets}"
    );
    step += 1;
    let _ = writeln!(
        out,
        "  {step}. Ask the reception something:\n       fuseforks-cli ask --data-dir {data_dir} --start reception{secrets} \"Hello\""
    );
    let _ = writeln!(
        out,
        "  Shape the reception in {}, and the model in world.json.",
        paths
            .workspace()
            .join("agents")
            .join(report.reception.as_str())
            .join("Construct.md")
            .display()
    );
    out
}
