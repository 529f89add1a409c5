//! The CLI's words for a fix: core's [`Fix`] and a preflight finding name the person's action
//! as a [`Remedy`]; here it becomes the exact command to type, followed by the fix's own
//! surface-neutral words.

use fuseforks_core::preflight::{Finding, env_var_name};
use fuseforks_core::village::Language;
use fuseforks_core::{Fix, Remedy};

/// A fix as the CLI says it: the remedy's command, then the rest of the fix.
pub(crate) fn fix_words(fix: &Fix) -> String {
    let Some(remedy) = &fix.remedy else {
        return fix.change.clone();
    };
    let command = command_phrase(remedy);
    if fix.change.is_empty() {
        command
    } else {
        format!("{command} {}", fix.change)
    }
}

/// The fix of a typed error in the CLI's words, where it has one.
pub(crate) fn of(err: &dyn fuseforks_core::Coded) -> Option<String> {
    err.fix().as_ref().map(fix_words)
}

/// The remedy as a clause of an error's fix (English, lower case).
fn command_phrase(remedy: &Remedy) -> String {
    match remedy {
        Remedy::StoreSecret { name, env } => {
            let set = format!("store the key with `fuseforks-cli secrets set {name} --data-dir D`");
            if *env {
                format!("{set}, or set {} with --secrets env", env_var_name(name))
            } else {
                set
            }
        }
        Remedy::ApproveProbe { .. } => format!("approve it with `{}`", approve(remedy)),
        Remedy::MakeReception => {
            "make a servant the reception (`fuseforks-cli servants set ID --reception`)".into()
        }
        Remedy::ValidateJudge => "run `fuseforks-cli judge validate`".into(),
        Remedy::FoundVillage => "run `fuseforks-cli init --data-dir <DIR>`".into(),
        Remedy::RunDemo => "run `fuseforks-cli demo` again for a new demo village".into(),
        Remedy::Resume => "resume (`fuseforks-cli resume --data-dir D`)".into(),
        Remedy::ListServants => "list them with `fuseforks-cli servants list --data-dir D`".into(),
        Remedy::AddTemplate { id } => format!(
            "add the template (`fuseforks-cli templates add {} --base-url URL --model NAME`)",
            id.as_deref().unwrap_or("ID")
        ),
        Remedy::RetemplateServant => {
            "point those servants (`fuseforks-cli servants set ID --template T`)".into()
        }
        Remedy::CloseOtherProcess => {
            "close the other Fuseforks (GUI or fuseforks-cli) using this village".into()
        }
        Remedy::DataDir => "--data-dir".into(),
    }
}

/// `schedules approve` for a probe remedy.
fn approve(remedy: &Remedy) -> String {
    match remedy {
        Remedy::ApproveProbe {
            schedule,
            acceptance,
        } => format!(
            "fuseforks-cli schedules approve --data-dir DATA_DIR {schedule}{}",
            if *acceptance { " --acceptance" } else { "" }
        ),
        _ => String::new(),
    }
}

/// A preflight finding's fix in the CLI's words and the report's language: the remedy's
/// sentence, then the finding's own words.
pub(crate) fn finding_fix(f: &Finding, l: Language) -> String {
    let Some(remedy) = &f.remedy else {
        return f.fix.clone();
    };
    let said = sentence(remedy, l);
    match (f.fix.is_empty(), l) {
        (true, _) => said,
        (false, Language::Ja) => format!("{said}{}", f.fix),
        (false, Language::En) => format!("{said} {}", f.fix),
    }
}

/// The remedy as a whole sentence of a finding's fix.
fn sentence(remedy: &Remedy, l: Language) -> String {
    match remedy {
        Remedy::StoreSecret { name, env } => {
            let cmd = format!("`fuseforks-cli secrets set {name} --data-dir <DIR>`");
            let var = env_var_name(name);
            match (l, env) {
                (Language::Ja, true) => format!(
                    "{cmd} で資格情報ストアに置くか、環境変数 {var} を設定して --secrets env を付けてください。"
                ),
                (Language::Ja, false) => format!("{cmd} で資格情報ストアに置いてください。"),
                (Language::En, true) => {
                    format!("Store it with {cmd}, or set {var} and pass --secrets env.")
                }
                (Language::En, false) => format!("Store it with {cmd}."),
            }
        }
        Remedy::ApproveProbe { .. } => l.pick(
            format!("{} で承認してください（GUI でも可）。", approve(remedy)),
            format!("Approve it: {} (or in the GUI).", approve(remedy)),
        ),
        Remedy::MakeReception => l.pick(
            "受付にする個体を決めてください（fuseforks-cli servants set ID --reception）。",
            "Make a servant the reception: fuseforks-cli servants set ID --reception.",
        ),
        Remedy::ValidateJudge => l.pick(
            "fuseforks-cli judge validate で全ての指摘を見てください。",
            "Run fuseforks-cli judge validate for every finding.",
        ),
        Remedy::FoundVillage => l.pick(
            "本物の村は `fuseforks-cli init` で作ってください。",
            "Found a real village with `fuseforks-cli init`.",
        ),
        Remedy::RunDemo => l.pick(
            "新しいデモの村は `fuseforks-cli demo` で作れます。",
            "Run `fuseforks-cli demo` again for a new demo village.",
        ),
        other => {
            let phrase = command_phrase(other);
            l.pick(phrase.clone(), phrase)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fix_is_the_command_then_its_own_words() {
        let fix = Fix::remedy(
            Remedy::FoundVillage,
            "or point at an existing village's folder",
        );
        assert_eq!(
            fix_words(&fix),
            "run `fuseforks-cli init --data-dir <DIR>` or point at an existing village's folder"
        );
        assert_eq!(fix_words(&Fix::from("pick another id")), "pick another id");
    }
}
