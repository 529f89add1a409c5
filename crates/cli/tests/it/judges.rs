//! `judge validate`: exit 0 when every judge file is valid, 3 with every finding as
//! `file:line:col CODE message`; `--json`; an unknown id is a usage error; nothing written.

use std::collections::BTreeMap;
use std::path::Path;

use fuseforks_core::village::JudgeSpec;
use fuseforks_testkit::TempDataDir;
use serde_json::{Value, json};

use crate::headless::stub_village;
use crate::{cli, stderr, stdout};

pub(crate) const GOOD: &str = "[questions.kind]\ntype = \"choice\"\nask = \"What?\"\noptions = { bug = \"b\", other = \"o\" }\n\n[[rules]]\nwhen = \"kind == bug\"\nto = [\"dev\"]\n\n[[rules]]\nwhen = \"kind == other and kind.p >= 0.9\"\nto = [\"dev\", \"rec\"]\n\n[otherwise]\ndo = \"return\"\nnote = \"none\"\n";

fn judge(id: &str, template: Option<&str>) -> JudgeSpec {
    let mut v = json!({"id": id, "name": id.to_uppercase(), "order": 0});
    if let Some(t) = template {
        v["modelTemplateId"] = json!(t);
    }
    serde_json::from_value(v).unwrap()
}

/// A village with servants `rec` and `dev`, and judges `good` and `bad` (and their files).
pub(crate) fn judge_village(
    stub: &str,
    template: Option<&str>,
    bad: &str,
) -> (TempDataDir, String) {
    let data = TempDataDir::new();
    stub_village(stub)
        .agent_with("dev", "Dev", |_| {})
        .world(|w| {
            w.agents[0]
                .connected_agents
                .push(fuseforks_core::village::AgentId::new("good").unwrap());
            w.judges.push(judge("good", template));
            w.judges.push(judge("bad", template));
        })
        .write(&data);
    for (id, text) in [("good", GOOD), ("bad", bad)] {
        let dir = data.workspace().join("judges").join(id);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("judge.toml"), text).unwrap();
    }
    let dir = data.data_dir().display().to_string();
    (data, dir)
}

/// Every file under `root` with its bytes and modification time.
pub(crate) fn snapshot(root: &Path) -> BTreeMap<String, (Vec<u8>, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let meta = entry.metadata().unwrap();
                out.insert(
                    path.display().to_string(),
                    (std::fs::read(&path).unwrap(), meta.modified().unwrap()),
                );
            }
        }
    }
    out
}

#[test]
fn validate_exits_0_when_valid_and_3_with_every_located_finding() {
    let bad = GOOD
        .replace("kind == bug", "kind == crash")
        .replace("[\"dev\", \"rec\"]", "[\"dev\", \"good\"]");
    let (data, dir) = judge_village("http://127.0.0.1:9/v1", None, &bad);
    let before = snapshot(data.data_dir());

    let out = cli(&format!("judge validate --data-dir {dir} good"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("judges/good/judge.toml: ok (1 questions, 2 rules)"),
        "{}",
        stdout(&out)
    );

    let out = cli(&format!("judge validate --data-dir {dir}"));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let text = stdout(&out);
    let file = data
        .workspace()
        .join("judges/bad/judge.toml")
        .display()
        .to_string();
    assert!(text.contains(&format!("{file}:7:17 INVALID_JUDGE_FILE rule 1: \"crash\" is not an option of \"kind\"\n  Fix: use one of: bug, other")), "{text}");
    assert!(
        text.contains(&format!(
            "{file}:12:14 INVALID_JUDGE_FILE \"good\" is a judge; to names servants only"
        )),
        "{text}"
    );
    assert!(
        stderr(&out).contains("error: [INVALID_JUDGE_FILE] 2 finding(s) in 1 judge file(s)"),
        "{}",
        stderr(&out)
    );

    let out = cli(&format!("judge validate --data-dir {dir} --json bad good"));
    assert_eq!(out.status.code(), Some(3));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["judges"][0]["id"], "bad");
    assert_eq!(report["judges"][0]["valid"], false);
    assert_eq!(report["judges"][0]["findings"][0]["line"], 7);
    assert_eq!(report["judges"][0]["findings"][0]["col"], 17);
    assert_eq!(
        report["judges"][0]["findings"][0]["code"],
        "INVALID_JUDGE_FILE"
    );
    assert_eq!(report["judges"][1]["valid"], true);

    let out = cli(&format!("judge validate --data-dir {dir} nobody"));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("[JUDGE_NOT_FOUND]"),
        "{}",
        stderr(&out)
    );

    // A missing file is a finding at 1:1; a FIFO is refused without blocking.
    std::fs::remove_file(data.workspace().join("judges/bad/judge.toml")).unwrap();
    let out = cli(&format!("judge validate --data-dir {dir} bad"));
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stdout(&out).contains(&format!(
            "{file}:1:1 INVALID_JUDGE_FILE judge.toml is missing"
        )),
        "{}",
        stdout(&out)
    );
    let made = std::process::Command::new("mkfifo")
        .arg(&file)
        .status()
        .unwrap();
    assert!(made.success());
    let out = cli(&format!("judge validate --data-dir {dir} bad"));
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stdout(&out).contains("not a regular file"),
        "{}",
        stdout(&out)
    );
    std::fs::remove_file(&file).unwrap();
    std::fs::write(&file, &bad).unwrap();

    // Nothing was written: no log, no lock, every file as it was.
    let mut after = snapshot(data.data_dir());
    let mut before = before;
    before.remove(&file);
    after.remove(&file);
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    assert!(before == after, "validate wrote something");
    assert!(!data.workspace().join("fuseforks.log").exists());
}

fn preflight_codes(dir: &str) -> Vec<(String, String)> {
    let out = cli(&format!(
        "check --for ask --data-dir {dir} --start reception --secrets env --json"
    ));
    let report: Value =
        serde_json::from_str(&stdout(&out)).unwrap_or_else(|_| panic!("{}", stderr(&out)));
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_owned(),
                f["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn preflight_warns_of_invalid_judges_and_asks_for_the_jev_token_only_for_jev_judges() {
    let bad = GOOD.replace("kind == bug", "kind == crash");
    let (data, dir) = judge_village("http://127.0.0.1:9/v1", None, &bad);
    let codes = preflight_codes(&dir);
    assert!(
        codes.iter().any(|(c, _)| c == "JEV_TOKEN_MISSING"),
        "{codes:?}"
    );
    let file = data
        .workspace()
        .join("judges/bad/judge.toml")
        .display()
        .to_string();
    let invalid: Vec<&String> = codes
        .iter()
        .filter(|(c, _)| c == "JUDGE_INVALID")
        .map(|(_, m)| m)
        .collect();
    assert_eq!(invalid.len(), 1, "{codes:?}");
    assert!(invalid[0].contains(&format!("{file}:7:17")), "{invalid:?}");

    // Judges on a model template need no Jev token.
    let (_data, dir) = judge_village("http://127.0.0.1:9/v1", Some("stub"), GOOD);
    let codes = preflight_codes(&dir);
    assert!(
        !codes
            .iter()
            .any(|(c, _)| c == "JEV_TOKEN_MISSING" || c == "JUDGE_INVALID"),
        "{codes:?}"
    );
}
