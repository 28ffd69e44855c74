"""A read-only HTTP server for ``<lake>/reports`` (standard library only): GET and HEAD of the files ``files.servable``
allows, ``/`` as ``index.render_index``; every other method 405, every other path 404, each with a one-line plain
page. Responses say ``no-cache`` (a run replaces the files in place) and carry a Content-Security-Policy that lets the
pages' inline CSS and the explorer's inline script run and nothing load from anywhere. No file is written.

A connection waits for its request in ``room`` (no thread of its own; closed when its head is not complete within
``timeout`` seconds) and is then answered by one of at most ``workers`` threads, one request per connection
(HTTP/1.0: no keep-alive holds a thread between requests); each write of the answer gets ``timeout`` seconds too.
A request whose ``Host`` is not a name of this server (``hosts``: the DNS-rebinding case) is a 421."""

from __future__ import annotations

import errno
import os
import shutil
import io
import resource
import signal
import socket
import sys
from collections.abc import Iterable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

from dialogbench.serve.files import servable, url_segments
from dialogbench.serve.hosts import HostCheck
from dialogbench.serve.index import render_index
from dialogbench.serve.room import Arrival, HeadReader, WaitingRoom

# The pages are self-contained: inline <style>, the explorer's inline <script>, a data: favicon. Nothing else loads,
# no form posts, nothing frames them. Everything else (the index, SVG, Markdown, JSON, errors) runs no script at all.
NO_SCRIPT_POLICY = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
                    "form-action 'none'; frame-ancestors 'none'")
PAGE_POLICY = NO_SCRIPT_POLICY + "; script-src 'unsafe-inline'"
ALLOWED = "GET, HEAD"
WORKERS = 64  # requests answered at once
TIMEOUT_S = 5.0  # for a request head to arrive, and for each write of an answer
WAITING_PER_WORKER = 4  # connections that may wait for their request, per worker
# The one-line pages that say more than the status.
LINES = {HTTPStatus.MISDIRECTED_REQUEST: "421 Misdirected Request: this server does not answer to that Host "
                                         "(dialogbench serve --allow-host NAME admits a name)\n",
         HTTPStatus.BAD_REQUEST: "400 Bad Request\n"}


class ServeError(ValueError):
    """The server cannot start: the port is taken, the host cannot be bound."""


class ReportHandler(BaseHTTPRequestHandler):
    """One request; ``server.reports`` is the folder served, ``server.verbose`` logs a line per request."""

    server: ReportServer

    def setup(self) -> None:
        """The request's bytes come from the waiting room's arrival (what it read, then the socket within the
        deadline); the answer is written straight to the socket, each write within ``server.timeout_s``."""
        arrival: Arrival = self.request
        self.request = arrival.sock
        super().setup()  # the socket's files, as http.server has them
        self.connection.settimeout(self.server.timeout_s)
        self.rfile.close()
        self.rfile = io.BufferedReader(HeadReader(arrival, timeout=self.server.timeout_s))

    def version_string(self) -> str:
        return "dialogbench-serve"

    def parse_request(self) -> bool:
        """http.server's parsing, then the Host check: one Host naming this server (none: HTTP/1.0 and older only,
        which no browser sends), else 421 (a name it does not answer to) or 400 (none in HTTP/1.1, or several)."""
        if not super().parse_request():
            return False
        hosts = self.headers.get_all("Host") or []
        if len(hosts) > 1 or (not hosts and self.request_version not in ("HTTP/0.9", "HTTP/1.0")):
            self.send_error(HTTPStatus.BAD_REQUEST)
            return False
        if hosts and not self.server.hosts.admits(hosts[0]):
            self.send_error(HTTPStatus.MISDIRECTED_REQUEST)
            return False
        return True

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
        line = LINES.get(status, f"{status.value} {status.phrase}\n")
        self._send(line.encode(), "text/plain; charset=utf-8", NO_SCRIPT_POLICY,
                   body=getattr(self, "command", None) != "HEAD", code=status)

    def log_message(self, format: str, *args) -> None:  # noqa: A002  (http.server's signature)
        if self.server.verbose:
            sys.stderr.write(f"{self.address_string()} {format % args}\n")


class ReportServer(HTTPServer):
    """Serves ``reports`` (which may not exist yet: the index then says so): the accepting thread hands each
    connection to the waiting room, which hands a complete request to one of ``workers`` threads."""

    request_queue_size = 128  # socketserver's 5 drops a burst of connects (each retried a second or more later)

    def __init__(self, address: tuple[str, int], *, reports: Path, verbose: bool, hosts: HostCheck, workers: int,
                 timeout_s: float) -> None:
        self.reports, self.verbose, self.hosts, self.timeout_s = Path(reports), verbose, hosts, timeout_s
        super().__init__(address, ReportHandler)
        self.room = WaitingRoom(handle=self._answer, workers=workers, capacity=workers * WAITING_PER_WORKER,
                                timeout=timeout_s)

    def process_request(self, request: socket.socket, client_address) -> None:
        self.room.admit(request, client_address)

    def _answer(self, arrival: Arrival) -> None:
        """One request, in a worker thread (socketserver's ``process_request_thread``, for an arrival)."""
        try:
            self.finish_request(arrival, arrival.address)
        except Exception:  # noqa: BLE001  (one line from handle_error, then the next request)
            self.handle_error(arrival.sock, arrival.address)
        finally:
            self.shutdown_request(arrival.sock)

    def server_close(self) -> None:
        super().server_close()
        if hasattr(self, "room"):
            self.room.close()

    def handle_error(self, request, client_address) -> None:
        """A client that hangs up or stalls mid-answer is no error; anything else is one line, not a traceback."""
        exc = sys.exc_info()[1]
        if isinstance(exc, TimeoutError):  # a client that stopped reading the answer: dropped, not an error
            if self.verbose:
                sys.stderr.write(f"{client_address[0]} dropped: it read none of the answer for {self.timeout_s:g} s\n")
        elif not isinstance(exc, ConnectionError):
            sys.stderr.write(f"dialogbench serve: {client_address[0]}: {type(exc).__name__}: {exc}\n")


class ReportServer6(ReportServer):
    address_family = socket.AF_INET6


def make_server(*, reports: Path, host: str, port: int, verbose: bool = False, allow_hosts: Iterable[str] = (),
                workers: int = WORKERS, timeout_s: float = TIMEOUT_S) -> ReportServer:
    """A server bound to ``host:port`` (port 0: a free one) answering the Host names of ``hosts.HostCheck`` plus
    ``allow_hosts``, ``workers`` requests at a time; ``ServeError`` when it cannot be bound or when this process may
    not open the sockets that ``workers`` needs (``ulimit -n``)."""
    _check_files(workers)
    try:
        hosts = HostCheck(bound=[host], extra=allow_hosts)
    except ValueError as exc:
        raise ServeError(str(exc)) from None
    server_class = ReportServer6 if ":" in host else ReportServer
    try:
        server = server_class((host, port), reports=reports, verbose=verbose, hosts=hosts, workers=workers,
                              timeout_s=timeout_s)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise ServeError(f"port {port} on {host} is in use (another `dialogbench serve`?): "
                             "stop it or pass --port N") from None
        raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    server.hosts = HostCheck(bound=[host, server.server_address[0]], extra=allow_hosts)
    return server


def _check_files(workers: int) -> None:
    """Each worker's socket and file plus the waiting room's sockets must fit under the open-file limit, or the
    server would stop accepting (EMFILE) with the room full of idle connections."""
    needed = workers * (2 + WAITING_PER_WORKER) + 32
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft != resource.RLIM_INFINITY and needed > soft:
        raise ServeError(f"--max-connections {workers} needs up to {needed} open files and this process may open "
                         f"{soft} (ulimit -n): pass a smaller --max-connections or raise the limit")


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
