"""A stdio MCP server written with the official Python SDK, for interop tests.

Tool `shout(text)` returns the text upper-cased. Writes its PID to the file named by the
first argument (if any), and one line to stderr at start.
"""
import os
import sys

from mcp.server.mcpserver import MCPServer

if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        f.write(str(os.getpid()))
print("echo server starting", file=sys.stderr, flush=True)

app = MCPServer("echo")


@app.tool()
def shout(text: str) -> str:
    """Return the text in capitals."""
    return text.upper()


app.run()
