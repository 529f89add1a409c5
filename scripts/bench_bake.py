#!/usr/bin/env python3
"""`bake` figure (issue 16): a first bake and an `--update` of a 50-agent village, process start
to exit (the target is 100 ms for the first bake). Each agent has a Windows workDir and two
ragSources (rewritten by --map), Construct/SKILL/Memory, an icon, a run.json and an mcp.json;
the village has 50 schedules with a pre-check probe whose cwd is rewritten and approved.

Usage: cargo build --release -p fuseforks-cli && python3 scripts/bench_bake.py [BINARY]
"""
import hashlib, json, os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A village in the original's format, in the repository (crates/testkit/fixtures/README.md).
FIXTURE = os.path.join(ROOT, "crates", "testkit", "fixtures", "original-village", "workspace", "world.json")
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target", "release", "fuseforks-cli")
AGENTS, RUNS = 50, 15

def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(text if isinstance(text, bytes) else text.encode())

def village():
    data = tempfile.mkdtemp(prefix="fuseforks-bench-bake-")
    ws = os.path.join(data, "workspace")
    world = json.load(open(FIXTURE))
    template = world["agents"][0]
    world["agents"] = []
    for i in range(AGENTS):
        a = dict(template, id=f"agent_{i}", name=f"agent {i}", order=i,
                 workDir=f"D:\\Github\\repo{i}", ragSources=[f"D:\\Docs\\{i}", "D:\\Shared"])
        world["agents"].append(a)
        d = os.path.join(ws, "agents", a["id"])
        write(os.path.join(d, "Construct.md"), f"Agent {i}.\n" * 200)
        write(os.path.join(d, "SKILL.md"), "Steps.\n" * 200)
        write(os.path.join(d, "Memory.md"), "Remembered.\n" * 200)
        write(os.path.join(d, "icon.webp"), os.urandom(8192))
        write(os.path.join(d, "run.json"), json.dumps({"version": 1, "allow": ["git status", "make *"], "deny": []}))
        write(os.path.join(d, "mcp.json"), json.dumps({"mcpServers": {"r": {"type": "http", "url": "https://x.example/mcp",
              "headers": {"Authorization": "Bearer ${secret:R%d}" % i}}}}))
    write(os.path.join(ws, "world.json"), json.dumps(world))
    vid = "bench-village"
    write(os.path.join(ws, "village_id"), vid)
    schedules, hashes = [], []
    for i in range(AGENTS):
        probe = {"command": "git", "args": ["status"], "expect": "ok", "cwd": f"D:\\Github\\repo{i}"}
        schedules.append({"id": f"s{i}", "to": f"agent_{i}", "message": "go",
                          "recurrence": {"kind": "daily", "hour": 9, "minute": 0}, "createdAtMs": 1, "probe": probe})
        canon = json.dumps({"args": probe["args"], "command": probe["command"], "cwd": probe["cwd"], "villageId": vid},
                           separators=(",", ":"), ensure_ascii=False)
        hashes.append(hashlib.sha256(canon.encode()).hexdigest())
    write(os.path.join(ws, "schedules.json"), json.dumps(schedules))
    write(os.path.join(data, "probe_approvals.json"), json.dumps({"hashes": hashes}))
    return data

def timed(args):
    t = time.perf_counter()
    p = subprocess.run([BIN, "bake"] + args, capture_output=True, text=True, env=dict(os.environ, TZ="Asia/Tokyo"))
    ms = (time.perf_counter() - t) * 1000
    if p.returncode != 0:
        sys.exit(f"bake exited {p.returncode}: {p.stderr}")
    return ms

def main():
    src = village()
    maps = ["--map", "D:\\Github=/work", "--map", "D:\\Docs=/docs", "--map", "D:\\Shared=/shared"]
    first, update = [], []
    for _ in range(RUNS):
        out = tempfile.mkdtemp(prefix="fuseforks-bench-copy-")
        os.rmdir(out)
        first.append(timed(["--data-dir", src, "--out", out] + maps))
        update.append(timed(["--data-dir", src, "--out", out, "--update"]))
        shutil.rmtree(out)
    approvals = json.load(open(os.path.join(out if os.path.exists(out) else src, "probe_approvals.json")))
    shutil.rmtree(src)
    print(f"binary: {BIN}")
    print(f"{AGENTS} agents, {len(approvals['hashes'])} probes: first bake median {statistics.median(first):.1f} ms "
          f"(min {min(first):.1f}, max {max(first):.1f}); --update median {statistics.median(update):.1f} ms "
          f"(min {min(update):.1f}, max {max(update):.1f}); {RUNS} runs each")

if __name__ == "__main__":
    main()
