"""A loopback proxy for the MCP conformance suite: the suite cannot send the door's bearer
token, so this forwards every request to the door with `Authorization: Bearer TOKEN` added and
everything else as sent (Host and Origin included, so the door's DNS-rebinding guard sees what
the suite sends). Responses stream through (SSE included), each connection closed after its
response.

    mcp_conformance_proxy.py LISTEN_PORT DOOR_PORT   (the token comes from FUSEFORKS_DOOR_TOKEN;
                                                     LISTEN_PORT 0 takes a free port)

Prints `proxy: 127.0.0.1:PORT -> 127.0.0.1:DOOR_PORT` once it listens.

Python standard library only.
"""
import http.client
import http.server
import os
import sys

HOP_BY_HOP = {
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
    "transfer-encoding", "upgrade", "authorization",
}


class Forward(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # one response per connection: its end is the body's end

    def forward(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        upstream = http.client.HTTPConnection("127.0.0.1", self.server.door_port, timeout=120)
        upstream.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
        for name, value in self.headers.items():
            if name.lower() not in HOP_BY_HOP:
                upstream.putheader(name, value)
        upstream.putheader("Authorization", f"Bearer {self.server.token}")
        upstream.endheaders(body)
        response = upstream.getresponse()
        self.send_response_only(response.status, response.reason)
        for name, value in response.getheaders():
            if name.lower() not in HOP_BY_HOP:
                self.send_header(name, value)
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            while True:
                chunk = response.read1(65536)
                if not chunk:
                    break
                self.wfile.write(chunk)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the suite closed its side (it cancels SSE readers on purpose)
        finally:
            upstream.close()

    do_GET = do_POST = do_DELETE = do_OPTIONS = forward

    def log_message(self, *args):
        pass


def main():
    listen, door = int(sys.argv[1]), int(sys.argv[2])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", listen), Forward)
    server.daemon_threads = True
    server.door_port = door
    server.token = os.environ["FUSEFORKS_DOOR_TOKEN"]
    print(f"proxy: 127.0.0.1:{server.server_address[1]} -> 127.0.0.1:{door}", flush=True)
    server.serve_forever()


main()
