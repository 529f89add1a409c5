//! `fuseforks-cli servants list|add|connect|disconnect|set|remove --data-dir D`: the village's
//! servants from the command line, each change through the same core edit as the GUI's
//! servant controls (`cmd::world_edit`: checked, written, audited; exit 4 while a process
//! holds the village). `list` reads `world.json` only (a table, or `--json`).

use clap::{Args, Subcommand};
use fuseforks_core::orchestrator::ServantSettings;
use fuseforks_core::village::World;
use fuseforks_host::world_edit::{CastEdit, EditDone};
use serde::Serialize;

use super::world_edit::{Edit, EditPlace, Place, comma_list, print_json, read_world, run as edit};
use crate::exit;
use crate::output::Out;
use crate::terminal::for_stdout;

/// Arguments of `servants`.
#[derive(Debug, Args)]
pub(crate) struct ServantsArgs {
    #[command(subcommand)]
    pub action: ServantsAction,
}

/// What `servants` does.
#[derive(Debug, Subcommand)]
pub(crate) enum ServantsAction {
    /// The servants: id, name, template, role, group, work folder, tools, edges.
    List {
        #[command(flatten)]
        place: Place,
        /// Print `{"reception":…,"servants":[…]}` on stdout.
        #[arg(long)]
        json: bool,
    },
    /// A new servant (exit 11 when the id is taken; nothing is written on a refusal).
    Add {
        /// Its id: 1-64 characters from A-Z a-z 0-9 _ - (also its folder's name).
        id: String,
        /// Its name (1 to 60 characters).
        #[arg(long)]
        name: String,
        /// The model template it thinks with [default: the role's, else the reception's].
        #[arg(long, value_name = "TEMPLATE")]
        template: Option<String>,
        /// A role of world.json `roles`: its Construct text, template, tools and tool rounds.
        #[arg(long, value_name = "ROLE")]
        from_role: Option<String>,
        #[command(flatten)]
        fields: Fields,
        #[command(flatten)]
        place: EditPlace,
    },
    /// Draw the edge FROM -> TO (FROM may then ask TO; TO may be a judge).
    Connect {
        /// Who may ask.
        from: String,
        /// Whom.
        to: String,
        #[command(flatten)]
        place: EditPlace,
    },
    /// Remove the edge FROM -> TO.
    Disconnect {
        /// Who could ask.
        from: String,
        /// Whom.
        to: String,
        #[command(flatten)]
        place: EditPlace,
    },
    /// Change a servant's name, template, work folder, tools, tool rounds, group or switches, or
    /// make it the reception.
    Set {
        /// The servant.
        id: String,
        /// Its new name.
        #[arg(long)]
        name: Option<String>,
        /// The model template it thinks with.
        #[arg(long, value_name = "TEMPLATE")]
        template: Option<String>,
        #[command(flatten)]
        fields: Fields,
        /// No work folder.
        #[arg(long, conflicts_with = "work_dir")]
        no_work_dir: bool,
        /// The default tools instead of a list.
        #[arg(long, conflicts_with = "tools")]
        default_tools: bool,
        /// No group.
        #[arg(long, conflicts_with = "group")]
        no_group: bool,
        /// Make it the village's reception (the servant `ask` and the door talk to).
        #[arg(long)]
        reception: bool,
        #[command(flatten)]
        place: EditPlace,
    },
    /// Delete a servant: its folder to the trash, the edges to it cleared (the reception too,
    /// when it was the reception: said with the fix).
    Remove {
        /// The servant.
        id: String,
        #[command(flatten)]
        place: EditPlace,
    },
}

/// The settings `add` and `set` both take.
#[derive(Debug, Args)]
pub(crate) struct Fields {
    /// Its work folder: an absolute path apart from the village's folder.
    #[arg(long, value_name = "DIR")]
    work_dir: Option<String>,
    /// The bundled tools it is offered, comma-separated (e.g. file,grep).
    #[arg(long, value_name = "A,B")]
    tools: Option<String>,
    /// Tool rounds per turn (1-255).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=255))]
    max_tool_rounds: Option<u8>,
    /// A group of world.json `groups`.
    #[arg(long, value_name = "GROUP")]
    group: Option<String>,
    /// Its plan waves wait for a person's review.
    #[arg(long, value_name = "BOOL")]
    plan_review: Option<bool>,
    /// Started by batch start.
    #[arg(long, value_name = "BOOL")]
    batch_start: Option<bool>,
    /// Hears the public square.
    #[arg(long, value_name = "BOOL")]
    hears_square: Option<bool>,
    /// Offered handoffs (`transfer_to_<id>`).
    #[arg(long, value_name = "BOOL")]
    handoff: Option<bool>,
    /// Uses the blackboard.
    #[arg(long, value_name = "BOOL")]
    blackboard: Option<bool>,
}

impl Fields {
    /// These fields as core settings (what is not given stays as it is).
    fn settings(&self, template: Option<&String>) -> ServantSettings {
        ServantSettings {
            model_template_id: template.cloned(),
            work_dir: self.work_dir.clone().map(Some),
            enabled_tools: self.tools.as_deref().map(|t| Some(comma_list(t))),
            max_tool_iterations: self.max_tool_rounds.map(Some),
            group_id: self.group.clone().map(Some),
            plan_review: self.plan_review,
            batch_start: self.batch_start,
            hears_room_log: self.hears_square,
            allow_handoff: self.handoff,
            uses_blackboard: self.blackboard,
            ..ServantSettings::default()
        }
    }
}

/// Runs `servants`.
pub(crate) fn run(args: &ServantsArgs, out: &Out) -> u8 {
    match &args.action {
        ServantsAction::List { place, json } => list(place, *json, out),
        ServantsAction::Add {
            id,
            name,
            template,
            from_role,
            fields,
            place,
        } => {
            let create = CastEdit::Create {
                agent_id: id.clone(),
                name: name.clone(),
                role_id: from_role.clone(),
                settings: fields.settings(template.as_ref()),
            };
            edit(place, Edit::Cast(create), out, |_| format!("added: {id}"))
        }
        ServantsAction::Connect { from, to, place } => connect(from, to, true, place, out),
        ServantsAction::Disconnect { from, to, place } => connect(from, to, false, place, out),
        ServantsAction::Set {
            id,
            name,
            template,
            fields,
            no_work_dir,
            default_tools,
            no_group,
            reception,
            place,
        } => {
            let mut settings = fields.settings(template.as_ref());
            settings.name.clone_from(name);
            settings.reception = *reception;
            clear_if(*no_work_dir, &mut settings.work_dir);
            clear_if(*default_tools, &mut settings.enabled_tools);
            clear_if(*no_group, &mut settings.group_id);
            let change = CastEdit::Settings {
                agent_id: id.clone(),
                settings,
            };
            edit(place, Edit::Cast(change), out, |_| format!("set: {id}"))
        }
        ServantsAction::Remove { id, place } => remove(id, place, out),
    }
}

/// `--no-…`: the value cleared.
fn clear_if<T>(clear: bool, field: &mut Option<Option<T>>) {
    if clear {
        *field = Some(None);
    }
}

fn connect(from: &str, to: &str, connected: bool, place: &EditPlace, out: &Out) -> u8 {
    let change = CastEdit::Connect {
        from: from.to_owned(),
        to: to.to_owned(),
        connected,
    };
    let word = if connected {
        "connected"
    } else {
        "disconnected"
    };
    edit(place, Edit::Cast(change), out, |_| {
        format!("{word}: {from} -> {to}")
    })
}

fn remove(id: &str, place: &EditPlace, out: &Out) -> u8 {
    let change = CastEdit::Delete {
        agent_id: id.to_owned(),
    };
    edit(place, Edit::Cast(change), out, |done| {
        let mut text = format!("removed: {id}");
        if let EditDone::Deleted {
            trashed,
            named_by,
            was_reception,
        } = done
        {
            if *trashed {
                text.push_str(" (its folder went to the trash)");
            }
            let named = [
                ("schedules", &named_by.schedules),
                ("judges", &named_by.judges),
            ]
            .into_iter()
            .filter(|(_, ids)| !ids.is_empty())
            .map(|(what, ids)| format!("{what} {}", ids.join(", ")))
            .collect::<Vec<_>>();
            if !named.is_empty() {
                text.push_str(&format!(
                    "; still named by {}: edit them",
                    named.join(" and ")
                ));
            }
            if *was_reception {
                out.cli(
                    "warning",
                    "RECEPTION_REMOVED",
                    &format!(
                        "{id} was the reception: the village has none now (`ask` and the door refuse, `check` says RECEPTION_UNSET)"
                    ),
                    Some("make another servant the reception: `fuseforks-cli servants set ID --reception --data-dir D`"),
                );
            }
        }
        text
    })
}

/// `servants list --json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ServantList {
    /// The reception's id.
    reception: Option<String>,
    servants: Vec<ServantRow>,
}

/// One servant as `list --json` gives it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ServantRow {
    id: String,
    name: String,
    template_id: String,
    role_id: Option<String>,
    group_id: Option<String>,
    /// The group's name (`null`: no group, or one `groups` lacks).
    #[serde(skip)]
    group_name: Option<String>,
    work_dir: Option<String>,
    /// `null`: the default tools.
    enabled_tools: Option<Vec<String>>,
    max_tool_iterations: Option<u8>,
    connected: Vec<String>,
    plan_review: bool,
    batch_start: bool,
    hears_room_log: bool,
    allow_handoff: bool,
    uses_blackboard: bool,
}

fn rows(world: &World) -> ServantList {
    let servants = world
        .agents
        .iter()
        .map(|a| ServantRow {
            id: a.id.as_str().to_owned(),
            name: a.name.clone(),
            template_id: a.model_template_id.as_str().to_owned(),
            role_id: a.role_id.clone(),
            group_id: a.group_id.clone(),
            group_name: a.group_id.as_ref().and_then(|g| {
                world
                    .groups
                    .iter()
                    .find(|x| &x.id == g)
                    .map(|x| x.name.clone())
            }),
            work_dir: a.work_dir.clone(),
            enabled_tools: a.enabled_tools.clone(),
            max_tool_iterations: a.max_tool_iterations,
            connected: a
                .connected_agents
                .iter()
                .map(|c| c.as_str().to_owned())
                .collect(),
            plan_review: a.plan_review,
            batch_start: a.batch_start,
            hears_room_log: a.hears_room_log,
            allow_handoff: a.allow_handoff,
            uses_blackboard: a.uses_blackboard,
        })
        .collect();
    ServantList {
        reception: world.reception.as_ref().map(|r| r.as_str().to_owned()),
        servants,
    }
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
    if list.servants.is_empty() {
        out.result("no servants (world.json `agents` is empty)\n");
    }
    for row in &list.servants {
        let line = human_row(row, list.reception.as_deref() == Some(row.id.as_str()));
        out.result(&format!("{}\n", for_stdout(&line)));
    }
    exit::OK
}

/// `id  name  template: T  role: R  group: G  work: DIR  tools: …  -> a, b`.
fn human_row(row: &ServantRow, reception: bool) -> String {
    let or_dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    let tools = row
        .enabled_tools
        .as_ref()
        .map_or_else(|| "default".to_owned(), |t| t.join(","));
    let edges = match row.connected.is_empty() {
        true => "-".to_owned(),
        false => row.connected.join(", "),
    };
    let mark = if reception { "  (reception)" } else { "" };
    format!(
        "{}  {}  template: {}  role: {}  group: {}  work: {}  tools: {tools}  -> {edges}{mark}",
        row.id,
        row.name,
        row.template_id,
        or_dash(&row.role_id),
        or_dash(&row.group_name.clone().or_else(|| row.group_id.clone())),
        or_dash(&row.work_dir),
    )
}
