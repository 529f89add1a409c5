"""The client under test for the MCP conformance suite's client scenarios: the suite starts a
server and runs `mcp_conformance_client.py SERVER_URL`. This founds a throwaway village whose
reception has that server in its `mcp.json`, points the village's model at a stub model (here,
on loopback) that calls the server's first tool once and then answers, and runs one
`fuseforks-cli ask`. So what the suite meets is our real MCP client inside a real turn.

    FUSEFORKS_CLI=target/debug/fuseforks-cli mcp_conformance_client.py SERVER_URL

Python standard library only. Exits with the exit code of `ask`.
"""
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading

SERVER = "conf"
ARGUMENTS = {"add_numbers": {"a": 2, "b": 3}}  # what the tools_call scenario checks


def completion(message, finish):
    return {
        "id": "chatcmpl-conformance", "object": "chat.completion", "model": "stub-model",
        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
    }


def reply(request):
    """Call the server's first tool once, then answer with text."""
    if request["messages"][-1]["role"] == "tool":
        return completion({"role": "assistant", "content": "done"}, "stop")
    names = [t["function"]["name"] for t in request.get("tools", [])]
    ours = [n for n in names if n.startswith(f"{SERVER}__")]
    if not ours:
        return completion({"role": "assistant", "content": "no tool to call"}, "stop")
    tool = ours[0]
    arguments = ARGUMENTS.get(tool.split("__", 1)[1], {})
    call = {"id": "call-1", "type": "function",
            "function": {"name": tool, "arguments": json.dumps(arguments)}}
    return completion({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls")


class StubModel(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        body = json.dumps(reply(request)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def found_village(cli, data, model_port, url):
    subprocess.run([cli, "init", "--data-dir", data, "--provider", "ollama", "--language", "en"],
                   check=True, stdout=subprocess.DEVNULL)
    workspace = os.path.join(data, "workspace")
    world_path = os.path.join(workspace, "world.json")
    with open(world_path) as f:
        world = json.load(f)
    world["modelTemplates"][0]["baseUrl"] = f"http://127.0.0.1:{model_port}/v1"
    with open(world_path, "w") as f:
        json.dump(world, f, indent=2)
    reception = world["agents"][0]["id"]
    with open(os.path.join(workspace, "agents", reception, "mcp.json"), "w") as f:
        json.dump({"mcpServers": {SERVER: {"type": "http", "url": url}}}, f)
    return reception


def main():
    url = sys.argv[1]
    cli = os.environ.get("FUSEFORKS_CLI", "target/debug/fuseforks-cli")
    model = http.server.ThreadingHTTPServer(("127.0.0.1", 0), StubModel)
    threading.Thread(target=model.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory(prefix="fuseforks-conformance-") as data:
        found_village(cli, data, model.server_address[1], url)
        ask = subprocess.run(
            [cli, "ask", "--data-dir", data, "--start", "reception", "--secrets", "env",
             "--verbose", "Use your tool once, then say done."],
            timeout=60,
        )
    model.shutdown()
    sys.exit(ask.returncode)


main()
