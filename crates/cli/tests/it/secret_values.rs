//! What a key's value, a key's village and a template's URL may be: a value with a line break is
//! refused where it is stored and named where it is read (not blamed on the network); `check`
//! refuses a secret-name collision as `ask` does (exit 5); `secrets` names a missing village and a
//! broken `mcp.json`; a `baseUrl` with a user name or password is refused.

use fuseforks_core::village::{TemplateId, VillageStore};
use fuseforks_testkit::TempDataDir;

use crate::secrets::{KEYUTILS, all_output, cli, unique_id, village};

const BASE: &str = "http://127.0.0.1:9";

fn check_env(dir: &str, env: &[(&str, &str)]) -> std::process::Output {
    cli(
        &[
            "check",
            "--for",
            "ask",
            "--data-dir",
            dir,
            "--start",
            "reception",
            "--secrets",
            "env",
        ],
        env,
        None,
    )
}

#[test]
fn set_refuses_a_value_with_a_line_break_inside_and_stores_nothing() {
    let data = TempDataDir::new();
    let id = unique_id();
    village(&data, &id, BASE);
    let dir = data.data_dir().display().to_string();
    for value in ["sk-AAA\r\nX-Injected: y\n", "sk-A\tB\n", "   \n"] {
        let set = cli(
            &["secrets", "set", &id, "--data-dir", &dir, "--stdin"],
            KEYUTILS,
            Some(value),
        );
        let text = all_output(&set);
        assert_eq!(set.status.code(), Some(2), "{text}");
        assert!(
            text.contains("SECRET_VALUE_INVALID") || text.contains("SECRET_VALUE_EMPTY"),
            "{text}"
        );
        assert!(
            !text.contains("X-Injected") && !text.contains("sk-A"),
            "{text}"
        );
    }
    let list = cli(
        &["secrets", "list", "--data-dir", &dir, "--json"],
        KEYUTILS,
        None,
    );
    let json: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let row = json["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["key"] == id.as_str())
        .unwrap()
        .clone();
    assert_eq!(row["present"], false, "nothing was stored: {json}");
}

#[test]
fn an_env_value_with_a_line_break_is_named_by_check_not_blamed_on_the_network() {
    let data = TempDataDir::new();
    let id = unique_id();
    village(&data, &id, BASE);
    let dir = data.data_dir().display().to_string();
    let var = fuseforks_host::secret_names::env_var_name(&id);
    let out = check_env(&dir, &[(var.as_str(), "sk-LEAKME\nX: y")]);
    let text = all_output(&out);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("SECRET_VALUE_INVALID"), "{text}");
    assert!(text.contains(&var), "names the variable: {text}");
    assert!(!text.contains("LEAKME"), "never the value: {text}");
}

#[test]
fn check_says_a_secret_name_collision_as_ask_does() {
    let data = TempDataDir::new();
    village(&data, "a-b", BASE);
    let store = VillageStore::new(data.workspace());
    let mut world = store.load_world().unwrap().value;
    let mut twin = world.model_templates[0].clone();
    twin.id = TemplateId::new("a_b").unwrap();
    world.model_templates.push(twin);
    store.save_world(&world).unwrap();
    let dir = data.data_dir().display().to_string();
    let env = [("FUSEFORKS_SECRET_A_B", "sk-x")];
    let check = check_env(&dir, &env);
    assert_eq!(check.status.code(), Some(5), "{}", all_output(&check));
    assert!(
        all_output(&check).contains("SECRET_NAME_COLLISION"),
        "{}",
        all_output(&check)
    );
    let ask = cli(
        &[
            "ask",
            "--data-dir",
            &dir,
            "--start",
            "reception",
            "--secrets",
            "env",
            "hi",
        ],
        &env,
        None,
    );
    assert_eq!(ask.status.code(), Some(5), "{}", all_output(&ask));
    assert!(all_output(&ask).contains("SECRET_NAME_COLLISION"));
}

#[test]
fn secrets_commands_name_a_missing_village_and_a_workspace_given_for_it() {
    let data = TempDataDir::new();
    village(&data, &unique_id(), BASE);
    let nowhere = data.data_dir().join("nowhere").display().to_string();
    let workspace = data.workspace().display().to_string();
    for (dir, hint) in [(&nowhere, "init"), (&workspace, "use its parent")] {
        for args in [
            vec!["secrets", "set", "k", "--data-dir", dir, "--stdin"],
            vec!["secrets", "delete", "k", "--data-dir", dir],
            vec!["secrets", "list", "--data-dir", dir],
        ] {
            let out = cli(&args, KEYUTILS, Some("sk-unused\n"));
            let text = all_output(&out);
            assert_eq!(out.status.code(), Some(5), "{args:?}: {text}");
            assert!(text.contains("[VILLAGE_MISSING]"), "{args:?}: {text}");
            assert!(text.contains(hint), "{args:?}: {text}");
        }
    }
}

#[test]
fn secrets_list_says_a_broken_mcp_json_instead_of_leaving_its_keys_out() {
    let data = TempDataDir::new();
    village(&data, &unique_id(), BASE);
    let text = serde_json::json!({"mcpServers": {"remote": {
        "type": "http", "url": "https://mcp.example.com/mcp",
        "headers": {"Authorization": "Bearer ${secret:bad-name}"}
    }}});
    data.write("mcp.json", text.to_string());
    let dir = data.data_dir().display().to_string();
    let list = cli(&["secrets", "list", "--data-dir", &dir], KEYUTILS, None);
    let out = all_output(&list);
    assert_eq!(list.status.code(), Some(5), "{out}");
    assert!(out.contains("VILLAGE_FILE_INVALID"), "{out}");
}

#[test]
fn init_refuses_a_base_url_with_a_user_name_or_password() {
    let data = TempDataDir::new();
    let dir = data.data_dir().join("v").display().to_string();
    let out = cli(
        &[
            "init",
            "--data-dir",
            &dir,
            "--base-url",
            "http://user:PASSWORDX@127.0.0.1:18099/v1",
            "--model",
            "m1",
        ],
        &[],
        None,
    );
    let text = all_output(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("ENDPOINT_INVALID"), "{text}");
    assert!(!text.contains("PASSWORDX"), "{text}");
    assert!(
        !std::path::Path::new(&dir)
            .join("workspace/world.json")
            .exists()
    );
}

#[test]
fn init_quotes_its_printed_commands_so_they_paste_into_a_shell() {
    let data = TempDataDir::new();
    let dir = data.data_dir().join("my v'illage").display().to_string();
    let out = cli(
        &[
            "init",
            "--data-dir",
            &dir,
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
        ],
        &[],
        None,
    );
    let text = all_output(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let check = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("fuseforks-cli check "))
        .unwrap_or_else(|| panic!("no check line: {text}"))
        .replace(" --probe-endpoints", "");
    let bin = env!("CARGO_BIN_EXE_fuseforks-cli");
    let line = check.replacen("fuseforks-cli", &format!("'{bin}'"), 1);
    let ran = std::process::Command::new("sh")
        .args(["-c", &line])
        .env("LANG", "C.UTF-8")
        .output()
        .unwrap();
    assert_eq!(ran.status.code(), Some(0), "{line}: {}", all_output(&ran));
}
