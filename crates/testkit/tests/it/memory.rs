//! Peak memory of one tool call on hostile inputs, each measured in its
//! own process (`tool-call` prints its `VmHWM`): a 1 GiB file read, a 1 GiB line searched, an
//! empty-pattern replacement preview. Each stays under 100 MB.

use std::io::Write;
use std::process::Command;

use fuseforks_testkit::TempDataDir;

const LIMIT_KB: u64 = 100 * 1024;

/// Runs one tool call in a child; returns (ok, peak kB).
fn peak_kb(work: &std::path::Path, tool: &str, args: &str) -> (bool, u64) {
    let out = Command::new(env!("CARGO_BIN_EXE_tool-call"))
        .arg(work)
        .arg(tool)
        .arg(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ok = text.contains("ok=true");
    let kb = text
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmHWM in {text}"));
    (ok, kb)
}

/// A file of `size` bytes of `byte` with no newline (written in 1 MiB blocks).
fn one_line(path: &std::path::Path, size: u64, byte: u8) {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let block = vec![byte; 1 << 20];
    for _ in 0..size / block.len() as u64 {
        file.write_all(&block).unwrap();
    }
    file.flush().unwrap();
}

#[test]
fn hostile_inputs_stay_under_100_mb() {
    let data = TempDataDir::new();
    let work = data.data_dir().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let sparse = std::fs::File::create(work.join("sparse.txt")).unwrap();
    sparse.set_len(1 << 30).unwrap();
    let (ok, read_kb) = peak_kb(&work, "file", r#"{"op":"read","path":"sparse.txt"}"#);
    assert!(ok);
    one_line(&work.join("line.txt"), 1 << 30, b'a');
    let (_, grep_kb) = peak_kb(&work, "grep", r#"{"pattern":"needle"}"#);
    one_line(&work.join("mid.txt"), 1 << 20, b'a');
    let (sd_ok, sd_kb) = peak_kb(
        &work,
        "sd",
        r#"{"path":"mid.txt","pattern":"","replacement":"xxxxxxxxxxxxxxxx"}"#,
    );
    assert!(!sd_ok, "the exploding preview was refused");
    eprintln!(
        "peak RSS: file read 1 GiB {read_kb} kB; grep 1 GiB line {grep_kb} kB; sd empty pattern {sd_kb} kB"
    );
    for (what, kb) in [("file read", read_kb), ("grep", grep_kb), ("sd", sd_kb)] {
        assert!(kb < LIMIT_KB, "{what}: {kb} kB");
    }
}

/// The `sd` preview over `paths` (up to 20 files, the same one allowed) builds every diff in
/// full before the 12,000-character cap: 20 × a 1 MiB file whose replacement stays under the
/// 4 MiB cap took 430 MB and 55 s in an attack re-run. Bounded like one path.
#[test]
fn an_sd_preview_over_twenty_paths_stays_under_100_mb() {
    let data = TempDataDir::new();
    let work = data.data_dir().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("lines.txt"), "a\n".repeat(500_000)).unwrap();
    let paths = serde_json::to_string(&vec!["lines.txt"; 20]).unwrap();
    let args = format!(r#"{{"paths":{paths},"pattern":"a","replacement":"bbbbbbb"}}"#);
    let (_, kb) = peak_kb(&work, "sd", &args);
    eprintln!("peak RSS: sd preview over 20 paths {kb} kB");
    assert!(kb < LIMIT_KB, "sd over 20 paths: {kb} kB");
}

/// A `yq set` whose key has 10,000 levels (`a.a.a…`, a 20 KB argument) aborted the whole
/// process with a stack overflow in an attack re-run (JSON and TOML alike):
/// `parse_key` takes any number of steps, `set` builds the nesting, and serialising or
/// dropping it recurses once per level on a 2 MiB blocking thread. In `serve` that ends every
/// agent. The call must fail cleanly (a refused key) and the process live on.
#[test]
fn a_deeply_nested_yq_key_does_not_crash_the_process() {
    let data = TempDataDir::new();
    let work = data.data_dir().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("c.json"), "{}\n").unwrap();
    std::fs::write(work.join("c.toml"), "x = 1\n").unwrap();
    let key = vec!["a"; 10_000].join(".");
    for file in ["c.json", "c.toml"] {
        let args = serde_json::json!({"path": file, "op": "set", "key": key, "value": 1});
        let out = Command::new(env!("CARGO_BIN_EXE_tool-call"))
            .arg(&work)
            .arg("yq")
            .arg(args.to_string())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{file}: the process died ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
