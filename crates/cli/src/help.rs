//! The text after each subcommand's `--help`: its examples and the exit codes it can return
//! (meanings from `exit::TABLE`), attached to the clap grammar by [`with_help`].

use std::fmt::Write as _;

use crate::exit;

/// One subcommand's `--help` additions.
pub(crate) struct CommandHelp {
    /// The subcommand, as clap names it (kebab-case).
    pub name: &'static str,
    /// (what it does, the command line).
    pub examples: &'static [(&'static str, &'static str)],
    /// The exit codes the subcommand can return, ascending (2: clap's usage errors too).
    pub exits: &'static [u8],
}

/// Every top-level subcommand of `enum Command`, in its order (so that [`with_help`] keeps the
/// order of the grammar's subcommands).
pub(crate) const COMMANDS: &[CommandHelp] = &[
    CommandHelp {
        name: "init",
        examples: &[
            (
                "Found a village with an OpenAI template, in English",
                "fuseforks-cli init --data-dir ~/villages/demo --language en --provider openai",
            ),
            (
                "Japanese agents on an Anthropic template",
                "fuseforks-cli init --data-dir ~/villages/demo --language ja --provider anthropic",
            ),
            (
                "A local Ollama model (no key)",
                "fuseforks-cli init --data-dir ~/villages/local --provider ollama",
            ),
            (
                "A model server on this machine (OpenAI-compatible, no key)",
                "fuseforks-cli init --data-dir ~/villages/local \
                 --base-url http://127.0.0.1:8080/v1 --model qwen3",
            ),
        ],
        exits: &[
            exit::OK,
            exit::USAGE,
            exit::BOOT_FAILED,
            exit::OUTPUT_EXISTS,
        ],
    },
    CommandHelp {
        name: "check",
        examples: &[
            (
                "Check that the reception can answer headless, with keys from the environment",
                "fuseforks-cli check --for ask --data-dir ~/villages/demo --start reception \
                 --secrets env",
            ),
            (
                "Also try each template's server and key once",
                "fuseforks-cli check --for ask --data-dir ~/villages/demo --start reception \
                 --probe-endpoints",
            ),
            (
                "Check the batch agents and the door's port for serve, as JSON",
                "fuseforks-cli check --for serve --data-dir ~/villages/demo --start batch \
                 --door-port 8765 --json",
            ),
        ],
        exits: &[exit::OK, exit::USAGE, exit::REJECTED, exit::BOOT_FAILED],
    },
    CommandHelp {
        name: "ask",
        examples: &[
            (
                "Ask the reception something (the answer alone goes to stdout)",
                "fuseforks-cli ask --data-dir ~/villages/demo --start reception \"Hello\"",
            ),
            (
                "Go on in the current conversation, the answer printed as it is written",
                "fuseforks-cli ask --data-dir ~/villages/demo --start reception --secrets env \
                 --continue-session --stream \"And tomorrow?\"",
            ),
            (
                "A goal loop: ask again until `cat status.txt` prints done (3 attempts at most)",
                "fuseforks-cli ask --data-dir ~/villages/demo --start batch --accept cat \
                 --accept-arg status.txt --expect done --max-attempts 3 \
                 \"Finish the report, then write done into status.txt\"",
            ),
            (
                "Answer the question an ask ended with (exit 15 named the conversation), the \
                 answer from stdin, the result as one JSON object",
                "fuseforks-cli ask --data-dir ~/villages/demo --start reception --output json \
                 --resume 0193a5c2-7d41-7e0a-9f6b-3c2d1e0f4a5b --answer - < answer.txt",
            ),
        ],
        exits: &[
            exit::OK,
            exit::CORE_ERROR,
            exit::USAGE,
            exit::REJECTED,
            exit::LOCKED,
            exit::BOOT_FAILED,
            exit::NO_ANSWER,
            exit::TIMED_OUT,
            exit::INTERRUPTED,
            exit::BUDGET_EXHAUSTED,
            exit::GOAL_NOT_REACHED,
            exit::HALTED,
            exit::NEEDS_INPUT,
        ],
    },
    CommandHelp {
        name: "serve",
        examples: &[
            (
                "Keep the batch agents running until Ctrl+C or SIGTERM, keys from the environment",
                "fuseforks-cli serve --data-dir ~/villages/demo --start batch --secrets env",
            ),
            (
                "Also open the door on port 8765 and the web GUI on port 8766",
                "fuseforks-cli serve --data-dir ~/villages/demo --start batch --door-port 8765 \
                 --gui-port 8766",
            ),
            (
                "Try it out: side-effecting tools only say what they would do",
                "fuseforks-cli serve --data-dir ~/villages/demo --start batch --dry-run --verbose",
            ),
        ],
        exits: &[
            exit::OK,
            exit::CORE_ERROR,
            exit::USAGE,
            exit::REJECTED,
            exit::LOCKED,
            exit::BOOT_FAILED,
            exit::HALTED,
        ],
    },
    CommandHelp {
        name: "gui",
        examples: &[
            (
                "Open the village in the web GUI and in the desktop's browser",
                "fuseforks-cli gui --data-dir ~/villages/demo --open",
            ),
            (
                "On a fixed port, keys from the environment (stdout has the URL with its token)",
                "fuseforks-cli gui --data-dir ~/villages/demo --port 8080 --secrets env",
            ),
        ],
        exits: &[
            exit::OK,
            exit::CORE_ERROR,
            exit::USAGE,
            exit::LOCKED,
            exit::BOOT_FAILED,
        ],
    },
    CommandHelp {
        name: "secrets",
        examples: &[
            (
                "Store the openai template's API key (typed without echo)",
                "fuseforks-cli secrets set openai --data-dir ~/villages/demo",
            ),
            (
                "Store it from stdin instead (one trailing newline is dropped)",
                "fuseforks-cli secrets set openai --stdin --data-dir ~/villages/demo < key.txt",
            ),
            (
                "List the keys the village uses and whether each is present, as JSON",
                "fuseforks-cli secrets list --data-dir ~/villages/demo --json",
            ),
            (
                "Remove a key",
                "fuseforks-cli secrets delete openai --data-dir ~/villages/demo",
            ),
        ],
        exits: &[exit::OK, exit::CORE_ERROR, exit::USAGE, exit::BOOT_FAILED],
    },
    CommandHelp {
        name: "schedules",
        examples: &[
            (
                "List the schedules with their next due time and their probes' approval",
                "fuseforks-cli schedules --data-dir ~/villages/demo",
            ),
            (
                "The same as one JSON object",
                "fuseforks-cli schedules --data-dir ~/villages/demo --json",
            ),
            (
                "Approve the probe of schedule nightly-report (shows it and asks first)",
                "fuseforks-cli schedules approve --data-dir ~/villages/demo nightly-report",
            ),
            (
                "Approve its acceptance probe from a script, without asking",
                "fuseforks-cli schedules approve --data-dir ~/villages/demo nightly-report \
                 --acceptance --yes",
            ),
        ],
        exits: &[
            exit::OK,
            exit::CORE_ERROR,
            exit::USAGE,
            exit::BOOT_FAILED,
            exit::INTERRUPTED,
        ],
    },
    CommandHelp {
        name: "servants",
        examples: &[
            (
                "List the servants with their template, tools and edges",
                "fuseforks-cli servants list --data-dir ~/villages/demo",
            ),
            (
                "Add a servant on template openai with a work folder and two tools",
                "fuseforks-cli servants add writer --name Writer --template openai \
                 --work-dir /srv/texts --tools file,grep --data-dir ~/villages/demo",
            ),
            (
                "Let the reception ask the writer",
                "fuseforks-cli servants connect reception writer --data-dir ~/villages/demo",
            ),
            (
                "Give it more tool rounds",
                "fuseforks-cli servants set writer --max-tool-rounds 20 --data-dir ~/villages/demo",
            ),
        ],
        exits: &[
            exit::OK,
            exit::CORE_ERROR,
            exit::USAGE,
            exit::LOCKED,
            exit::BOOT_FAILED,
            exit::OUTPUT_EXISTS,
        ],
    },
    CommandHelp {
        name: "templates",
        examples: &[
            (
                "List the model templates and who uses each",
                "fuseforks-cli templates list --data-dir ~/villages/demo",
            ),
            (
                "Add a template for a model server on this machine (no key)",
                "fuseforks-cli templates add local --base-url http://127.0.0.1:8080/v1 \
                 --model qwen3 --data-dir ~/villages/demo",
            ),
            (
                "Add an Anthropic template; its key then goes to the keyring",
                "fuseforks-cli templates add claude --wire anthropic \
                 --base-url https://api.anthropic.com/v1 --model claude-sonnet-4-5 \
                 --data-dir ~/villages/demo",
            ),
            (
                "Remove a template no servant uses",
                "fuseforks-cli templates remove local --data-dir ~/villages/demo",
            ),
        ],
        exits: &[
            exit::OK,
            exit::CORE_ERROR,
            exit::USAGE,
            exit::LOCKED,
            exit::BOOT_FAILED,
            exit::OUTPUT_EXISTS,
        ],
    },
    CommandHelp {
        name: "demo",
        examples: &[
            (
                "Watch a village work, with no key and no network (a scripted model, not an AI)",
                "fuseforks-cli demo",
            ),
            (
                "Keep the demo village, in Japanese, with the model slowed down to watch it",
                "fuseforks-cli demo --keep ~/villages/tour --language ja --pace-ms 1500",
            ),
            (
                "The summary as one JSON object",
                "fuseforks-cli demo --json",
            ),
            (
                "Then open the village in the web GUI until Ctrl+C",
                "fuseforks-cli demo --gui",
            ),
        ],
        exits: &[
            exit::OK,
            exit::CORE_ERROR,
            exit::USAGE,
            exit::BOOT_FAILED,
            exit::NO_ANSWER,
            exit::TIMED_OUT,
            exit::INTERRUPTED,
            exit::BUDGET_EXHAUSTED,
            exit::OUTPUT_EXISTS,
        ],
    },
    CommandHelp {
        name: "judge",
        examples: &[
            (
                "Check every judge file of the village",
                "fuseforks-cli judge validate --data-dir ~/villages/demo",
            ),
            (
                "Check two judges, as JSON",
                "fuseforks-cli judge validate --data-dir ~/villages/demo triage tone --json",
            ),
            (
                "Run the judge triage on a sample text (nothing is delivered)",
                "fuseforks-cli judge try --data-dir ~/villages/demo triage \"My invoice is wrong\"",
            ),
            (
                "The sample from stdin, keys from the environment, as JSON",
                "fuseforks-cli judge try --data-dir ~/villages/demo --secrets env --json \
                 triage - < mail.txt",
            ),
        ],
        exits: &[
            exit::OK,
            exit::CORE_ERROR,
            exit::USAGE,
            exit::REJECTED,
            exit::BOOT_FAILED,
            exit::NO_ANSWER,
        ],
    },
    CommandHelp {
        name: "pause",
        examples: &[
            (
                "Hold new model and tool calls (no process running: the next one starts paused)",
                "fuseforks-cli pause --data-dir ~/villages/demo",
            ),
            (
                "Go on afterwards",
                "fuseforks-cli resume --data-dir ~/villages/demo",
            ),
        ],
        exits: &[exit::OK, exit::CORE_ERROR, exit::USAGE, exit::BOOT_FAILED],
    },
    CommandHelp {
        name: "resume",
        examples: &[
            (
                "Go on after a pause, or lift a halt (its marker is removed)",
                "fuseforks-cli resume --data-dir ~/villages/demo",
            ),
            (
                "The same from a script, stderr as JSON lines",
                "fuseforks-cli resume --data-dir ~/villages/demo --events jsonl",
            ),
        ],
        exits: &[exit::OK, exit::CORE_ERROR, exit::USAGE, exit::BOOT_FAILED],
    },
    CommandHelp {
        name: "abort",
        examples: &[
            (
                "Cut every turn now (model calls, run children, MCP calls); the agents stay",
                "fuseforks-cli abort --data-dir ~/villages/demo",
            ),
            (
                "The same from a script, stderr as JSON lines",
                "fuseforks-cli abort --data-dir ~/villages/demo --events jsonl",
            ),
        ],
        exits: &[exit::OK, exit::CORE_ERROR, exit::USAGE, exit::BOOT_FAILED],
    },
    CommandHelp {
        name: "halt",
        examples: &[
            (
                "Abort and stop every agent, the scheduler and the door; stays halted",
                "fuseforks-cli halt --data-dir ~/villages/demo",
            ),
            (
                "Lift the halt later, so that ask and serve start again",
                "fuseforks-cli resume --data-dir ~/villages/demo",
            ),
        ],
        exits: &[exit::OK, exit::CORE_ERROR, exit::USAGE, exit::BOOT_FAILED],
    },
    CommandHelp {
        name: "audit",
        examples: &[
            (
                "Check the audit log's hash chain, its marks and the recorded head",
                "fuseforks-cli audit verify --data-dir ~/villages/demo",
            ),
            (
                "The result as one JSON object (for monitoring)",
                "fuseforks-cli audit verify --data-dir ~/villages/demo --json",
            ),
            (
                "With the key from the environment, after a crash (lines past the head)",
                "fuseforks-cli audit verify --data-dir ~/villages/demo --secrets env --accept-ahead",
            ),
        ],
        exits: &[exit::OK, exit::CORE_ERROR, exit::USAGE, exit::AUDIT_BROKEN],
    },
    CommandHelp {
        name: "sessions",
        examples: &[
            (
                "List the stored conversations, newest first",
                "fuseforks-cli sessions list --data-dir ~/villages/demo",
            ),
            (
                "Export one (ID from the list) as JSON lines into a new file",
                "fuseforks-cli sessions export ID --data-dir ~/villages/demo --out talk.jsonl",
            ),
            (
                "Copy it up to, not including, record 12 (prints the new id)",
                "fuseforks-cli sessions fork ID --before 12 --data-dir ~/villages/demo",
            ),
            (
                "Delete it without asking",
                "fuseforks-cli sessions delete ID --data-dir ~/villages/demo --yes",
            ),
        ],
        exits: &[
            exit::OK,
            exit::USAGE,
            exit::LOCKED,
            exit::BOOT_FAILED,
            exit::INTERRUPTED,
            exit::OUTPUT_EXISTS,
        ],
    },
    CommandHelp {
        name: "stats",
        examples: &[
            (
                "Tokens and ≈ $ of every conversation, by agent",
                "fuseforks-cli stats --data-dir ~/villages/demo",
            ),
            (
                "This calendar month, by model",
                "fuseforks-cli stats --data-dir ~/villages/demo --period month --by model",
            ),
            (
                "One month by how the turns ended, as JSON",
                "fuseforks-cli stats --data-dir ~/villages/demo --period 2026-05 --by stop --json",
            ),
        ],
        exits: &[exit::OK, exit::USAGE, exit::LOCKED, exit::BOOT_FAILED],
    },
    CommandHelp {
        name: "pricing",
        examples: &[
            (
                "Fill the templates' prices from the source in DATA_DIR/pricing.json",
                "fuseforks-cli pricing fetch --data-dir ~/villages/demo",
            ),
            (
                "From a table file, as JSON",
                "fuseforks-cli pricing fetch --data-dir ~/villages/demo --from prices.json --json",
            ),
        ],
        exits: &[
            exit::OK,
            exit::CORE_ERROR,
            exit::USAGE,
            exit::LOCKED,
            exit::BOOT_FAILED,
            exit::TIMED_OUT,
        ],
    },
    CommandHelp {
        name: "completions",
        examples: &[
            (
                "Bash",
                "fuseforks-cli completions bash > ~/.local/share/bash-completion/completions/\
                 fuseforks-cli",
            ),
            (
                "Zsh (a folder on $fpath)",
                "fuseforks-cli completions zsh > ~/.zfunc/_fuseforks-cli",
            ),
            (
                "Fish",
                "fuseforks-cli completions fish > ~/.config/fish/completions/fuseforks-cli.fish",
            ),
        ],
        exits: &[exit::OK, exit::USAGE],
    },
    CommandHelp {
        name: "man",
        examples: &[
            ("Write the man page", "fuseforks-cli man > fuseforks-cli.1"),
            ("Read it now", "fuseforks-cli man | man -l -"),
        ],
        exits: &[exit::OK, exit::CORE_ERROR, exit::USAGE],
    },
    CommandHelp {
        name: "assist",
        examples: &[
            (
                "Draft an agent's SKILL.md in a Q&A on the terminal, then save it after a yes",
                "fuseforks-cli assist --data-dir ~/villages/demo --kind skill --id reception \
                 --template openai --save",
            ),
            (
                "One exchange for a script, as JSON (the draft asked for now)",
                "fuseforks-cli assist --data-dir ~/villages/demo --kind judge --id gate \
                 --template openai --input \"route bugs to the fixer\" --force-draft --json",
            ),
        ],
        exits: &[
            exit::OK,
            exit::USAGE,
            exit::REJECTED,
            exit::LOCKED,
            exit::BOOT_FAILED,
            exit::NO_ANSWER,
            exit::INTERRUPTED,
            exit::OUTPUT_EXISTS,
        ],
    },
    CommandHelp {
        name: "bake",
        examples: &[
            (
                "First bake: a copy for a container, the project folder mapped to /work",
                "fuseforks-cli bake --data-dir ~/villages/demo --out ./container/village \
                 --map /home/me/projects=/work",
            ),
            (
                "Re-bake after changes in the GUI (container state and maps kept)",
                "fuseforks-cli bake --data-dir ~/villages/demo --out ./container/village --update",
            ),
            (
                "Also write the container's .env from the keyring, naming the GUI machine's zone",
                "fuseforks-cli bake --data-dir ~/villages/demo --out ./container/village \
                 --map /home/me/projects=/work --env-out ./container/.env \
                 --source-time-zone Europe/Berlin",
            ),
            (
                "The result as one JSON object",
                "fuseforks-cli bake --data-dir ~/villages/demo --out ./container/village \
                 --update --json",
            ),
        ],
        exits: &[
            exit::OK,
            exit::USAGE,
            exit::REJECTED,
            exit::LOCKED,
            exit::BOOT_FAILED,
            exit::PLAINTEXT_HEADERS,
            exit::OUTPUT_EXISTS,
        ],
    },
];

/// The heading of the codes' paragraph, as `exit::help_table` writes it.
fn codes_heading() -> String {
    exit::help_table()
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// One code's line, as `exit::help_table` writes it, with its meaning from `exit::TABLE`.
fn exit_line(code: u8) -> String {
    let meaning = exit::TABLE
        .iter()
        .find(|(c, _)| *c == code)
        .map_or("", |(_, m)| *m);
    format!("  {code:>2}  {meaning}")
}

/// The `--help` text after the options of the subcommand `name`: its examples, a blank line,
/// then its exit codes with their meanings. `None` for a name not in [`COMMANDS`].
pub(crate) fn after_help(name: &str) -> Option<String> {
    let entry = COMMANDS.iter().find(|c| c.name == name)?;
    let mut text = String::from("Examples:");
    for (what, line) in entry.examples {
        let _ = write!(text, "\n  {what}:\n    {line}");
    }
    let _ = write!(text, "\n\n{}", codes_heading());
    for code in entry.exits {
        let _ = write!(text, "\n{}", exit_line(*code));
    }
    if name == "init" {
        let _ = write!(text, "\n\n{}", crate::cmd::init::PROVIDERS);
    }
    Some(text)
}

/// `command` with every [`COMMANDS`] entry's text after its subcommand's `--help` (a name the
/// grammar lacks is skipped: `mut_subcommand` would panic).
pub(crate) fn with_help(mut command: clap::Command) -> clap::Command {
    for entry in COMMANDS {
        if !command
            .get_subcommands()
            .any(|c| c.get_name() == entry.name)
        {
            continue;
        }
        if let Some(text) = after_help(entry.name) {
            command = command.mut_subcommand(entry.name, |c| c.after_help(text));
        }
    }
    command
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    /// The words of an example's command line: `"…"` kept together, and nothing from the first
    /// `<`, `>` or `|` on (the shell's part).
    fn words(line: &str) -> Vec<String> {
        let (mut words, mut word, mut quoted, mut any) = (Vec::new(), String::new(), false, false);
        for ch in line.chars() {
            match ch {
                '"' => {
                    quoted = !quoted;
                    any = true;
                }
                ' ' if !quoted => {
                    if any {
                        words.push(std::mem::take(&mut word));
                    }
                    any = false;
                }
                _ => {
                    word.push(ch);
                    any = true;
                }
            }
        }
        if any {
            words.push(word);
        }
        words
            .into_iter()
            .take_while(|w| !matches!(w.as_str(), "<" | ">" | "|"))
            .collect()
    }

    #[test]
    fn every_entry_has_examples_and_codes() {
        for entry in COMMANDS {
            assert!(
                entry.examples.len() >= 2,
                "{}: too few examples",
                entry.name
            );
            assert!(
                entry.examples.len() <= 4,
                "{}: too many examples",
                entry.name
            );
            assert!(
                entry.exits.contains(&exit::OK) && entry.exits.contains(&exit::USAGE),
                "{}: 0 and 2 are missing",
                entry.name
            );
            assert!(
                entry.exits.windows(2).all(|w| w[0] < w[1]),
                "{}: codes not ascending",
                entry.name
            );
            for code in entry.exits {
                assert!(
                    exit::TABLE.iter().any(|(c, _)| c == code),
                    "{}: {code} is not in the table",
                    entry.name
                );
            }
            for (what, line) in entry.examples {
                assert!(
                    !what.is_empty() && !what.ends_with(':'),
                    "{}: {what}",
                    entry.name
                );
                assert!(line.starts_with("fuseforks-cli "), "{}: {line}", entry.name);
            }
        }
    }

    #[test]
    fn the_entries_are_the_grammars_subcommands_in_its_order() {
        let grammar = crate::Cli::command();
        let names: Vec<&str> = grammar.get_subcommands().map(|c| c.get_name()).collect();
        let ours: Vec<&str> = COMMANDS.iter().map(|c| c.name).collect();
        assert_eq!(names, ours);
        let with = with_help(crate::Cli::command());
        let after: Vec<&str> = with.get_subcommands().map(|c| c.get_name()).collect();
        assert_eq!(after, ours, "with_help keeps the order");
        for sub in with.get_subcommands() {
            let shown = sub.get_after_help().map(ToString::to_string);
            assert_eq!(shown, after_help(sub.get_name()), "{}", sub.get_name());
        }
    }

    #[test]
    fn every_example_parses_with_the_real_grammar() {
        let grammar = crate::Cli::command();
        for entry in COMMANDS {
            for (_, line) in entry.examples {
                let words = words(line);
                if let Err(e) = grammar.clone().try_get_matches_from(words.clone()) {
                    panic!("{line}: {e}");
                }
                let sub = words.get(1).map(String::as_str);
                let owns = sub == Some(entry.name)
                    || (matches!(entry.name, "pause" | "halt") && sub == Some("resume"));
                assert!(owns, "{}: {line}", entry.name);
            }
        }
    }

    #[test]
    fn the_text_has_examples_then_the_codes_as_the_table_writes_them() {
        let table = exit::help_table();
        for entry in COMMANDS {
            let Some(text) = after_help(entry.name) else {
                panic!("{}: no text", entry.name);
            };
            assert!(text.starts_with("Examples:\n  "), "{text}");
            let (examples, rest) = text.split_once("\n\n").unwrap();
            // Init's notes on the providers follow its codes.
            let codes = rest.split("\n\n").next().unwrap();
            assert_eq!(
                examples.lines().count(),
                1 + 2 * entry.examples.len(),
                "{text}"
            );
            let mut lines = codes.split('\n').filter(|l| !l.starts_with("      "));
            assert_eq!(lines.next(), Some(codes_heading().as_str()));
            assert_eq!(lines.count(), entry.exits.len(), "{text}");
            for code in entry.exits {
                let line = exit_line(*code);
                assert!(table.contains(&format!("\n{line}")), "{line}");
                assert!(codes.contains(&format!("\n{line}")), "{text}");
            }
        }
        assert!(after_help("no-such-command").is_none());
        assert!(after_help("init").unwrap().contains("--provider ollama"));
    }
}
