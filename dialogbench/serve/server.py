"""A read-only HTTP server for ``<lake>/reports`` (standard library only): GET and HEAD of the files ``files.servable``
allows, ``/`` as ``index.render_index``; every other method 405, every other path 404, each with a one-line plain
page. Responses say ``no-cache`` (a run replaces the files in place) and carry a Content-Security-Policy that lets the
pages' inline CSS and the explorer's inline script run and nothing load from anywhere. No file is written."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import socket
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from dialogbench.serve.files import servable, url_segments
from dialogbench.serve.index import render_index

# The pages are self-contained: inline <style>, the explorer's inline <script>, a data: favicon. Nothing else loads,
# no form posts, nothing frames them. Everything else (the index, SVG, Markdown, JSON, errors) runs no script at all.
NO_SCRIPT_POLICY = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
                    "form-action 'none'; frame-ancestors 'none'")
PAGE_POLICY = NO_SCRIPT_POLICY + "; script-src 'unsafe-inline'"
ALLOWED = "GET, HEAD"


class ServeError(ValueError):
    """The server cannot start: the port is taken, the host cannot be bound."""


class ReportHandler(BaseHTTPRequestHandler):
    """One request; ``server.reports`` is the folder served, ``server.verbose`` logs a line per request."""

    server: ReportServer

    def version_string(self) -> str:
        return "dialogbench-serve"

    def do_GET(self) -> None:  # noqa: N802  (http.server's naming)
        self._answer(body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(body=False)

    def __getattr__(self, name: str):
        """Every other method (``do_POST``, ``do_PUT``, ``do_FOO``...) is 405, not http.server's 501."""
        if name.startswith("do_"):
            return lambda: self.send_error(HTTPStatus.METHOD_NOT_ALLOWED)
        raise AttributeError(name)

    def _answer(self, *, body: bool) -> None:
        reports = self.server.reports
        if url_segments(self.path) == []:  # "/", "//", "/?x"
            self._send(render_index(reports).encode(), "text/html; charset=utf-8", NO_SCRIPT_POLICY, body=body)
            return
        found = servable(reports.resolve(), self.path) if reports.is_dir() else None
        if found is None:
            self.send_error(HTTPStatus.NOT_FOUND)
            return
        path, content_type = found
        try:
            handle = open(path, "rb")  # noqa: SIM115  (closed below)
        except OSError:  # removed since it was resolved
            self.send_error(HTTPStatus.NOT_FOUND)
            return
        with handle:
            size = os.fstat(handle.fileno()).st_size
            policy = PAGE_POLICY if content_type.startswith("text/html") else NO_SCRIPT_POLICY
            self._head(HTTPStatus.OK, content_type, size, policy)
            if body:
                shutil.copyfileobj(handle, self.wfile, 256 * 1024)

    def _send(self, data: bytes, content_type: str, policy: str, *, body: bool, code: int = HTTPStatus.OK) -> None:
        self._head(code, content_type, len(data), policy)
        if body:
            self.wfile.write(data)

    def _head(self, code: int, content_type: str, size: int, policy: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(size))
        self.send_header("Cache-Control", "no-cache")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", policy)
        self.send_header("Referrer-Policy", "no-referrer")
        if code == HTTPStatus.METHOD_NOT_ALLOWED:
            self.send_header("Allow", ALLOWED)
        self.end_headers()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """A one-line plain page for every error, ours and http.server's (a malformed request, a line too long)."""
        status = HTTPStatus(code)
        self.close_connection = True
        self._send(f"{status.value} {status.phrase}\n".encode(), "text/plain; charset=utf-8", NO_SCRIPT_POLICY,
                   body=getattr(self, "command", None) != "HEAD", code=status)

    def log_message(self, format: str, *args) -> None:  # noqa: A002  (http.server's signature)
        if self.server.verbose:
            sys.stderr.write(f"{self.address_string()} {format % args}\n")


class ReportServer(ThreadingHTTPServer):
    """Serves ``reports`` (which may not exist yet: the index then says so); a thread per request."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], *, reports: Path, verbose: bool) -> None:
        self.reports, self.verbose = Path(reports), verbose
        super().__init__(address, ReportHandler)

    def handle_error(self, request, client_address) -> None:
        """A client that hangs up mid-answer is no error; anything else is one line, not a traceback."""
        exc = sys.exc_info()[1]
        if not isinstance(exc, ConnectionError):
            sys.stderr.write(f"dialogbench serve: {client_address[0]}: {type(exc).__name__}: {exc}\n")


class ReportServer6(ReportServer):
    address_family = socket.AF_INET6


def make_server(*, reports: Path, host: str, port: int, verbose: bool = False) -> ReportServer:
    """A server bound to ``host:port`` (port 0: a free one); ``ServeError`` when it cannot be bound."""
    server_class = ReportServer6 if ":" in host else ReportServer
    try:
        return server_class((host, port), reports=reports, verbose=verbose)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise ServeError(f"port {port} on {host} is in use (another `dialogbench serve`?): "
                             "stop it or pass --port N") from None
        raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def url(server: ReportServer) -> str:
    """The address the server answers at (``0.0.0.0`` / ``::`` as this machine's host name)."""
    host, port = server.server_address[:2]
    if host in ("0.0.0.0", "::"):
        host = socket.gethostname()
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


class _Stop(BaseException):
    """SIGTERM's way out of ``serve_forever``. Not an ``Exception``: socketserver catches those around
    ``process_request`` and hands them to ``handle_error``, so a SIGTERM landing while a request was being taken
    would be printed and the server would go on serving."""


def serve_until_stopped(server: ReportServer) -> str:
    """Serve until Ctrl-C or SIGTERM; returns the signal's name. The server is closed on the way out."""

    def stop(signum, frame):
        raise _Stop(signal.Signals(signum).name)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        return "SIGINT"
    except _Stop as stopped:
        return str(stopped)
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.server_close()
    return "shutdown"
