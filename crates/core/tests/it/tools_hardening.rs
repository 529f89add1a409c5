//! Regressions of an attacker's findings against the work-folder tools: a dangling link is
//! never written through, a folder/link swap race creates nothing outside, a FIFO never
//! blocks a read, and reads/greps/replacements stay bounded. The blackboard's (not reached
//! through `run_tool`) are in `crates/core/src/tools/tests/blackboard_hardening.rs`.

use std::os::unix::fs::symlink;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::tools_support::Agent;

#[tokio::test]
async fn copy_and_write_never_follow_a_dangling_link() {
    for agent in Agent::each() {
        let target = agent.outside().join("y.txt");
        symlink(&target, agent.work().join("x.txt")).unwrap();
        for overwrite in [false, true] {
            let copy = agent
                .call(
                    "file",
                    json!({"op": "copy", "path": "notes.txt", "to": "x.txt", "overwrite": overwrite}),
                )
                .await;
            assert!(!copy.ok, "copy overwrite={overwrite}: {}", copy.body);
            let write = agent
                .call(
                    "file",
                    json!({"op": "write", "path": "x.txt", "content": "pwned", "overwrite": overwrite}),
                )
                .await;
            assert!(!write.ok, "write overwrite={overwrite}: {}", write.body);
        }
        let append = agent
            .call(
                "file",
                json!({"op": "append", "path": "x.txt", "content": "pwned"}),
            )
            .await;
        assert!(!append.ok, "{}", append.body);
        let moved = agent
            .call(
                "file",
                json!({"op": "move", "path": "notes.txt", "to": "x.txt"}),
            )
            .await;
        assert!(!moved.ok, "{}", moved.body);
        assert!(
            !target.exists(),
            "a file was created outside through the link"
        );
    }
}

/// Two threads: one swaps `race` between a real folder and a link to the outside, the other
/// creates files in `race/`. Nothing may appear outside (bounded: 2,000 creations).
#[test]
fn a_folder_link_swap_race_creates_nothing_outside() {
    for agent in Agent::each() {
        let work = agent.work();
        std::fs::create_dir_all(work.join("race")).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let swapper = {
            let (stop, work, outside) = (stop.clone(), work.clone(), agent.outside());
            std::thread::spawn(move || {
                // Half of the time a folder, half of the time a link (whatever the load).
                while !stop.load(Ordering::Relaxed) {
                    let _ = std::fs::rename(work.join("race"), work.join("race.real"));
                    let _ = symlink(&outside, work.join("race"));
                    std::thread::yield_now();
                    let _ = std::fs::remove_file(work.join("race"));
                    let _ = std::fs::rename(work.join("race.real"), work.join("race"));
                    std::thread::yield_now();
                }
            })
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut created = 0;
        for i in 0..2_000 {
            let args = json!({"op": "write", "path": format!("race/f{i}.txt"), "content": "x"});
            if runtime.block_on(agent.call("file", args)).ok {
                created += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        let outside: Vec<_> = std::fs::read_dir(agent.outside())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            outside,
            vec!["secret.txt"],
            "files escaped ({created} created inside)"
        );
        eprintln!("swap race: {created} of 2000 creations inside, none outside");
        assert!(
            created > 0,
            "the race never let a creation through: the test proves nothing"
        );
    }
}

#[tokio::test]
async fn a_fifo_is_refused_without_blocking() {
    for agent in Agent::each() {
        let fifo = agent.work().join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let started = Instant::now();
        for args in [
            json!({"op": "read", "path": "pipe"}),
            json!({"op": "write", "path": "pipe", "content": "x", "overwrite": true}),
            json!({"op": "append", "path": "pipe", "content": "x"}),
            json!({"op": "copy", "path": "pipe", "to": "copy.txt"}),
            json!({"op": "copy", "path": "notes.txt", "to": "pipe", "overwrite": true}),
        ] {
            let out =
                tokio::time::timeout(Duration::from_secs(5), agent.call("file", args.clone()))
                    .await
                    .expect("the call blocked on the FIFO");
            assert!(!out.ok, "{args}: {}", out.body);
            assert!(
                out.body.contains("SANDBOX_NOT_REGULAR"),
                "{args}: {}",
                out.body
            );
        }
        // A FIFO in the middle of a path: each folder on the way is opened as a folder
        // (O_DIRECTORY), never as the FIFO it is, which would block.
        for args in [
            json!({"op": "read", "path": "pipe/inner.txt"}),
            json!({"op": "write", "path": "pipe/new.txt", "content": "x"}),
        ] {
            let out =
                tokio::time::timeout(Duration::from_secs(5), agent.call("file", args.clone()))
                    .await
                    .expect("the call blocked on the FIFO on its way");
            assert!(!out.ok, "{args}: {}", out.body);
        }
        for (tool, args) in [
            ("grep", json!({"pattern": "x"})),
            ("diff", json!({"old_path": "pipe", "new_path": "notes.txt"})),
            (
                "sd",
                json!({"path": "pipe", "pattern": "a", "replacement": "b"}),
            ),
            ("yq", json!({"path": "pipe", "op": "get", "key": "a"})),
        ] {
            tokio::time::timeout(Duration::from_secs(5), agent.call(tool, args))
                .await
                .unwrap_or_else(|_| panic!("{tool} blocked on the FIFO"));
        }
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}

#[tokio::test]
async fn reads_are_bounded_and_say_how_large_the_file_is() {
    let agent = Agent::new();
    let big = std::fs::File::create(agent.work().join("big.txt")).unwrap();
    big.set_len(1 << 30).unwrap();
    let out = agent
        .call("file", json!({"op": "read", "path": "big.txt"}))
        .await;
    assert!(out.ok, "{}", out.body);
    assert!(
        out.body.ends_with("1073741824 bytes]"),
        "{}",
        &out.body[out.body.len() - 80..]
    );
    assert!(out.body.chars().count() < 13_000);
    let sd = agent
        .call(
            "sd",
            json!({"path": "big.txt", "pattern": "", "replacement": "x"}),
        )
        .await;
    assert!(!sd.ok && sd.body.contains("larger than"), "{}", sd.body);
}

#[tokio::test]
async fn sd_refuses_an_exploding_replacement_and_grep_cuts_long_lines() {
    let agent = Agent::new();
    std::fs::write(agent.work().join("mid.txt"), "a".repeat(900_000)).unwrap();
    let sd = agent
        .call(
            "sd",
            json!({"path": "mid.txt", "pattern": "", "replacement": "xxxxxxxx"}),
        )
        .await;
    assert!(!sd.ok && sd.body.contains("too large"), "{}", sd.body);
    std::fs::write(
        agent.work().join("long.txt"),
        format!("needle {}\n", "b".repeat(100_000)),
    )
    .unwrap();
    let grep = agent.call("grep", json!({"pattern": "needle"})).await;
    assert!(
        grep.ok && grep.body.contains("long.txt:1: needle"),
        "{}",
        grep.body
    );
    assert!(grep.body.len() < 1_000, "{} bytes", grep.body.len());
}

#[tokio::test]
async fn sd_refuses_a_replacement_that_would_explode_before_building_it() {
    let agent = Agent::new();
    std::fs::write(agent.work().join("one.txt"), "a".repeat(1_000_000)).unwrap();
    // One match of 1 MB expanded 4,096 times would ask for 4 GB at once.
    let replacement = "$0".repeat(4096);
    let sd = agent
        .call(
            "sd",
            json!({"path": "one.txt", "pattern": "(?s).+", "replacement": replacement}),
        )
        .await;
    assert!(!sd.ok && sd.body.contains("too large"), "{}", sd.body);
}

#[tokio::test]
async fn a_copy_may_replace_another_file_of_the_same_folder() {
    let agent = Agent::new();
    std::fs::write(agent.work().join("other.txt"), "old").unwrap();
    let out = agent
        .call(
            "file",
            json!({"op": "copy", "path": "notes.txt", "to": "other.txt", "overwrite": true}),
        )
        .await;
    assert!(out.ok, "{}", out.body);
    assert_eq!(
        std::fs::read_to_string(agent.work().join("other.txt")).unwrap(),
        "alpha\nbeta error\ngamma\n"
    );
}

#[tokio::test]
async fn a_copy_onto_itself_keeps_the_file() {
    let agent = Agent::new();
    symlink("notes.txt", agent.work().join("alias.txt")).unwrap();
    for to in ["notes.txt", "./notes.txt", "alias.txt"] {
        let out = agent
            .call(
                "file",
                json!({"op": "copy", "path": "notes.txt", "to": to, "overwrite": true}),
            )
            .await;
        assert!(!out.ok, "copy onto {to}: {}", out.body);
    }
    assert_eq!(
        std::fs::read_to_string(agent.work().join("notes.txt")).unwrap(),
        "alpha\nbeta error\ngamma\n"
    );
}

#[tokio::test]
async fn a_folder_that_holds_a_fence_cannot_be_moved_or_removed() {
    let data = fuseforks_testkit::TempDataDir::new();
    let work = data.data_dir().join("work");
    std::fs::create_dir_all(work.join("village/judges")).unwrap();
    for agent in Agent::each() {
        let mut ctx = agent.ctx.clone();
        ctx.work_dir = Some(
            fuseforks_core::tools::WorkDir::new(&work)
                .unwrap()
                .fence(&work.join("village/judges")),
        );
        for args in [
            json!({"op": "move", "path": "village", "to": "v2"}),
            json!({"op": "remove", "path": "village"}),
            json!({"op": "move", "path": "blackboard", "to": "b2"}),
        ] {
            let out = fuseforks_core::tools::run_tool("file", &args, &ctx).await;
            assert!(
                !out.ok && out.body.contains("SANDBOX_FENCED"),
                "{args}: {}",
                out.body
            );
        }
        assert!(work.join("village/judges").is_dir());
    }
}

/// `file copy` copies without bound and without holes: a sparse file of 512 MiB (which costs
/// nothing on disk and can come with hostile files, or from an allowed `truncate`) became
/// 512 MiB of real blocks; a sparse terabyte fills the whole file system, and the 60 s tool
/// limit does not stop the blocking thread (found by an attack re-run). The
/// copy must either keep the holes or refuse a source past a cap.
#[tokio::test]
async fn copying_a_sparse_file_does_not_fill_the_disk() {
    use std::os::unix::fs::MetadataExt;
    let agent = Agent::new();
    let sparse = std::fs::File::create(agent.work().join("sparse.bin")).unwrap();
    sparse.set_len(512 << 20).unwrap();
    let out = agent
        .call(
            "file",
            json!({"op": "copy", "path": "sparse.bin", "to": "copy.bin"}),
        )
        .await;
    let allocated = std::fs::metadata(agent.work().join("copy.bin"))
        .map(|m| m.blocks() * 512)
        .unwrap_or(0);
    assert!(
        allocated < 64 << 20,
        "the copy allocated {allocated} bytes on disk (ok={}: {})",
        out.ok,
        out.body
    );
}

/// A hostile TOML file (one unterminated 1 MiB line, under `yq`'s 1 MiB read bound) makes the
/// parse error quote the whole line: the answer the model sees is ≈ 2 MB, not the 12,000
/// characters every other tool answer is cut to (`text_edit.rs`, `toml_op`: `TOML: {e}` is not
/// capped; found by a second attack re-run). The tool answer is what the next
/// paid request carries.
#[tokio::test]
async fn a_toml_parse_error_does_not_quote_a_megabyte_line() {
    let agent = Agent::new();
    let line = format!("x = \"{}\n", "a".repeat(1_000_000));
    std::fs::write(agent.work().join("long.toml"), line).unwrap();
    let out = agent
        .call("yq", json!({"path": "long.toml", "op": "get", "key": "x"}))
        .await;
    assert!(!out.ok);
    assert!(
        out.body.chars().count() < 13_000,
        "the error answer holds {} characters",
        out.body.chars().count()
    );
}
