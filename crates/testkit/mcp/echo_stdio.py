"""A stdio MCP server written with the official Python SDK, for interop tests.

Tool `shout(text)` returns the text upper-cased and names the client (its `clientInfo`) on
stderr. Tool `hold(started, go, out)` writes `started`, waits until `go` exists, then writes
`out` and returns "held" (a call in flight for as long as a test wants). Writes its PID to the file named by the first argument (if any), and one line to
stderr at start.
"""
import os
import sys

from mcp.server.mcpserver import Context, MCPServer

if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        f.write(str(os.getpid()))
print("echo server starting", file=sys.stderr, flush=True)

app = MCPServer("echo")


@app.tool()
def shout(text: str, ctx: Context) -> str:
    """Return the text in capitals."""
    params = ctx.session.client_params
    info = params.client_info if params else None
    print(f"client: {info.name} {info.version}" if info else "client: unknown", file=sys.stderr, flush=True)
    return text.upper()


@app.tool()
async def hold(started: str, go: str, out: str) -> str:
    """Wait until the file `go` exists, then write `out`."""
    import asyncio

    with open(started, "w") as f:
        f.write(str(os.getpid()))
    while not os.path.exists(go):
        await asyncio.sleep(0.05)
    with open(out, "w") as f:
        f.write("held")
    return "held"


app.run()
