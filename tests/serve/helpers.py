"""A report server on 127.0.0.1 in a thread, and raw requests to it (a socket, so that the Host header, the request
line and the pace are exactly the test's)."""

from __future__ import annotations

import contextlib
import socket
import threading
from pathlib import Path
from typing import Iterator

from dialogbench.serve import make_server
from dialogbench.serve.server import ReportServer


@contextlib.contextmanager
def running(reports: Path, **options) -> Iterator[ReportServer]:
    server = make_server(reports=reports, host="127.0.0.1", port=0, **options)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def request(port: int, path: str = "/report.html", *, host: str | None = "localhost", version: str = "HTTP/1.1",
            headers: str = "") -> bytes:
    """The request head as a browser would send it (``host`` None: no Host header)."""
    host_line = f"Host: {host}\r\n" if host is not None else ""
    return f"GET {path} {version}\r\n{host_line}{headers}Connection: close\r\n\r\n".encode("latin-1")


def ask(port: int, head: bytes, *, timeout: float = 10) -> tuple[int, bytes]:
    """Send ``head`` raw, read the whole answer: its status and body."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(head)
        answer = bytearray()
        while chunk := sock.recv(65536):
            answer += chunk
    status_line, _, rest = bytes(answer).partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


def write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text, encoding="utf-8")
