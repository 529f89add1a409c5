//! A helper process for the crash test: rewrites `world.json` of the village given as the
//! first argument in an endless loop, alternating a small and a large world, so that the test
//! can kill it (SIGKILL) at random moments. Prints `ready` once the first write is done.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a helper process of the crash test: it says `ready` on stdout for the test, and its usage on stderr"
)]

use std::io::Write;

use fuseforks_core::village::{VillageStore, World};

fn main() {
    let Some(workspace) = std::env::args_os().nth(1) else {
        eprintln!("usage: village-writer <workspace>");
        std::process::exit(2);
    };
    let store = VillageStore::new(workspace);
    let small = fuseforks_testkit::crash_worlds::small();
    let large = fuseforks_testkit::crash_worlds::large();
    let mut announced = false;
    for round in 0u64.. {
        let world: &World = if round % 2 == 0 { &small } else { &large };
        if let Err(e) = store.save_world(world) {
            eprintln!("write failed: {e}");
            std::process::exit(1);
        }
        if !announced {
            println!("ready");
            let _ = std::io::stdout().flush();
            announced = true;
        }
    }
}
