#!/usr/bin/env python3
"""`ask` with one tool round against a zero-latency loopback stub (docs/performance.md's table):
process start to exit of the release binary, its fsync/fdatasync count (strace, all threads),
and the peer: the OpenAI Agents SDK doing the same task (one `grep` round, then the answer)
on the same stub, process start to exit. Prints min/median/max of each, then `FIGURE|…`
lines that scripts/bench_all.sh gathers into its table.

Usage: python3 scripts/bench_ask.py [RUNS]   (default 30; the strace count takes 5 runs)
FUSEFORKS_BIN: the binary (default target/release/fuseforks-cli);
FUSEFORKS_PEER_PYTHON: a Python with `openai-agents` installed (default python3); without it
the peer is reported as not run.
"""
import json, os, shutil, statistics, subprocess, sys, tempfile, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_headless import BIN, village  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PEER_PYTHON = os.environ.get("FUSEFORKS_PEER_PYTHON", "python3")
USAGE = {"prompt_tokens": 100, "completion_tokens": 2, "total_tokens": 102}


def reply(message, finish):
    return json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                       "choices": [{"index": 0, "finish_reason": finish, "message": message}],
                       "usage": USAGE}).encode()


ANSWER = reply({"role": "assistant", "content": "ok"}, "stop")
TOOL = reply({"role": "assistant", "content": None, "tool_calls": [{
    "id": "call_1", "type": "function",
    "function": {"name": "grep", "arguments": json.dumps({"pattern": "alpha"})}}]}, "tool_calls")


class Stub(BaseHTTPRequestHandler):
    """Asks for `grep` until the request carries a tool result, then answers. HTTP/1.0, as
    bench_headless.py's: the connection closes after each answer (with HTTP/1.1 the body's
    separate small write meets Nagle and delayed ACK, +40 ms a request)."""

    requests = 0
    # When the first request of the run in progress arrived (its headers parsed), for the
    # start-up figure: process start to the first model request.
    first_at = None

    def do_POST(self):
        if Stub.first_at is None:
            Stub.first_at = time.perf_counter()
        Stub.requests += 1
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        has_result = any(m.get("role") == "tool" for m in body.get("messages", []))
        out = ANSWER if has_result else TOOL
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


def spread(samples):
    return min(samples), statistics.median(samples), max(samples)


def figure(key, label, samples, unit, goal):
    lo, mid, hi = spread(samples)
    print(f"FIGURE|{key}|{label}|{lo:.4g}|{mid:.4g}|{hi:.4g}|{unit}|{goal}")


def wall_ms(args, env, runs, firsts=None):
    """Process start to exit of `runs` runs, each of which must make the round's two requests;
    with `firsts`, each run's process start to its first request is appended there."""
    samples = []
    before = Stub.requests
    for _ in range(runs):
        Stub.first_at = None
        t = time.perf_counter()
        r = subprocess.run(args, env=env, capture_output=True)
        samples.append((time.perf_counter() - t) * 1000)
        if firsts is not None and Stub.first_at is not None:
            firsts.append((Stub.first_at - t) * 1000)
        if r.returncode != 0:
            sys.exit(f"{args[0]} exited {r.returncode}: {r.stderr.decode()[-2000:]}")
    if Stub.requests - before != 2 * runs:
        sys.exit(f"{args[0]}: {Stub.requests - before} requests in {runs} runs, not two a run")
    return samples


def sync_counts(args, env, runs):
    counts = []
    with tempfile.TemporaryDirectory(prefix="fuseforks-bench-strace-") as tmp:
        for i in range(runs):
            out = os.path.join(tmp, f"{i}.txt")
            subprocess.run(["strace", "-f", "-e", "trace=fsync,fdatasync", "-o", out] + args,
                           env=env, capture_output=True, check=True)
            lines = open(out).read().splitlines()
            counts.append(sum(1 for l in lines if ("fsync(" in l or "fdatasync(" in l) and "<..." not in l))
    return counts


def peer_available():
    try:
        r = subprocess.run([PEER_PYTHON, "-c", "import agents"], capture_output=True)
    except OSError:
        return False
    return r.returncode == 0


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    server = ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    work = tempfile.mkdtemp(prefix="fuseforks-bench-work-")
    with open(os.path.join(work, "notes.txt"), "w") as f:
        f.write("alpha\nbeta\n" * 50)
    env = dict(os.environ, FUSEFORKS_SECRET_OPENAI="sk-bench", LANG="C.UTF-8")
    data = village(base, 1, work)
    ask = [BIN, "ask", "--data-dir", data, "--start", "reception", "--secrets", "env", "hello"]
    wall_ms(ask, env, 1)  # the village's first ask makes sessions.redb and audit.jsonl
    firsts = []
    ms = wall_ms(ask, env, runs, firsts)
    print(f"ask, one tool round, start to exit: min/median/max {'/'.join(f'{v:.1f}' for v in spread(ms))} ms ({runs} runs)")
    figure("ask_ms", "ask, one tool round, start to exit (release)", ms, "ms", "<= 12")
    print(f"ask, start to the first model request: min/median/max {'/'.join(f'{v:.1f}' for v in spread(firsts))} ms")
    figure("ask_first_ms", "ask, start to the first model request (release)", firsts, "ms", "-")
    if shutil.which("strace"):
        syncs = sync_counts(ask, env, 5)
        print(f"fsync/fdatasync in that ask: {syncs}")
        figure("ask_syncs", "fsync/fdatasync in that ask (strace -f)", syncs, "calls", "<= 4")
    else:
        print("FIGURE|ask_syncs|fsync/fdatasync in that ask (strace -f)|-|-|-|not run: no strace|<= 4")
    if peer_available():
        peer = [PEER_PYTHON, os.path.join(HERE, "bench_peer_agents.py"), base + "/v1", work]
        peer_runs = max(3, runs // 3)
        wall_ms(peer, env, 1)
        pms = wall_ms(peer, env, peer_runs)
        print(f"OpenAI Agents SDK, same task: min/median/max {'/'.join(f'{v:.0f}' for v in spread(pms))} ms ({peer_runs} runs)")
        figure("peer_ms", "OpenAI Agents SDK, same task, start to exit", pms, "ms", "-")
        ratios = [p / statistics.median(ms) for p in pms]
        figure("peer_ratio", "peer / ask (median ask)", ratios, "x", ">= 200")
    else:
        print(f"FIGURE|peer_ms|OpenAI Agents SDK, same task|-|-|-|not run: {PEER_PYTHON} lacks openai-agents|-")
    server.shutdown()
    shutil.rmtree(data, ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
