//! The tidy rule of tests' waits: a test waits on an event (`fuseforks_testkit::eventually`),
//! never on the clock; the few sleeps kept carry a marker saying why.

use super::{fail, lex, read, rust_files, without_tests};

/// A sleep a test may keep: its marker (on the line before or the same line) and its folder.
const SLEEP_MARKERS: &[(&str, &str)] = &[
    ("// tidy: the one poll", "crates/testkit/src/wait.rs"), // `eventually` and its kin
    ("// tidy: stub latency", "crates/testkit/"),            // a stub's simulated slowness
    ("// tidy: paused time", "crates/"),                     // a moment on paused tokio time
    ("// tidy: crash moment", "crates/testkit/tests/"),      // the crash test's random kill
];

#[test]
fn tests_wait_on_conditions_not_on_the_clock() {
    let sleep = regex::Regex::new(r"\bsleep\(").unwrap();
    let mut problems = Vec::new();
    for path in rust_files() {
        let raw = read(&path);
        let code = lex(&raw).code;
        // Test code: all of a test file, the inline `#[cfg(test)]` module of a product file.
        let whole = ["/tests/", "testkit/", "/tests.rs"]
            .iter()
            .any(|p| path.contains(p));
        let first = (!whole).then(|| without_tests(&code).lines().count());
        let raw: Vec<&str> = raw.lines().collect();
        for (at, line) in code.lines().enumerate().skip(first.unwrap_or(0)) {
            let near = &raw[at.saturating_sub(1)..=at];
            let marked = SLEEP_MARKERS.iter().any(|(marker, folder)| {
                path.starts_with(folder) && near.iter().any(|r| r.contains(marker))
            });
            if sleep.is_match(line) && !marked {
                problems.push(format!("{path}:{}: a test sleeps; wait for the event with `fuseforks_testkit::eventually` (or `wait_requests`, `spawn_started`); a stub's latency takes `// tidy: stub latency`", at + 1));
            }
        }
    }
    fail(&problems, "tests wait on conditions, not on the clock");
}
