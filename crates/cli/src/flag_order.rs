//! Flags that every command of a group takes (`--data-dir`, `--json`, `--secrets`) are accepted
//! before the subcommand too: `fuseforks-cli --data-dir D sessions list` and
//! `sessions --data-dir D list` mean `sessions list --data-dir D`. The grammar stays one flag
//! per leaf command; the words are only put in the place the grammar expects, before parsing.

/// The flags moved to the leaf command, and whether each takes a value.
const MOVED: &[(&str, bool)] = &[("--data-dir", true), ("--json", false), ("--secrets", true)];

/// `args` (program name first) with every [`MOVED`] flag met before the leaf subcommand put
/// right after it. Nothing after `--` is touched; without a leaf, the flags go at the end.
pub(crate) fn to_leaf(args: &[String], root: &clap::Command) -> Vec<String> {
    let mut out: Vec<String> = args.iter().take(1).cloned().collect();
    let mut moved = Vec::new();
    let mut command = root;
    let mut rest = args.iter().skip(1);
    while let Some(word) = rest.next() {
        if word == "--" {
            out.push(word.clone());
            break;
        }
        if let Some(sub) = command.find_subcommand(word) {
            out.push(word.clone());
            command = sub;
            if !command.has_subcommands() {
                break;
            }
            continue;
        }
        match moved_flag(word) {
            Some(takes_value) => {
                moved.push(word.clone());
                if takes_value && !word.contains('=') {
                    moved.extend(rest.next().cloned());
                }
            }
            None => out.push(word.clone()),
        }
    }
    let at = out.len();
    out.extend(rest.cloned());
    if command.has_subcommands() {
        out.extend(moved);
    } else {
        out.splice(at..at, moved);
    }
    out
}

/// Whether `word` is a moved flag (`--data-dir`, `--data-dir=D`), and whether it takes a value.
fn moved_flag(word: &str) -> Option<bool> {
    let name = word.split_once('=').map_or(word, |(name, _)| name);
    MOVED
        .iter()
        .find(|(flag, _)| *flag == name)
        .map(|(_, takes_value)| *takes_value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grammar() -> clap::Command {
        clap::Command::new("f")
            .subcommand(
                clap::Command::new("sessions")
                    .subcommand(clap::Command::new("list"))
                    .subcommand(clap::Command::new("show")),
            )
            .subcommand(clap::Command::new("ask"))
    }

    fn moved(line: &str) -> String {
        let args: Vec<String> = line.split(' ').map(str::to_owned).collect();
        to_leaf(&args, &grammar()).join(" ")
    }

    #[test]
    fn flags_before_the_leaf_go_right_after_it() {
        assert_eq!(
            moved("f sessions --data-dir D list --json"),
            "f sessions list --data-dir D --json"
        );
        assert_eq!(
            moved("f --data-dir D --json sessions show X"),
            "f sessions show --data-dir D --json X"
        );
        assert_eq!(
            moved("f sessions --data-dir=D list"),
            "f sessions list --data-dir=D"
        );
        assert_eq!(
            moved("f --secrets env ask --data-dir D hi"),
            "f ask --secrets env --data-dir D hi"
        );
        assert_eq!(
            moved("f --events jsonl sessions list"),
            "f --events jsonl sessions list"
        );
    }

    #[test]
    fn words_after_the_leaf_or_a_double_dash_stay() {
        assert_eq!(moved("f ask -- --data-dir x"), "f ask -- --data-dir x");
        assert_eq!(moved("f ask hi --data-dir D"), "f ask hi --data-dir D");
        assert_eq!(moved("f -- --json sessions"), "f -- --json sessions");
        assert_eq!(moved("f sessions --data-dir D"), "f sessions --data-dir D");
    }
}
