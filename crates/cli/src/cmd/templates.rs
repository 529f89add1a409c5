//! `fuseforks-cli templates list|add|set|remove --data-dir D`: the village's model templates
//! from the command line, each change through the host's one edit path (`cmd::world_edit`:
//! checked — the endpoint rule included —, written, audited; exit 4 while a process holds the
//! village). A template a servant or judge uses is not removed (they are named). Keys are
//! never taken here: `fuseforks-cli secrets set TEMPLATE_ID` stores them.

use clap::{Args, Subcommand, ValueEnum};
use fuseforks_core::CoreError;
use fuseforks_core::orchestrator::TemplateSettings;
use fuseforks_core::village::{
    Credential, EndpointSecurity, ModelTemplate, Provider, TemplateId, World, endpoint_security,
};
use fuseforks_host::world_edit::TemplateEdit;
use serde::Serialize;

use super::world_edit::{Edit, EditPlace, Place, print_json, read_world, run as edit};
use crate::exit;
use crate::output::Out;
use crate::terminal::for_stdout;

/// Arguments of `templates`.
#[derive(Debug, Args)]
pub(crate) struct TemplatesArgs {
    #[command(subcommand)]
    pub action: TemplatesAction,
}

/// What `templates` does.
#[derive(Debug, Subcommand)]
pub(crate) enum TemplatesAction {
    /// The templates: id, wire, model, base URL, credential, who uses each.
    List {
        #[command(flatten)]
        place: Place,
        /// Print `{"templates":[…]}` on stdout.
        #[arg(long)]
        json: bool,
    },
    /// A new template (exit 11 when the id is taken). Its key: `secrets set ID`.
    Add(AddArgs),
    /// Change a template's settings.
    Set {
        /// The template.
        id: String,
        /// The server's API base URL.
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        /// The model name.
        #[arg(long, value_name = "NAME")]
        model: Option<String>,
        /// The wire.
        #[arg(long, value_parser = wires())]
        wire: Option<String>,
        /// Its display name.
        #[arg(long)]
        name: Option<String>,
        /// Whether the server needs a key.
        #[arg(long, value_enum)]
        credential: Option<CredentialArg>,
        #[command(flatten)]
        fields: Fields,
        #[command(flatten)]
        place: EditPlace,
    },
    /// Remove a template no servant or judge uses.
    Remove {
        /// The template.
        id: String,
        #[command(flatten)]
        place: EditPlace,
    },
}

/// Arguments of `templates add`.
#[derive(Debug, Args)]
pub(crate) struct AddArgs {
    /// Its id (also the secret-store key of its API key).
    id: String,
    /// The server's API base URL (e.g. https://api.openai.com/v1).
    #[arg(long, value_name = "URL")]
    base_url: String,
    /// The model name sent to the server.
    #[arg(long, value_name = "NAME")]
    model: String,
    /// The wire [default: detected from the URL: api.anthropic.com is anthropic, else
    /// open_ai_compat].
    #[arg(long, value_parser = wires())]
    wire: Option<String>,
    /// Its display name [default: the id].
    #[arg(long)]
    name: Option<String>,
    /// Whether the server needs a key [default: not-required for loopback, else keyring].
    #[arg(long, value_enum)]
    credential: Option<CredentialArg>,
    #[command(flatten)]
    fields: Fields,
    #[command(flatten)]
    place: EditPlace,
}

/// `--credential`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CredentialArg {
    /// The key lives in the secret store under the template id (`secrets set ID`).
    Keyring,
    /// The server takes no key.
    NotRequired,
}

/// The limits and switches `add` and `set` both take.
#[derive(Debug, Args)]
pub(crate) struct Fields {
    /// Context window in tokens.
    #[arg(long, value_name = "TOKENS")]
    context_length: Option<u64>,
    /// Output cap in tokens.
    #[arg(long, value_name = "TOKENS")]
    max_output_tokens: Option<u32>,
    /// Sampling temperature (0 to 2).
    #[arg(long, value_name = "T")]
    temperature: Option<f64>,
    /// Seconds before a request times out.
    #[arg(long, value_name = "SECS")]
    timeout_secs: Option<u64>,
    /// Total attempts per call (first try included).
    #[arg(long, value_name = "N")]
    max_retries: Option<u32>,
    /// Native tool calling (false: tools described in the prompt).
    #[arg(long, value_name = "BOOL")]
    use_tools: Option<bool>,
    /// Streamed answers.
    #[arg(long, value_name = "BOOL")]
    streaming: Option<bool>,
    /// Allow plain http to a host that is not this machine (the key travels unencrypted).
    #[arg(long, value_name = "BOOL")]
    allow_insecure_http: Option<bool>,
    /// Price per million input tokens ($).
    #[arg(long, value_name = "USD")]
    input_per_mtok: Option<f64>,
    /// Price per million output tokens ($).
    #[arg(long, value_name = "USD")]
    output_per_mtok: Option<f64>,
}

impl Fields {
    fn settings(&self) -> TemplateSettings {
        TemplateSettings {
            context_length: self.context_length,
            max_output_tokens: self.max_output_tokens,
            temperature: self.temperature.map(Some),
            request_timeout_secs: self.timeout_secs,
            max_retries: self.max_retries,
            use_tools: self.use_tools,
            streaming: self.streaming,
            allow_insecure_http: self.allow_insecure_http,
            input_per_mtok: self.input_per_mtok.map(Some),
            output_per_mtok: self.output_per_mtok.map(Some),
            ..TemplateSettings::default()
        }
    }
}

/// The wires a person may choose (`demo` is written by `fuseforks-cli demo` alone).
fn wires() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        Provider::ALL
            .into_iter()
            .filter(|p| *p != Provider::Demo)
            .map(Provider::as_str),
    )
}

fn wire(text: Option<&String>) -> Option<Provider> {
    text.and_then(|w| Provider::ALL.into_iter().find(|p| p.as_str() == w))
}

fn credential(arg: CredentialArg) -> Credential {
    match arg {
        CredentialArg::Keyring => Credential::Keyring,
        CredentialArg::NotRequired => Credential::NotRequired,
    }
}

/// Runs `templates`.
pub(crate) fn run(args: &TemplatesArgs, out: &Out) -> u8 {
    match &args.action {
        TemplatesAction::List { place, json } => list(place, *json, out),
        TemplatesAction::Add(add) => match new_template(add) {
            Ok(t) => edit(
                &add.place,
                Edit::Template(TemplateEdit::Add(t)),
                out,
                |_| {
                    let id = &add.id;
                    format!(
                        "added: template {id} (its key, when it needs one: `fuseforks-cli secrets set {id}`)"
                    )
                },
            ),
            Err(e) => {
                out.error(&e);
                exit::USAGE
            }
        },
        TemplatesAction::Set {
            id,
            base_url,
            model,
            wire: w,
            name,
            credential: c,
            fields,
            place,
        } => {
            let settings = TemplateSettings {
                name: name.clone(),
                provider: wire(w.as_ref()),
                base_url: base_url.clone(),
                model: model.clone(),
                credential: c.map(credential),
                ..fields.settings()
            };
            let change = TemplateEdit::Set {
                id: id.clone(),
                settings,
            };
            edit(place, Edit::Template(change), out, |_| {
                format!("set: template {id}")
            })
        }
        TemplatesAction::Remove { id, place } => {
            let change = TemplateEdit::Remove { id: id.clone() };
            edit(place, Edit::Template(change), out, |_| {
                format!("removed: template {id}")
            })
        }
    }
}

/// The template `add` describes, on the model's defaults (the core checks it as it writes).
fn new_template(add: &AddArgs) -> Result<Box<ModelTemplate>, CoreError> {
    let id = TemplateId::new(add.id.as_str())
        .map_err(|e| fuseforks_core::orchestrator::template_id_refused(&e))?;
    let base_url = add.base_url.trim();
    let name = add.name.clone().unwrap_or_else(|| add.id.clone());
    let mut t = ModelTemplate::new(id, name, base_url, add.model.trim());
    t.provider =
        Some(wire(add.wire.as_ref()).unwrap_or_else(|| Provider::detect_from_base_url(base_url)));
    let loopback = matches!(
        endpoint_security(base_url, false),
        Ok(EndpointSecurity::Loopback)
    );
    t.credential = match add.credential {
        Some(c) => credential(c),
        None if loopback => Credential::NotRequired,
        None => Credential::Keyring,
    };
    // The same settings as `set`, so that both fill a template alike.
    add.fields.settings().apply(&mut t);
    Ok(Box::new(t))
}

/// `templates list --json`.
#[derive(Debug, Serialize)]
struct TemplateList {
    templates: Vec<TemplateRow>,
}

/// One template as `list --json` gives it (never a key).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct TemplateRow {
    id: String,
    name: String,
    wire: &'static str,
    base_url: String,
    model: String,
    credential: Credential,
    context_length: u64,
    max_output_tokens: u32,
    /// The servants and judges that think with it.
    used_by: Vec<String>,
}

fn rows(world: &World) -> TemplateList {
    let templates = world
        .model_templates
        .iter()
        .map(|t| TemplateRow {
            id: t.id.as_str().to_owned(),
            name: t.name.clone(),
            wire: t.provider().as_str(),
            base_url: t.base_url.clone(),
            model: t.model.clone(),
            credential: t.credential,
            context_length: t.context_length,
            max_output_tokens: t.max_output_tokens,
            used_by: fuseforks_core::orchestrator::template_users(world, t.id.as_str()),
        })
        .collect();
    TemplateList { templates }
}

fn list(place: &Place, as_json: bool, out: &Out) -> u8 {
    let world = match read_world(&place.data_dir, out) {
        Ok(w) => w,
        Err(code) => return code,
    };
    let list = rows(&world);
    if as_json {
        return print_json(&list, out);
    }
    if list.templates.is_empty() {
        out.result("no model templates (world.json `modelTemplates` is empty)\n");
    }
    for t in &list.templates {
        let used = match t.used_by.is_empty() {
            true => "-".to_owned(),
            false => t.used_by.join(", "),
        };
        let line = format!(
            "{}  {}  {}  {}  {}  key: {}  used by: {used}",
            t.id,
            t.name,
            t.wire,
            t.model,
            t.base_url,
            credential_word(t.credential),
        );
        out.result(&format!("{}\n", for_stdout(&line)));
    }
    exit::OK
}

fn credential_word(c: Credential) -> &'static str {
    match c {
        Credential::Keyring => "keyring",
        Credential::NotRequired => "not required",
        Credential::Unset => "unset",
    }
}
