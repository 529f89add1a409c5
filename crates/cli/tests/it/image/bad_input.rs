//! What the image says to bad input, read from the engine's `logs` as a user reads them: the
//! keys missing (the preflight's code and the variables' names, never a value), a `/data`
//! that is not a bake copy, and a read-only `/data`. Each exits before anything runs.

use super::engine::{Container, give_to_image_user, ok};
use super::fixture::{self, Baked};

/// The image's own command (`serve …`) on `baked`'s mounts, with `volume` in place of the
/// village's when given; waited for. Its exit code and what it said.
fn run_cmd(image: &str, baked: &Baked, volume: Option<String>) -> (String, String) {
    let container = Container::named("bad");
    let mut args: Vec<String> = vec!["run".into(), "--name".into(), container.0.clone()];
    let mut mounts = baked.run_args();
    if let Some(volume) = volume {
        let at = mounts.iter().position(|a| a.ends_with(":/data")).unwrap();
        mounts[at] = volume;
    }
    args.extend(mounts);
    args.push(image.to_owned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let _ = super::engine::run(&args);
    let code = container.inspect("{{.State.ExitCode}}");
    (code, container.logs())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_image_refuses_missing_keys_an_unbaked_data_and_a_read_only_one() {
    let Some(image) = super::image() else { return };
    // The stubs are never reached: every case stops before an agent starts.
    let baked = fixture::bake(9, 9);
    let env = std::fs::read_to_string(baked.env_file()).unwrap();

    // No keys: the .env without its secrets.
    std::fs::write(baked.env_file(), "TZ=UTC\n").unwrap();
    let (code, said) = run_cmd(&image, &baked, None);
    assert_eq!(code, "3", "{said}");
    assert!(said.contains("SECRET_MISSING"), "{said}");
    for name in ["FUSEFORKS_SECRET_STUB", "FUSEFORKS_SECRET_MCP_SMOKE"] {
        assert!(said.contains(name), "{name} not named: {said}");
    }
    std::fs::write(baked.env_file(), &env).unwrap();
    for line in env.lines().filter_map(|l| l.split_once('=')) {
        if line.0.starts_with("FUSEFORKS_SECRET_") {
            assert!(!said.contains(line.1), "a value was printed");
        }
    }

    // An empty /data (the volume was not mounted, or not baked).
    let empty = tempfile::tempdir().unwrap();
    give_to_image_user(empty.path());
    let (code, said) = run_cmd(
        &image,
        &baked,
        Some(format!("{}:/data", empty.path().display())),
    );
    assert_eq!(code, "3", "{said}");
    assert!(
        said.contains("NOT_A_BAKE_COPY") && said.contains("fuseforks-cli bake"),
        "{said}"
    );
    assert_eq!(
        std::fs::read_dir(empty.path()).unwrap().count(),
        0,
        "nothing is written"
    );

    // The copy mounted read-only.
    let village = baked.village();
    let read_only = format!("{}:/data:ro", village.display());
    let (code, said) = run_cmd(&image, &baked, Some(read_only));
    assert_eq!(code, "5", "{said}");
    assert!(said.contains("DATA_DIR_READ_ONLY"), "{said}");
    ok(&["image", "exists", &image]);
}
