"""A client of the door written with the official Python MCP SDK, for interop tests and the
door benchmark. Prints one JSON object on stdout.

    door_client.py URL TOKEN ask MESSAGE [COUNT]   list tools, call ask_fuseforks COUNT times
    door_client.py URL TOKEN refused [HOST]        try to initialise; report how it failed

TOKEN "-" sends no Authorization header; HOST overrides the Host header.
"""
import json
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
    return httpx2.AsyncClient(headers=headers, timeout=60)


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


def main():
    url, token, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "ask":
        count = int(sys.argv[5]) if len(sys.argv) > 5 else 1
        result = anyio.run(ask, url, token, sys.argv[4], count)
    else:
        host = sys.argv[4] if len(sys.argv) > 4 else None
        result = anyio.run(refused, url, token, host)
    print(json.dumps(result), flush=True)


main()
