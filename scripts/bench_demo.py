#!/usr/bin/env python3
"""`fuseforks-cli demo` wall time (issue 20: under a second after the build): process start to
exit of N runs (default 20) in a temporary folder, plus the demo's own `elapsedMs` (`--json`).
Prints median, min and max of each.

Usage: cargo build -p fuseforks-cli && python3 scripts/bench_demo.py [debug|release] [N]
"""
import json, os, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROFILE = sys.argv[1] if len(sys.argv) > 1 else "debug"
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 20
BIN = os.path.join(ROOT, "target", PROFILE, "fuseforks-cli")

def main():
    walls, inner = [], []
    with tempfile.TemporaryDirectory(prefix="fuseforks-demo-bench-") as tmp:
        env = dict(os.environ, TMPDIR=tmp, LANG="C.UTF-8")
        env.pop("LC_ALL", None)
        for _ in range(RUNS):
            start = time.perf_counter()
            done = subprocess.run([BIN, "demo", "--json", "--language", "en"], env=env,
                                  capture_output=True, text=True)
            walls.append((time.perf_counter() - start) * 1000)
            if done.returncode != 0:
                sys.exit(f"demo failed ({done.returncode}): {done.stderr}")
            summary = json.loads(done.stdout)
            assert summary["turns"] == 3, summary
            inner.append(summary["elapsedMs"])
        assert not os.listdir(tmp), "a temporary demo was left behind"
    for name, values in (("wall ms (process)", walls), ("elapsedMs (demo)", inner)):
        print(f"{PROFILE} {name}: median {statistics.median(values):.0f}, "
              f"min {min(values):.0f}, max {max(values):.0f} over {len(values)} runs")

main()
