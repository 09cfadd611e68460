#!/usr/bin/env python3
"""A scripted fake LLM server on loopback, speaking the OpenAI and Anthropic wire formats.

Usage: fake_llm_server.py SCENARIO.json RECORD.jsonl

Binds 127.0.0.1 on a free port and prints the port as the first line of stdout. Each request
(any path) takes the next entry of the scenario's "responses" list, in order; when the list is
exhausted it answers 500. Every request is appended to RECORD.jsonl as
{"method", "path", "headers" (lower-cased names), "body"} BEFORE it is answered, so a client that
got an answer (or a timeout) can read it.

Scenario entry fields (all optional):
  "status": 200               HTTP status
  "headers": {"Retry-After": "2"}
  "reply": {"text": "...", "finish": "stop"|"length"|"refusal", "tokens_in": 11, "tokens_out": 22}
                              a chat answer, rendered in the wire format of the request's path:
                              /v1/messages -> Anthropic, anything else -> OpenAI Chat Completions
  "json": {...}               a JSON body as given
  "body": "..."               a raw body as given
  "body_bytes": N             a body of N bytes of 'x'
  "no_length": true           send no Content-Length: the body runs until the connection closes
  "delay": 0.5                seconds to wait before answering
  "action": "stall"           read the request, then send nothing for "seconds" (default 30)
  "action": "close"           read the request, then close the connection without an answer
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OPENAI_FINISH = {"stop": "stop", "length": "length", "refusal": "content_filter"}
ANTHROPIC_FINISH = {"stop": "end_turn", "length": "max_tokens", "refusal": "refusal"}


def render_reply(path, request_body, reply):
    try:
        model = json.loads(request_body).get("model", "fake-model")
    except ValueError:
        model = "fake-model"
    finish = reply.get("finish", "stop")
    tokens_in, tokens_out = reply.get("tokens_in", 0), reply.get("tokens_out", 0)
    if path.endswith("/v1/messages") or path == "/messages":
        return {
            "id": "msg_fake", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": reply.get("text", "")}],
            "stop_reason": ANTHROPIC_FINISH.get(finish, finish),
            "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
        }
    return {
        "id": "chatcmpl-fake", "object": "chat.completion", "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.get("text", "")},
                     "finish_reason": OPENAI_FINISH.get(finish, finish)}],
        "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out,
                  "total_tokens": tokens_in + tokens_out},
    }


class Script:
    def __init__(self, responses, record_path):
        self.responses = list(responses)
        self.record_path = record_path
        self.lock = threading.Lock()

    def take(self, record):
        with self.lock:
            with open(self.record_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(record) + "\n")
            if self.responses:
                return self.responses.pop(0)
        return {"status": 500, "json": {"error": {"message": "fake server: scenario exhausted"}}}


class Handler(BaseHTTPRequestHandler):
    script = None

    def log_message(self, fmt, *args):
        pass

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        record = {"method": self.command, "path": self.path,
                  "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
        entry = self.script.take(record)
        action = entry.get("action")
        if action == "stall":
            time.sleep(float(entry.get("seconds", 30)))
            self.close_connection = True
            return
        if action == "close":
            self.close_connection = True
            return
        time.sleep(float(entry.get("delay", 0)))
        if "reply" in entry:
            payload = json.dumps(render_reply(self.path, body, entry["reply"])).encode()
        elif "json" in entry:
            payload = json.dumps(entry["json"]).encode()
        elif "body_bytes" in entry:
            payload = b"x" * int(entry["body_bytes"])
        else:
            payload = entry.get("body", "").encode()
        self.send_response(int(entry.get("status", 200)))
        headers = {"Content-Type": "application/json"}
        headers.update(entry.get("headers", {}))
        for name, value in headers.items():
            self.send_header(name, value)
        if not entry.get("no_length"):
            self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        try:
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (size cap); that is the point of the test

    do_GET = handle_any
    do_POST = handle_any


def main():
    scenario_path, record_path = sys.argv[1], sys.argv[2]
    with open(scenario_path, encoding="utf-8") as f:
        scenario = json.load(f)
    Handler.script = Script(scenario.get("responses", []), record_path)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
