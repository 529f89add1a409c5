"""A tiny OTLP/HTTP trace receiver for integration tests: it records what an exporter sends.

Usage: receiver.py OUT_DIR — serves http://127.0.0.1:<port>/v1/traces on a free port and
prints one line `PORT <n>` once listening. Each protobuf ExportTraceServiceRequest (plain
or gzip) is appended to OUT_DIR/raw.bin and each of its spans becomes one JSON line in
OUT_DIR/spans.jsonl; a body that fails to decode gets 400 and a line `{"error": "..."}`.
Needs `opentelemetry-proto==1.45.2` (which brings protobuf). Stop it with SIGTERM.
"""
import gzip
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

MAX_BODY = 16 * 1024 * 1024
OUT_DIR = sys.argv[1]
LOCK = threading.Lock()


def any_value(v):
    """Turn an OTLP AnyValue into a plain Python value (None when unset)."""
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [any_value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return attributes(v.kvlist_value.values)
    if kind == "bytes_value":
        return v.bytes_value.hex()
    return getattr(v, kind) if kind else None


def attributes(kvs):
    return {kv.key: any_value(kv.value) for kv in kvs}


def span_lines(request):
    for rs in request.resource_spans:
        resource = attributes(rs.resource.attributes)
        for ss in rs.scope_spans:
            for s in ss.spans:
                yield {
                    "name": s.name,
                    "traceId": s.trace_id.hex(),
                    "spanId": s.span_id.hex(),
                    "parentSpanId": s.parent_span_id.hex(),
                    "kind": s.kind,
                    "startNs": s.start_time_unix_nano,
                    "endNs": s.end_time_unix_nano,
                    "status": {"code": s.status.code, "message": s.status.message},
                    "attributes": attributes(s.attributes),
                    "scope": ss.scope.name,
                    "resource": resource,
                }


def record(lines, raw=None):
    with LOCK:
        if raw is not None:
            with open(os.path.join(OUT_DIR, "raw.bin"), "ab") as f:
                f.write(raw)
        with open(os.path.join(OUT_DIR, "spans.jsonl"), "a", encoding="utf-8") as f:
            for line in lines:
                f.write(json.dumps(line) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    def reply(self, code, body=b"", ctype="text/plain"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.close_connection = True
        self.reply(404, b"not found")

    def do_POST(self):
        if self.path.split("?")[0] != "/v1/traces":
            self.close_connection = True
            return self.reply(404, b"not found")
        if self.headers.get("Content-Length") is None:  # e.g. chunked: not supported
            self.close_connection = True
            record([{"error": "request without Content-Length"}])
            return self.reply(411, b"Content-Length required")
        length = int(self.headers["Content-Length"])
        if length > MAX_BODY:
            self.close_connection = True
            return self.reply(413, b"body too large")
        body = self.rfile.read(length)
        ctype = self.headers.get("Content-Type", "").split(";")[0].strip()
        if ctype != "application/x-protobuf":
            record([{"error": f"unsupported Content-Type {ctype!r}"}])
            return self.reply(415, b"only application/x-protobuf")
        try:
            if self.headers.get("Content-Encoding", "").lower() == "gzip":
                body = gzip.decompress(body)
            request = trace_service_pb2.ExportTraceServiceRequest()
            request.ParseFromString(body)
        except Exception as e:
            record([{"error": f"{type(e).__name__}: {e}"}])
            return self.reply(400, b"bad request body")
        record(list(span_lines(request)), raw=body)
        ok = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
        self.reply(200, ok, "application/x-protobuf")


if __name__ == "__main__":
    os.makedirs(OUT_DIR, exist_ok=True)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()
