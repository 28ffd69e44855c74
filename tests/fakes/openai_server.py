"""A minimal OpenAI-compatible chat endpoint for end-to-end tests: every chat completion answers the text of a
reply file (read at each request, so a test changes the served model's answers between runs by rewriting it),
and counts its requests. ``python -m tests.fakes.openai_server PORT REPLY_FILE`` serves until killed."""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class Handler(BaseHTTPRequestHandler):
    reply_file: Path
    requests = 0
    lock = threading.Lock()

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self.send_error(404)
            return
        with Handler.lock:
            Handler.requests += 1
        text = self.reply_file.read_text(encoding="utf-8")
        prompt = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
        payload = {"id": f"chatcmpl-{Handler.requests}", "object": "chat.completion", "created": 0,
                   "model": body.get("model", "fake"), "system_fingerprint": "fake-1",
                   "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                "finish_reason": "stop"}],
                   "usage": {"prompt_tokens": prompt, "completion_tokens": len(text.split()),
                             "total_tokens": prompt + len(text.split())}}
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        data = json.dumps({"requests": Handler.requests}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def serve(port: int, reply_file: Path) -> ThreadingHTTPServer:
    Handler.reply_file = Path(reply_file)
    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


if __name__ == "__main__":
    serve(int(sys.argv[1]), Path(sys.argv[2])).serve_forever()
