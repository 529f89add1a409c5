#!/usr/bin/env python3
"""The in-process figures of docs/performance.md's table, from `cargo bench -p fuseforks-core --bench
orchestrator` (crates/core/benches/orchestrator.rs) run RUNS times: the orchestrator's
overhead per tool round (model time excluded; the bench's median and p99 of each run) and the
crowd (100 agents, one turn each at once, 0 ms stub: the slowest turn in the crowd over the
slowest of five turns alone). Prints min/median/max over the runs, then `FIGURE|…` lines for
scripts/bench_all.sh.

Usage: python3 scripts/bench_orchestrator.py [RUNS]   (default 3)
The bench builds with cargo's bench profile (optimised, like --release) the first time.
BENCH_CARGO_ARGS: more cargo arguments, e.g. `--profile dev` to check this script where an
optimised build cannot be afforded (its figures are then not the table's).
"""
import os, re, statistics, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_ask import figure  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROUND = re.compile(r"overhead per tool round.*?median (\d+) µs, p99 (\d+) µs")
CROWD = re.compile(r"100 agents.*stub latency 0 ms:.*slowest single turn alone ([\d.]+) ms; "
                   r"slowest turn in the crowd ([\d.]+) ms")


def parse(text):
    """(median µs, p99 µs, crowd ratio, alone ms, crowd ms) of one run's output."""
    r, c = ROUND.search(text), CROWD.search(text)
    if not r or not c:
        raise ValueError(f"the bench's output lacks its figures:\n{text}")
    alone, crowd = float(c.group(1)), float(c.group(2))
    return int(r.group(1)), int(r.group(2)), crowd / alone, alone, crowd


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    rows = []
    for i in range(runs):
        extra = os.environ.get("BENCH_CARGO_ARGS", "").split()
        r = subprocess.run(["cargo", "bench", "-p", "fuseforks-core", "--bench", "orchestrator"] + extra,
                           cwd=ROOT, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"cargo bench failed:\n{r.stderr[-3000:]}")
        rows.append(parse(r.stdout))
        print(f"run {i + 1}: " + "; ".join(l for l in r.stdout.splitlines() if "µs" in l or "100 agents" in l))
    median, p99, ratio, alone, crowd = zip(*rows)
    figure("round_median_us", "orchestrator overhead per tool round, median (cargo bench)", median, "µs", "<= 200")
    figure("round_p99_us", "orchestrator overhead per tool round, p99 (cargo bench)", p99, "µs", "<= 400")
    figure("crowd_ratio", "100 agents at once, 0 ms stub: slowest in the crowd / alone", ratio, "x", "<= 1.2")
    figure("crowd_ms", "slowest turn in the crowd", crowd, "ms", "-")
    figure("alone_ms", "slowest of five turns alone", alone, "ms", "-")


if __name__ == "__main__":
    sys.exit(main())
