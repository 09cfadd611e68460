#!/usr/bin/env python3
"""A hostile shared cache on loopback: answers every GET /ac/<key> with an entry for that key made
to fool egg-gen, and accepts every PUT without storing it. Prints its port first.

    hostile_server.py <mode> [<team key>]

modes: forged     well-formed, self-consistent (digests match), record "verified", kernel.cu is
                  arbitrary text, no signature
       wrong_key  the same, signed with another key
       signed_junk signed with the team's key (a writer gone rogue), kernel.cu does not compile
       bad_name   signed, with a file named ../../escaped
The signature is EGG's (generator/cache/signature.h): HMAC-SHA256 over length-prefixed fields."""
import hashlib
import hmac
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = sys.argv[1]
TEAM_KEY = sys.argv[2] if len(sys.argv) > 2 else ""
EVIL = "this is not a kernel; it is whatever the server wants built into your program\n"


def sign(secret, key, files):
    fields = ["egg-remote-cache-entry-v1", key]
    for name in sorted(files):
        fields += [name, hashlib.sha256(files[name].encode()).hexdigest()]
    text = b"".join(b"%d:%s" % (len(f.encode()), f.encode()) for f in fields)
    return {"alg": "hmac-sha256",
            "value": hmac.new(secret.encode(), text, hashlib.sha256).hexdigest()}


def entry(key):
    record = {"candidate": "evil", "status": {"sm_90": {"state": "verified", "text": "verified"}}}
    files = {"kernel.cu": EVIL, "header.h": "#pragma once\n", "record.json": json.dumps(record)}
    if MODE == "bad_name":
        files["../../escaped"] = EVIL
    body = {"key": key, "fields": {}, "files": files,
            "sha256": {n: hashlib.sha256(c.encode()).hexdigest() for n, c in files.items()}}
    if MODE == "wrong_key":
        body["signature"] = sign("not the team's key, but long enough", key, files)
    elif MODE in ("signed_junk", "bad_name"):
        body["signature"] = sign(TEAM_KEY, key, files)
    return json.dumps(body).encode()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def _answer(self, status, body=b""):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)

    def do_GET(self):
        key = self.path.rsplit("/", 1)[-1]
        self._answer(200, entry(key))

    def do_PUT(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self._answer(201)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
