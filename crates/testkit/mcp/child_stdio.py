"""A stdio MCP server in the standard library only, for the child-process tests (no SDK needed).

Speaks just enough JSON-RPC (initialize, tools/list with one tool `noop`, tools/call, ping).
Options:
  --pid FILE         write its pid to FILE
  --env FILE         write its environment to FILE as JSON
  --grandchild FILE  start a helper (which ignores SIGTERM) and write the helper's pid to FILE
  --ignore-stdin     ignore SIGTERM/SIGHUP and keep running after stdin closes
  --silent           never answer anything (a connect that never completes)
  --parent-env FILE  try to read its parent's /proc/<ppid>/environ; write `readable:<bytes>`
                     or `denied:<errno>` to FILE
  --hostile-stderr   on initialize, write a line with terminal escape sequences (a window
                     title `pwned`, clear screen, a carriage return, bidi overrides, a C1 CSI) and `kid says hi`
                     to stderr
  --tool NAME        name its one tool NAME instead of `noop`
  --answer TEXT      answer every tools/call with TEXT instead of `ok`
  --endless-pages    answer every tools/list with 1,000 tools of 1 KB each and a next cursor,
                     forever (a hostile server's endless pagination)
"""
import json
import os
import signal
import subprocess
import sys
import time

args = sys.argv[1:]


def option(name):
    if name in args:
        return args[args.index(name) + 1]
    return None


def write(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


if option("--env"):
    write(option("--env"), json.dumps(dict(os.environ)))
if option("--parent-env"):
    try:
        with open("/proc/%d/environ" % os.getppid(), "rb") as f:
            outcome = "readable:%d" % len(f.read())
    except OSError as e:
        outcome = "denied:%d" % e.errno
    write(option("--parent-env"), outcome)
if option("--grandchild"):
    helper = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    write(option("--grandchild"), str(helper.pid))
if "--ignore-stdin" in args:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
if option("--pid"):
    write(option("--pid"), str(os.getpid()))


def reply(request, result):
    out = {"jsonrpc": "2.0", "id": request["id"], "result": result}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    if "--silent" in args:
        continue
    try:
        request = json.loads(line)
    except ValueError:
        continue
    method = request.get("method")
    if "id" not in request:
        continue
    if method == "initialize":
        if "--hostile-stderr" in args:
            sys.stderr.write("\r\x1b[2K\x1b]0;pwned\x07\x1b[2Jkid says hi \u202e\u2066evil\u2069\u009b2J\n")
            sys.stderr.flush()
        reply(
            request,
            {
                "protocolVersion": request["params"].get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "child", "version": "1"},
            },
        )
    elif method == "tools/list" and "--endless-pages" in args:
        page = int((request.get("params") or {}).get("cursor") or "0")
        tools = [
            {"name": f"p{page}_{i}", "description": "y" * 1000, "inputSchema": {"type": "object"}}
            for i in range(1000)
        ]
        reply(request, {"tools": tools, "nextCursor": str(page + 1)})
    elif method == "tools/list":
        tool = {"name": option("--tool") or "noop", "description": "Does nothing.", "inputSchema": {"type": "object"}}
        reply(request, {"tools": [tool]})
    elif method == "tools/call":
        reply(request, {"content": [{"type": "text", "text": option("--answer") or "ok"}]})
    elif method == "ping":
        reply(request, {})
    else:
        error = {"code": -32601, "message": "method not found"}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": error}) + "\n")
        sys.stdout.flush()

if "--ignore-stdin" in args:
    while True:
        time.sleep(60)
