#!/usr/bin/env python3
"""A minimal HTTP object store on loopback (the shape of nginx WebDAV or bazel-remote's /ac/):
GET returns a stored body or 404, PUT stores the body. Prints its port first; logs every request to
the file named by its argument as "<METHOD> <path>" lines."""
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STORE = {}
LOG = sys.argv[1]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def _log(self):
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(f"{self.command} {self.path}\n")

    def do_GET(self):
        self._log()
        body = STORE.get(self.path)
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Length", str(len(body or b"")))
        self.end_headers()
        if body:
            self.wfile.write(body)

    def do_PUT(self):
        self._log()
        STORE[self.path] = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(201)
        self.send_header("Content-Length", "0")
        self.end_headers()


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
