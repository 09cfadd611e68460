#!/usr/bin/env python3
"""A minimal HTTP object store on loopback (the shape of nginx WebDAV or bazel-remote's /ac/):
GET returns a stored body or 404, PUT stores the body. Prints its port first; logs every request to
the file named by its first argument as "<METHOD> <path> <bearer token or ->" lines. With a second
argument, a PUT must carry that bearer token (else 401)."""
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STORE = {}
LOG = sys.argv[1]
TOKEN = sys.argv[2] if len(sys.argv) > 2 else None


class Handler(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def _log(self):
        auth = self.headers.get("Authorization", "")
        token = auth[len("Bearer "):] if auth.startswith("Bearer ") else "-"
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(f"{self.command} {self.path} {token}\n")

    def _answer(self, status, body=b""):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)

    def do_GET(self):
        self._log()
        body = STORE.get(self.path)
        self._answer(200 if body is not None else 404, body or b"")

    def do_PUT(self):
        self._log()
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if TOKEN is not None and self.headers.get("Authorization") != f"Bearer {TOKEN}":
            self._answer(401)
            return
        STORE[self.path] = body
        self._answer(201)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
