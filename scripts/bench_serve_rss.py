#!/usr/bin/env python3
"""`serve` resident memory (docs/performance.md's table): a one-agent village and an N-agent one
(default 1,001), every agent started (`--start batch`) and idle; RSS (`VmRSS`) read once
`serve` has said SERVING and every agent is running and its RSS has stopped moving. Per
extra agent = (RSS of N − RSS of one) / (N − 1). Prints min/median/max of each over RUNS runs,
then `FIGURE|…` lines for scripts/bench_all.sh.

Usage: python3 scripts/bench_serve_rss.py [RUNS] [N]   (defaults 3 and 1001)
FUSEFORKS_BIN: the binary (default target/release/fuseforks-cli).
"""
import json, os, shutil, signal, subprocess, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_ask import figure  # noqa: E402
from bench_headless import BIN, village  # noqa: E402

# Nothing is asked: the model's address only has to be well-formed.
BASE = "http://127.0.0.1:9"


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def batch_village(agents):
    data = village(BASE, agents)
    path = os.path.join(data, "workspace", "world.json")
    world = json.load(open(path))
    for a in world["agents"]:
        a["batchStart"] = True
    json.dump(world, open(path, "w"), indent=2)
    return data


def serving_rss(data, agents, timeout=120):
    """Starts serve, waits for SERVING and every agent running, then for RSS to settle."""
    env = dict(os.environ, FUSEFORKS_SECRET_OPENAI="sk-bench", LANG="C.UTF-8")
    serve = subprocess.Popen([BIN, "serve", "--data-dir", data, "--start", "batch", "--secrets", "env",
                              "--events", "jsonl"], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    ready = threading.Event()

    def watch():
        running, serving = 0, False
        for line in serve.stderr:
            event = json.loads(line) if line.startswith("{") else {}
            serving |= event.get("code") == "SERVING"
            running += event.get("type") == "agentStatusChanged" and event.get("status") == "running"
            if serving and running >= agents:
                ready.set()

    threading.Thread(target=watch, daemon=True).start()
    try:
        if not ready.wait(timeout):
            raise RuntimeError(f"serve of {agents} agents not ready in {timeout} s")
        last, now = -1, rss_kib(serve.pid)
        while now != last:  # settled: two readings 200 ms apart agree
            time.sleep(0.2)
            last, now = now, rss_kib(serve.pid)
        return now
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=60)


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    many = int(sys.argv[2]) if len(sys.argv) > 2 else 1001
    one_data, many_data = batch_village(1), batch_village(many)
    ones, manys, per = [], [], []
    for _ in range(runs):
        one = serving_rss(one_data, 1)
        lots = serving_rss(many_data, many)
        ones.append(one / 1024)
        manys.append(lots / 1024)
        per.append((lots - one) / (many - 1))
    print(f"serve RSS, one agent: {['%.1f' % v for v in ones]} MiB; {many} agents: {['%.1f' % v for v in manys]} MiB")
    figure("serve_rss_one", "serve RSS, one agent running", ones, "MiB", "<= 12 MB")
    figure("serve_rss_per_agent", f"serve RSS per extra running agent ({many} agents)", per, "KiB", "<= 20 KB")
    figure("serve_rss_many", f"serve RSS, {many} agents running", manys, "MiB", "-")
    shutil.rmtree(one_data, ignore_errors=True)
    shutil.rmtree(many_data, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
