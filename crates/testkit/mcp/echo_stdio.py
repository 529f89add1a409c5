"""A stdio MCP server written with the official Python SDK, for interop tests.

Tool `shout(text)` returns the text upper-cased and names the client (its `clientInfo`) on
stderr. Writes its PID to the file named by the first argument (if any), and one line to
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


app.run()
