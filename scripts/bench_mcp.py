#!/usr/bin/env python3
"""MCP figures (issue 7): the door's round trip (`ask_fuseforks` through the official Python SDK
client, zero-latency LLM stub) over 100 calls, and agent start time with 3 stdio MCP servers
(Python SDK servers), both under `serve`.

Usage: cargo build --release -p fuseforks-cli && python3 scripts/bench_mcp.py
"""
import json, os, re, signal, socket, statistics, subprocess, sys, tempfile, threading, time
from http.server import ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_headless import BIN, ROOT, Stub  # noqa: E402

SCRIPTS = os.path.join(ROOT, "crates", "testkit", "mcp")
TOKEN = "bench-door-token"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def village(base, servers):
    data = tempfile.mkdtemp(prefix="fuseforks-bench-mcp-")
    subprocess.run([BIN, "init", "--data-dir", data, "--language", "en", "--provider", "openai"],
                   check=True, capture_output=True)
    path = os.path.join(data, "workspace", "world.json")
    world = json.load(open(path))
    world["modelTemplates"][0]["baseUrl"] = base + "/v1"
    world["agents"][0]["batchStart"] = True
    json.dump(world, open(path, "w"), indent=2)
    agent = world["agents"][0]["id"]
    mcp = {"mcpServers": {f"echo{i}": {"command": sys.executable,
                                        "args": [os.path.join(SCRIPTS, "echo_stdio.py")]}
                          for i in range(servers)}}
    json.dump(mcp, open(os.path.join(data, "workspace", "agents", agent, "mcp.json"), "w"))
    return data


def wait_log(data, pattern, count, timeout=60):
    path = os.path.join(data, "workspace", "fuseforks.log")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = open(path).read() if os.path.exists(path) else ""
        found = re.findall(pattern, text)
        if len(found) >= count:
            return found
        time.sleep(0.005)
    raise SystemExit(f"timed out waiting for {pattern!r}")


def serve(data, port):
    env = dict(os.environ, FUSEFORKS_SECRET_OPENAI="sk-bench", FUSEFORKS_SECRET_DOOR_TOKEN=TOKEN)
    return subprocess.Popen([BIN, "serve", "--data-dir", data, "--start", "batch", "--secrets", "env",
                             "--bypass-plan-review", "--door-port", str(port)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"

    starts, per_server = [], []
    for _ in range(5):
        data = village(base, 3)
        port = free_port()
        t = time.perf_counter()
        proc = serve(data, port)
        found = wait_log(data, r"outcome=connected tools=1 elapsed_ms=(\d+)", 3)
        starts.append((time.perf_counter() - t) * 1000)
        per_server += [int(x) for x in found]
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    print(f"agent start with 3 stdio MCP servers (serve launch -> all 3 connected), 5 runs: "
          f"median {statistics.median(starts):.0f} ms, max {max(starts):.0f} ms; "
          f"per-server connect median {statistics.median(per_server)} ms")

    data = village(base, 0)
    port = free_port()
    proc = serve(data, port)
    try:
        wait_log(data, r"mcp server: 127\.0\.0\.1:\d+/mcp", 1)
        out = subprocess.run([sys.executable, os.path.join(SCRIPTS, "door_client.py"),
                              f"http://127.0.0.1:{port}/mcp", TOKEN, "ask", "ping", "100"],
                             check=True, capture_output=True, text=True)
        result = json.loads(out.stdout)
        assert not any(result["is_error"]), result["answers"][:3]
        times = sorted(result["times_ms"])
        print(f"door round trip (Python SDK client -> door -> reception -> stub LLM), 100 calls: "
              f"median {statistics.median(times):.2f} ms, p99 {times[98]:.2f} ms, max {times[-1]:.2f} ms")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


if __name__ == "__main__":
    main()
