//! `fuseforks-cli init`: founds a village in `DATA_DIR/workspace` and says what to do next.
//! Refuses (`exit::OUTPUT_EXISTS`, nothing touched) when `world.json` already exists there, and
//! (`exit::USAGE`, nothing written) a `--base-url` the endpoint rule refuses. Everything it
//! says goes through [`Out`]: the summary to stdout, a refusal to stderr (JSON under
//! `--events jsonl`).

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use fuseforks_core::village::{Credential, Language, ModelTemplate, Provider, TemplateId};
use fuseforks_core::village::{EndpointProblem, EndpointSecurity, endpoint_security};
use fuseforks_core::village::{FoundingReport, found_village_with};
use fuseforks_core::village::{PRESETS, ProviderPreset, preset};
use fuseforks_host::HostPaths;
use fuseforks_host::secret_names::env_var_name;

use crate::exit;
use crate::output::Out;

/// What `init --help` says of the providers and `--base-url`, after the examples.
pub(crate) const PROVIDERS: &str = "\
Providers: openai, openai-responses, anthropic, gemini, xai, meta, perplexity, ollama, lmstudio.
--base-url points the template at another server (with --model, required then); without
--provider its wire is detected from the URL (api.anthropic.com: anthropic, else
OpenAI-compatible) and the template is named `local` (loopback) or `custom`. A loopback server
needs no key unless --credential keyring says so; plain http to another host is refused unless
--allow-insecure-http. The model can be changed later in world.json (modelTemplates[0].model).";

/// Arguments of `init`.
#[derive(Debug, Args)]
pub(crate) struct InitArgs {
    /// The data folder; the village goes into DATA_DIR/workspace. Required: there is no default.
    #[arg(long, value_name = "DATA_DIR")]
    data_dir: PathBuf,
    /// Language of the agents' model-facing text [default: from LANG / LC_ALL, else en].
    #[arg(long, value_enum)]
    language: Option<LanguageArg>,
    /// Provider of the first model template [default: openai; with --base-url: detected].
    #[arg(long, value_parser = provider_keys())]
    provider: Option<String>,
    /// The server's API base URL (e.g. http://127.0.0.1:11434/v1), instead of the provider's.
    #[arg(long, value_name = "URL", requires = "model")]
    base_url: Option<String>,
    /// The model name sent to the server, instead of the provider's starting model.
    #[arg(long, value_name = "NAME", value_parser = model_name)]
    model: Option<String>,
    /// Whether the server needs an API key [default: not-required for a loopback --base-url,
    /// else the provider's (keyring)].
    #[arg(long, value_enum)]
    credential: Option<CredentialArg>,
    /// Allow plain http to a host that is not this machine (a model server on your LAN): the
    /// key and the conversation then travel unencrypted.
    #[arg(long)]
    allow_insecure_http: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum LanguageArg {
    Ja,
    En,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CredentialArg {
    /// The key lives in the secret store (or a FUSEFORKS_SECRET_* variable).
    Keyring,
    /// The server takes no key.
    NotRequired,
}

fn provider_keys() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(PRESETS.iter().map(|p| p.key))
}

/// A model name: 1 to 256 characters, no spaces or control characters (it goes into a JSON
/// body, and into the URL path on the Gemini wire).
fn model_name(text: &str) -> Result<String, String> {
    let name = text.trim();
    if name.is_empty() || name.chars().count() > 256 {
        return Err("the model name must be 1 to 256 characters".into());
    }
    if name
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '?' | '#'))
    {
        return Err("the model name may not hold spaces, control characters, ? or #".into());
    }
    Ok(name.to_owned())
}

/// Runs `init`; returns the exit code.
pub(crate) fn run(args: &InitArgs, out: &Out) -> u8 {
    let language = match args.language {
        Some(LanguageArg::Ja) => Language::Ja,
        Some(LanguageArg::En) => Language::En,
        None => Language::from_locale(os_locale().as_deref()),
    };
    let template = match first_template(args) {
        Ok(t) => t,
        Err((code, message, fix)) => {
            out.cli("error", code, &message, Some(&fix));
            return exit::USAGE;
        }
    };
    let paths = HostPaths::new(&args.data_dir);
    match found_village_with(&paths.village(), language, &template) {
        Ok(report) => {
            out.result(&summary(&paths, &template, &report));
            exit::OK
        }
        Err(err) => {
            out.error(&err);
            exit::for_village_error(&err)
        }
    }
}

/// What a refused template is: code, message, fix.
type Refusal = (&'static str, String, String);

/// The first template: the provider's preset, with `--base-url`, `--model`, `--credential`
/// applied and the endpoint rule checked (nothing is written when it refuses).
fn first_template(args: &InitArgs) -> Result<ModelTemplate, Refusal> {
    let chosen = args.provider.as_deref().and_then(preset);
    let fallback = preset("openai");
    let Some(base) = chosen.or(fallback) else {
        // clap has already refused unknown values; this cannot be reached from the command line.
        return Err(("USAGE", "unknown provider".into(), "see --help".into()));
    };
    let Some(base_url) = args.base_url.as_deref().map(str::trim) else {
        let mut t = preset_template(base, base.template_id, base.name, base.base_url)?;
        if let Some(model) = &args.model {
            t.model.clone_from(model);
        }
        if let Some(credential) = args.credential {
            t.credential = credential_of(credential);
        }
        return Ok(t);
    };
    let security = endpoint_security(base_url, args.allow_insecure_http).map_err(|problem| {
        let fix = match problem {
            EndpointProblem::Invalid { .. } | EndpointProblem::Demo { .. } => {
                "give an absolute URL such as https://api.example.com/v1 or http://127.0.0.1:11434/v1"
            }
            EndpointProblem::Insecure { .. } => {
                "use https, or pass --allow-insecure-http for a model server on your own network (the key then travels in clear text)"
            }
        };
        (problem.code(), problem.to_string(), fix.to_owned())
    })?;
    let loopback = security == EndpointSecurity::Loopback;
    let host = host_of(base_url);
    let (id, name) = match chosen {
        Some(p) => (p.template_id, p.name.to_owned()),
        None if loopback => ("local", format!("Local server ({host})")),
        None => ("custom", format!("Server at {host}")),
    };
    let mut t = preset_template(base, id, &name, base_url)?;
    if chosen.is_none() {
        t.provider = Some(Provider::detect_from_base_url(base_url));
    }
    if let Some(model) = &args.model {
        t.model.clone_from(model);
    }
    t.credential = match args.credential {
        Some(c) => credential_of(c),
        None if loopback => Credential::NotRequired,
        None => Credential::Keyring,
    };
    t.allow_insecure_http = security == EndpointSecurity::InsecureAllowed;
    Ok(t)
}

fn preset_template(
    preset: &ProviderPreset,
    id: &str,
    name: &str,
    base_url: &str,
) -> Result<ModelTemplate, Refusal> {
    let id = TemplateId::new(id).map_err(|e| {
        let fix = crate::remedy::of(&e).unwrap_or_else(|| "see --help".into());
        ("USAGE", e.to_string(), fix)
    })?;
    let mut t = ModelTemplate::new(id, name, base_url, preset.model);
    t.provider = Some(preset.provider);
    t.credential = preset.credential;
    Ok(t)
}

fn credential_of(arg: CredentialArg) -> Credential {
    match arg {
        CredentialArg::Keyring => Credential::Keyring,
        CredentialArg::NotRequired => Credential::NotRequired,
    }
}

/// `host[:port]` of a URL the endpoint rule accepted (for the template's display name).
fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    authority.rsplit_once('@').map_or(authority, |(_, h)| h)
}

fn os_locale() -> Option<String> {
    ["LC_ALL", "LC_MESSAGES", "LANG"]
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .find(|value| !value.trim().is_empty())
}

fn summary(paths: &HostPaths, template: &ModelTemplate, report: &FoundingReport) -> String {
    let data_dir = fuseforks_host::paths::shell_word(&paths.data_dir().display().to_string());
    let mut out = String::new();
    let _ = writeln!(out, "Founded a village in {}", report.workspace.display());
    let _ = writeln!(out, "  village id: {}", report.village_id);
    let _ = writeln!(
        out,
        "  template:   {} ({} at {} via {}, model {})",
        report.template_id,
        template.name,
        template.base_url,
        template.provider().as_str(),
        template.model
    );
    let _ = writeln!(out, "  reception:  {}", report.reception);
    for file in &report.created {
        let _ = writeln!(out, "  created:    {}", file.display());
    }
    for file in &report.kept {
        let _ = writeln!(out, "  kept:       {} (already there)", file.display());
    }
    let _ = writeln!(out, "\nNext:");
    let id = report.template_id.as_str();
    let secrets = if report.credential == Credential::NotRequired {
        let _ = writeln!(
            out,
            "  1. The template {id} needs no API key: start the server at {} (model {}) if it is not running.",
            template.base_url, template.model
        );
        // Nothing to read from the OS keyring: the environment store always opens.
        " --secrets env"
    } else {
        let _ = writeln!(
            out,
            "  1. Give the template {id} its API key (it never goes into world.json), in the OS secret store:\n       fuseforks-cli secrets set {id} --data-dir {data_dir}\n     or in the environment, and add --secrets env to the commands below:\n       export {}=<your API key>",
            env_var_name(id)
        );
        ""
    };
    let _ = writeln!(
        out,
        "  2. Check it; --probe-endpoints also tries the server and the key once (without it, check calls nothing):\n       fuseforks-cli check --for ask --data-dir {data_dir} --start reception{secrets} --probe-endpoints"
    );
    let _ = writeln!(
        out,
        "  3. Ask the reception something:\n       fuseforks-cli ask --data-dir {data_dir} --start reception{secrets} \"Hello\""
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

#[cfg(test)]
mod tests {
    use super::*;

    fn args(extra: &[&str]) -> InitArgs {
        use clap::{FromArgMatches, Parser};
        #[derive(Parser)]
        struct Wrap {
            #[command(flatten)]
            init: InitArgs,
        }
        let mut all = vec!["x", "--data-dir", "/nowhere"];
        all.extend_from_slice(extra);
        let matches = <Wrap as clap::CommandFactory>::command().get_matches_from(all);
        Wrap::from_arg_matches(&matches).map(|w| w.init).unwrap()
    }

    #[test]
    fn model_names_are_checked() {
        assert_eq!(model_name(" qwen3:8b ").as_deref(), Ok("qwen3:8b"));
        assert!(model_name("meta-llama/Llama-3-8B").is_ok());
        for bad in [
            "",
            "  ",
            "two words",
            "a?b",
            "a#b",
            "tab\there",
            &"x".repeat(257),
        ] {
            assert!(model_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn templates_from_the_flags() {
        let t = first_template(&args(&[
            "--base-url",
            "http://127.0.0.1:8080/v1",
            "--model",
            "m",
        ]))
        .unwrap();
        assert_eq!(
            (t.id.as_str(), t.credential),
            ("local", Credential::NotRequired)
        );
        assert_eq!(t.name, "Local server (127.0.0.1:8080)");
        assert!(!t.allow_insecure_http);

        let t = first_template(&args(&[
            "--base-url",
            "https://api.anthropic.com/v1",
            "--model",
            "claude-x",
        ]))
        .unwrap();
        assert_eq!(
            (t.id.as_str(), t.provider()),
            ("custom", Provider::Anthropic)
        );
        assert_eq!(t.credential, Credential::Keyring);

        let t = first_template(&args(&[
            "--provider",
            "ollama",
            "--base-url",
            "http://localhost:11500/v1",
            "--model",
            "qwen3",
            "--credential",
            "keyring",
        ]))
        .unwrap();
        assert_eq!(
            (t.id.as_str(), t.credential),
            ("ollama", Credential::Keyring)
        );

        let t = first_template(&args(&[])).unwrap();
        assert_eq!((t.id.as_str(), t.model.as_str()), ("openai", "gpt-5-mini"));

        let refused = first_template(&args(&["--base-url", "http://10.0.0.2/v1", "--model", "m"]));
        let (code, message, fix) = refused.unwrap_err();
        assert_eq!(code, "ENDPOINT_INSECURE");
        assert!(
            !message.starts_with('['),
            "no code in the message: {message}"
        );
        assert!(fix.contains("--allow-insecure-http"));
    }
}
