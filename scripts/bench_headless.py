#!/usr/bin/env python3
"""Headless figures (issue 6): `check --for serve` on a 20-agent village, and `ask` against a
zero-latency loopback stub — process start to exit, and peak RSS.

Usage: cargo build --release -p fuseforks-cli && python3 scripts/bench_headless.py
FUSEFORKS_BIN names another binary (default: target/release/fuseforks-cli). Its village() and
timed() are reused by scripts/bench_ask.py.
"""
import json, os, statistics, subprocess, sys, tempfile, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("FUSEFORKS_BIN") or os.path.join(ROOT, "target", "release", "fuseforks-cli")

ANSWER = json.dumps({"id": "x", "object": "chat.completion", "model": "m",
    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
    "usage": {"prompt_tokens": 100, "completion_tokens": 2, "total_tokens": 102}}).encode()

class Stub(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(ANSWER)))
        self.end_headers()
        self.wfile.write(ANSWER)
    def log_message(self, *args):
        pass

def village(base, agents, work=None):
    """A village of `agents` copies of init's agent on the stub at `base`; `work`: the first
    agent's work folder."""
    data = tempfile.mkdtemp(prefix="fuseforks-bench-")
    subprocess.run([BIN, "init", "--data-dir", data, "--language", "en", "--provider", "openai"], check=True, capture_output=True)
    path = os.path.join(data, "workspace", "world.json")
    world = json.load(open(path))
    world["modelTemplates"][0]["baseUrl"] = base + "/v1"
    first = world["agents"][0]
    if work:
        first["workDir"] = work
    for i in range(1, agents):
        a = dict(first); a["id"] = f"agent_{i}"; a["name"] = f"Agent {i}"; a["order"] = i
        world["agents"].append(a)
    json.dump(world, open(path, "w"), indent=2)
    return data

def timed(args, env, runs):
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        r = subprocess.run(args, env=env, capture_output=True)
        samples.append((time.perf_counter() - t) * 1000)
        assert r.returncode == 0, r.stderr.decode()
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]

def peak_rss(args, env):
    r = subprocess.run(["/usr/bin/time", "-v"] + args, env=env, capture_output=True, text=True)
    for line in r.stderr.splitlines():
        if "Maximum resident set size" in line:
            return int(line.split(":")[1]) / 1024
    return float("nan")

def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    env = dict(os.environ, FUSEFORKS_SECRET_OPENAI="sk-bench")
    data = village(base, 20)
    check = [BIN, "check", "--for", "serve", "--data-dir", data, "--start", "batch", "--secrets", "env"]
    med, p95 = timed(check, env, 50)
    print(f"check --for serve, 20 agents: median {med:.1f} ms, p95 {p95:.1f} ms (50 runs)")
    small = village(base, 1)
    ask = [BIN, "ask", "--data-dir", small, "--start", "reception", "--secrets", "env", "hello"]
    med, p95 = timed(ask, env, 30)
    print(f"ask, zero-latency stub: median {med:.1f} ms, p95 {p95:.1f} ms start to exit (30 runs)")
    print(f"ask peak RSS: {peak_rss(ask, env):.1f} MiB")

if __name__ == "__main__":
    sys.exit(main())
