//! A writer killed with SIGKILL at random moments never leaves a half-written `world.json`:
//! after every kill the file reads back as one of the two complete worlds.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fuseforks_core::village::VillageStore;
use fuseforks_testkit::{TempDataDir, crash_worlds};

#[test]
fn killing_a_writer_never_leaves_a_torn_world_file() {
    let data = TempDataDir::new();
    let store = VillageStore::new(data.workspace());
    store.save_world(&crash_worlds::small()).unwrap();
    let (small, large) = (crash_worlds::small(), crash_worlds::large());
    let mut seen_large = 0;
    for round in 0..20u64 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_village-writer"))
            .arg(data.workspace())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "ready");
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .subsec_nanos() as u64;
        // tidy: crash moment (a random point in the writer's loop to kill it at)
        std::thread::sleep(Duration::from_micros(
            (nanos ^ round.wrapping_mul(7919)) % 400_000,
        ));
        child.kill().unwrap(); // SIGKILL: no destructor, no cleanup
        child.wait().unwrap();

        let loaded = store
            .load_world()
            .unwrap_or_else(|e| panic!("round {round}: torn file: {e}"));
        assert!(
            loaded.value == small || loaded.value == large,
            "round {round}: unexpected world"
        );
        if loaded.value == large {
            seen_large += 1;
        }
    }
    // The kills landed at different moments: both worlds were read back (each of 20 random
    // kills leaves either; all 20 alike would mean the writer or the timing never varied).
    assert!(
        (1..20).contains(&seen_large),
        "after 20 kills: {seen_large} large, {} small",
        20 - seen_large
    );
    // Only complete worlds and temp files of interrupted writes are in the folder.
    for entry in std::fs::read_dir(data.workspace()).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            name == "world.json" || (name.starts_with(".world.json.") && name.ends_with(".tmp")),
            "{name}"
        );
    }
}
