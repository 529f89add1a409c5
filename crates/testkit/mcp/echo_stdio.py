"""A stdio MCP server written with the official Python SDK, for interop tests.

Tool `shout(text)` returns the text upper-cased; `who()` names the client (its `clientInfo`)
and says it on stderr too. Writes its PID to the file named by the
first argument (if any), and one line to stderr at start.
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
def shout(text: str) -> str:
    """Return the text in capitals."""
    return text.upper()


@app.tool()
def who(ctx: Context) -> str:
    """Name the client of this server."""
    params = ctx.session.client_params
    info = params.client_info if params else None
    text = f"client: {info.name} {info.version}" if info else "client: unknown"
    print(text, file=sys.stderr, flush=True)
    return text


app.run()
