"""A Streamable HTTP MCP server written with the official Python SDK, for interop tests.

Usage: echo_http.py TOKEN — serves http://127.0.0.1:<port>/mcp on a port the system
chooses, prints one line `PORT <n>` once listening, and answers 401 to any request whose
Authorization header is not `Bearer TOKEN`. Tool `whisper(text)` lower-cases.
"""
import socket
import sys

import uvicorn
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.responses import PlainTextResponse

from mcp.server.mcpserver import MCPServer

TOKEN = sys.argv[1]
app = MCPServer("quiet")


@app.tool()
def whisper(text: str) -> str:
    """Return the text in small letters."""
    return text.lower()


class Bearer(BaseHTTPMiddleware):
    async def dispatch(self, request, call_next):
        if request.headers.get("authorization") != f"Bearer {TOKEN}":
            return PlainTextResponse("unauthorized", status_code=401)
        return await call_next(request)


web = app.streamable_http_app()
web.add_middleware(Bearer)
# Bound and listening before the port is said, so a client that reads it can connect at once.
listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.bind(("127.0.0.1", 0))
listener.listen(128)
print(f"PORT {listener.getsockname()[1]}", flush=True)
server = uvicorn.Server(uvicorn.Config(web, log_level="warning"))
server.run(sockets=[listener])
