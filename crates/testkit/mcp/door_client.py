"""A client of the door written with the official Python MCP SDK, for interop tests and the
door benchmark. Prints one JSON object on stdout.

    door_client.py URL TOKEN ask MESSAGE [COUNT]   list tools, call ask_fuseforks COUNT times
    door_client.py URL TOKEN dry-ask MESSAGE       call ask_fuseforks {MESSAGE, dryRun: true};
                                                   report the text and the structured content
    door_client.py URL TOKEN refused [HOST]        try to initialise; report how it failed
    door_client.py URL TOKEN origin ORIGIN         initialise (raw POST) with this Origin header
    door_client.py URL TOKEN origin-call ORIGIN M  initialise without Origin, then call
                                                   ask_fuseforks {M} with this Origin (raw POSTs)
    door_client.py URL TOKEN delete                end a session with DELETE (raw), twice, and an
                                                   unknown one; then close an SDK session
    door_client.py URL TOKEN sessions A1 B1 A2     two SDK sessions open at once: session A asks
                                                   A1, session B asks B1, session A asks A2

TOKEN "-" sends no Authorization header; HOST overrides the Host header. The SDK's warnings
(e.g. "Session termination failed") are reported under "warnings".
"""
import json
import logging
import os
import sys
import time

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


def http_client(token, host=None):
    headers = {}
    if token != "-":
        headers["Authorization"] = f"Bearer {token}"
    if host:
        headers["Host"] = host
    # DOOR_CLIENT_CA: the CA to trust for an https URL (a proxy's own CA), instead of the system's.
    verify = os.environ.get("DOOR_CLIENT_CA") or True
    return httpx2.AsyncClient(headers=headers, timeout=60, verify=verify)


async def ask(url, token, message, count):
    async with http_client(token) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, *_):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = await session.list_tools()
                answers, errors, times = [], [], []
                for _ in range(count):
                    started = time.perf_counter()
                    result = await session.call_tool("ask_fuseforks", {"message": message})
                    times.append((time.perf_counter() - started) * 1000.0)
                    answers.append("".join(c.text for c in result.content if c.type == "text"))
                    errors.append(bool(result.is_error))
                return {
                    "tools": [t.name for t in tools.tools],
                    "schema": tools.tools[0].input_schema if tools.tools else None,
                    "answers": answers,
                    "is_error": errors,
                    "times_ms": times,
                }


async def dry_ask(url, token, message):
    async with http_client(token) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, *_):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = await session.list_tools()
                result = await session.call_tool(
                    "ask_fuseforks", {"message": message, "dryRun": True}
                )
                return {
                    "schema": tools.tools[0].input_schema if tools.tools else None,
                    "answer": "".join(c.text for c in result.content if c.type == "text"),
                    "is_error": bool(result.is_error),
                    "structured": result.structured_content,
                }


async def refused(url, token, host):
    # First the raw status the door answers, then whether the SDK can get in at all.
    async with http_client(token, host) as http:
        response = await http.post(
            url,
            headers={"Accept": "application/json, text/event-stream", "Content-Type": "application/json"},
            content=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "probe", "version": "1"}}}),
        )
        status = response.status_code
        body = response.text[:200]
    initialised = False
    failure = None
    try:
        with anyio.fail_after(20):
            async with http_client(token, host) as http:
                async with streamable_http_client(url, http_client=http) as (read, write, *_):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        initialised = True
    except BaseException as e:  # the SDK wraps transport failures in exception groups
        failure = type(e).__name__
    return {"status": status, "body": body, "initialised": initialised, "failure": failure}


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "probe", "version": "1"}}}
POST_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class Warnings(logging.Handler):
    """Collects what the SDK logs at WARNING and above."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.lines = []
        logging.getLogger("mcp").addHandler(self)

    def emit(self, record):
        self.lines.append(record.getMessage())


async def origin(url, token, value):
    async with http_client(token) as http:
        response = await http.post(url, headers={**POST_HEADERS, "Origin": value},
                                   content=json.dumps(INITIALIZE))
        return {"status": response.status_code, "body": response.text[:300]}


async def origin_call(url, token, value, message):
    async with http_client(token) as http:
        response = await http.post(url, headers=POST_HEADERS, content=json.dumps(INITIALIZE))
        headers = {**POST_HEADERS, "Mcp-Session-Id": response.headers.get("mcp-session-id"),
                   "Mcp-Protocol-Version": "2025-06-18"}
        await http.post(url, headers=headers, content=json.dumps(
            {"jsonrpc": "2.0", "method": "notifications/initialized"}))
        call = await http.post(url, headers={**headers, "Origin": value}, content=json.dumps(
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "ask_fuseforks", "arguments": {"message": message}}}))
        return {"status": call.status_code, "body": call.text[:300]}


async def delete(url, token):
    warnings = Warnings()
    async with http_client(token) as http:
        response = await http.post(url, headers=POST_HEADERS, content=json.dumps(INITIALIZE))
        session = response.headers.get("mcp-session-id")
        headers = {**POST_HEADERS, "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"}
        await http.post(url, headers=headers, content=json.dumps(
            {"jsonrpc": "2.0", "method": "notifications/initialized"}))
        first = await http.delete(url, headers=headers)
        again = await http.delete(url, headers=headers)
        unknown = await http.delete(url, headers={**headers, "Mcp-Session-Id": "no-such-session"})
        after = await http.post(url, headers=headers, content=json.dumps(
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
    async with http_client(token) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, *_):
            async with ClientSession(read, write) as sdk:
                await sdk.initialize()
    return {"first": first.status_code, "first_body": first.text, "again": again.status_code,
            "unknown": unknown.status_code, "unknown_body": unknown.text[:300],
            "after": after.status_code, "session": session, "warnings": warnings.lines}


async def sessions(url, token, a1, b1, a2):
    warnings = Warnings()

    async def call(session, message):
        result = await session.call_tool("ask_fuseforks", {"message": message})
        return "".join(c.text for c in result.content if c.type == "text")

    async with http_client(token) as http_a, http_client(token) as http_b:
        async with streamable_http_client(url, http_client=http_a) as (read_a, write_a, *_), \
                streamable_http_client(url, http_client=http_b) as (read_b, write_b, *_):
            async with ClientSession(read_a, write_a) as a, ClientSession(read_b, write_b) as b:
                await a.initialize()
                await b.initialize()
                answers = [await call(a, a1), await call(b, b1), await call(a, a2)]
    return {"answers": answers, "warnings": warnings.lines}


def main():
    url, token, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "ask":
        count = int(sys.argv[5]) if len(sys.argv) > 5 else 1
        result = anyio.run(ask, url, token, sys.argv[4], count)
    elif mode == "dry-ask":
        result = anyio.run(dry_ask, url, token, sys.argv[4])
    elif mode == "origin":
        result = anyio.run(origin, url, token, sys.argv[4])
    elif mode == "origin-call":
        result = anyio.run(origin_call, url, token, sys.argv[4], sys.argv[5])
    elif mode == "delete":
        result = anyio.run(delete, url, token)
    elif mode == "sessions":
        result = anyio.run(sessions, url, token, *sys.argv[4:7])
    else:
        host = sys.argv[4] if len(sys.argv) > 4 else None
        result = anyio.run(refused, url, token, host)
    print(json.dumps(result), flush=True)


main()
