"""A Streamable HTTP MCP server written with the official Python SDK, for interop tests.

Usage: echo_http.py PORT TOKEN — serves http://127.0.0.1:PORT/mcp and answers 401 to any
request whose Authorization header is not `Bearer TOKEN`. Tool `whisper(text)` lower-cases.
"""
import sys

import uvicorn
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.responses import PlainTextResponse

from mcp.server.mcpserver import MCPServer

PORT, TOKEN = int(sys.argv[1]), sys.argv[2]
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
uvicorn.run(web, host="127.0.0.1", port=PORT, log_level="warning")
