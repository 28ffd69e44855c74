"""``dialogbench serve``: a real server on a free port over a reports tree written here (the layout of README
"Serving the report"): the index lists boards and runs newest first, each file comes with its type and the
headers, nothing outside ``<lake>/reports`` (traversal in every spelling, a symlink out, hidden and temporary
files) nor any method but GET and HEAD is answered; the CLI starts, serves, stops on SIGTERM with exit 0, and
refuses a missing lake and a taken port with exit 2."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from dialogbench.cli import main
from dialogbench.serve import make_server, serve_until_stopped
from dialogbench.serve.files import servable, url_segments
from dialogbench.serve.index import NO_REPORT, render_index

REPO = Path(__file__).resolve().parents[2]
PNG = b"\x89PNG\r\n\x1a\n" + bytes(16)
SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"></svg>'


def run_json(run_id: str, board: str, finished: str, failed: str | None = None) -> str:
    return json.dumps({"run_id": run_id, "board": board, "config": f"configs/{board}.yaml",
                       "started_at": finished, "finished_at": finished, "failed": failed})


def write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text, encoding="utf-8")


@pytest.fixture
def lake(tmp_path) -> Path:
    """A lake whose reports hold the latest report, two boards and three runs (one failed, one without run.json),
    plus what must never be served: a file beside the reports, a symlink to it, hidden and temporary files."""
    lake, reports = tmp_path / "lake", tmp_path / "lake" / "reports"
    write(lake / "lake.json", '{"format": 4, "secret": "LAKE-FILE"}')
    write(tmp_path / "outside" / "run.json", run_json("LEAKED-RUN", "LEAKED-BOARD", "2030-01-01T00:00:00+00:00"))
    write(tmp_path / "outside" / "report.html", "<p>LEAKED</p>")
    for name in ("report.html", "explorer.html"):
        write(reports / name, f"<p>latest {name}</p>")
    write(reports / "report.md", "# latest\n")
    for board, run_id, when in (("nightly", "20261125T010000Z-aaaaaa", "2026-11-25T01:30:00+00:00"),
                                ("demo+limit=4", "20261126T090000Z-bbbbbb", "2026-11-26T09:10:00+00:00")):
        write(reports / "boards" / board / "report.html", f"<p>board {board}</p>")
        write(reports / "boards" / board / "run.json", run_json(run_id, board, when))
    runs = reports / "runs"
    write(runs / "20261124T010000Z-cccccc" / "report.html", "<p>oldest</p>")
    write(runs / "20261124T010000Z-cccccc" / "run.json",
          run_json("20261124T010000Z-cccccc", "nightly", "2026-11-24T01:40:00+00:00", failed="judge <down> & out"))
    write(runs / "20261125T010000Z-aaaaaa" / "report.html", "<p>run aaaaaa</p>")
    write(runs / "20261125T010000Z-aaaaaa" / "report.md", "# run aaaaaa\n")
    write(runs / "20261125T010000Z-aaaaaa" / "explorer.html", "<p>explorer aaaaaa</p>")
    write(runs / "20261125T010000Z-aaaaaa" / "run.json",
          run_json("20261125T010000Z-aaaaaa", "nightly", "2026-11-25T01:30:00+00:00"))
    write(runs / "no-record" / "report.html", "<p>no run.json</p>")  # its mtime (now): the newest
    write(reports / "figure.svg", SVG)
    write(reports / "figure.png", PNG)
    write(reports / ".secret", "HIDDEN")
    write(reports / ".secret.html", "HIDDEN")
    write(reports / ".git" / "report.html", "HIDDEN")
    write(reports / "draft.tmp" / "report.html", "TEMP")
    write(reports / "x.tmp", "TEMP")
    write(reports / ".report.html.abc123.tmp", "TEMP")
    write(reports / "notes.txt", "unknown type")
    (reports / "escape.html").symlink_to(tmp_path / "outside" / "report.html")
    (reports / "lake.json").symlink_to(lake / "lake.json")
    (runs / "linked-out").symlink_to(tmp_path / "outside", target_is_directory=True)
    (reports / "alias.html").symlink_to(reports / "report.html")  # a symlink within the folder is followed
    return lake


@contextlib.contextmanager
def running(reports: Path, *, verbose: bool = False) -> Iterator[int]:
    server = make_server(reports=reports, host="127.0.0.1", port=0, verbose=verbose)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def port(lake) -> Iterator[int]:
    with running(lake / "reports") as port:
        yield port


def fetch(port: int, path: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    """The raw request (http.client sends ``path`` as written: no dot segment is removed on the way)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def test_the_index_lists_the_latest_report_boards_and_runs_newest_first(port):
    status, headers, body = fetch(port, "/")
    page = body.decode()
    assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
    assert '<a href="report.html">report</a>' in page and '<a href="explorer.html">explorer</a>' in page
    boards = page.split("<h2>Boards</h2>")[1].split("<h2>Runs</h2>")[0]
    assert re.findall(r'href="(boards/[^"]+)"', boards) == ["boards/demo%2Blimit%3D4/report.html",
                                                           "boards/nightly/report.html"]
    assert "20261126T090000Z-bbbbbb" in boards and "2026-11-26 09:10 UTC" in boards
    runs = page.split("<h2>Runs</h2>")[1]
    assert re.findall(r'href="runs/([^/"]+)/report.html"', runs) == [
        "no-record", "20261125T010000Z-aaaaaa", "20261124T010000Z-cccccc"]
    assert ('<a href="runs/20261125T010000Z-aaaaaa/report.md">Markdown</a> · '
            '<a href="runs/20261125T010000Z-aaaaaa/explorer.html">explorer</a>') in runs
    assert "<strong>failed</strong>: judge &lt;down&gt; &amp; out" in runs and "<down>" not in runs
    assert "unknown (no run.json)" in runs and ">ok<" in runs
    assert "LEAKED" not in page  # the symlinked run folder leads outside: neither listed nor read
    assert "<script" not in page and "script-src" not in headers["content-security-policy"]


def test_the_index_caps_the_runs_and_counts_the_rest(lake):
    page = render_index(lake / "reports", run_limit=2)
    assert len(re.findall(r'href="runs/[^/"]+/report.html"', page)) == 2
    assert "and 1 older run(s), not listed" in page


def test_a_lake_without_reports_is_served_with_an_index_saying_so(tmp_path):
    (tmp_path / "lake").mkdir()
    with running(tmp_path / "lake" / "reports") as port:
        status, _, body = fetch(port, "/")
        assert status == 200 and NO_REPORT in body.decode()
        assert fetch(port, "/report.html")[0] == 404


def test_an_unreadable_run_json_is_named_not_fatal(lake):
    (lake / "reports" / "runs" / "20261125T010000Z-aaaaaa" / "run.json").write_text("{not json")
    (lake / "reports" / "boards" / "nightly" / "run.json").write_text("[1, 2]")
    page = render_index(lake / "reports")
    assert "20261125T010000Z-aaaaaa/run.json unreadable: Expecting property name" in page
    assert "nightly/run.json is not a JSON object" in page


@pytest.mark.parametrize(("path", "content_type", "expected"), [
    ("/report.html", "text/html; charset=utf-8", b"<p>latest report.html</p>"),
    ("/report.md", "text/markdown; charset=utf-8", b"# latest\n"),
    ("/explorer.html", "text/html; charset=utf-8", b"<p>latest explorer.html</p>"),
    ("/boards/demo%2Blimit%3D4/report.html", "text/html; charset=utf-8", b"<p>board demo+limit=4</p>"),
    ("/boards/demo+limit=4/report.html", "text/html; charset=utf-8", b"<p>board demo+limit=4</p>"),
    ("/runs/20261125T010000Z-aaaaaa/report.md?x=1", "text/markdown; charset=utf-8", b"# run aaaaaa\n"),
    ("/runs/20261125T010000Z-aaaaaa/run.json", "application/json", None),
    ("/figure.svg", "image/svg+xml", SVG.encode()),
    ("/figure.png", "image/png", PNG),
    ("/alias.html", "text/html; charset=utf-8", b"<p>latest report.html</p>"),
])
def test_each_file_is_served_with_its_type_and_the_headers(port, path, content_type, expected):
    status, headers, body = fetch(port, path)
    assert status == 200 and headers["content-type"] == content_type
    assert headers["content-length"] == str(len(body))
    assert headers["cache-control"] == "no-cache" and headers["x-content-type-options"] == "nosniff"
    assert "default-src 'none'" in headers["content-security-policy"]
    assert ("script-src 'unsafe-inline'" in headers["content-security-policy"]) == path.endswith(".html")
    assert body == expected if expected is not None else json.loads(body)["board"] == "nightly"


@pytest.mark.parametrize("path", [
    "/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/runs/../../lake.json", "/runs/%2E%2E/%2e%2e/lake.json",
    "/..%2f..%2flake.json", "/runs/..%5c..%5clake.json", "/runs\\..\\..\\lake.json", "//etc/passwd",
    "/%2fetc%2fpasswd", "/report.html%00.png", "/%ff.html", "/escape.html", "/lake.json",
    "/runs/linked-out/report.html", "/runs/linked-out/run.json", "/.secret", "/.secret.html", "/.git/report.html",
    "/x.tmp", "/draft.tmp/report.html",
    "/.report.html.abc123.tmp", "/notes.txt", "/runs", "/runs/", "/boards/nightly/", "/missing.html",
])
def test_paths_outside_the_reports_or_not_published_are_refused(port, path):
    status, headers, body = fetch(port, path)
    assert status == 404 and body == b"404 Not Found\n"
    assert headers["content-type"] == "text/plain; charset=utf-8" and headers["x-content-type-options"] == "nosniff"


def test_url_segments_normalise_or_refuse():
    assert url_segments("//runs/./x//report.html?q#f") == ["runs", "x", "report.html"]
    assert url_segments("/boards/demo%2Blimit%3D4/") == ["boards", "demo+limit=4"]
    for refused in ("/a/../b", "/%2e%2e", "/a%5cb", "/a%00", "/%c3%28", "/.git/config", "/a.tmp/b"):
        assert url_segments(refused) is None, refused


def test_a_symlink_out_of_the_folder_is_refused_where_it_resolves(lake):
    root = (lake / "reports").resolve()
    assert servable(root, "/alias.html") == (root / "report.html", "text/html; charset=utf-8")
    assert servable(root, "/escape.html") is None and servable(root, "/runs/linked-out/report.html") is None


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "FOO"])
def test_only_get_and_head_are_answered(port, method):
    status, headers, body = fetch(port, "/report.html", method)
    assert status == 405 and headers["allow"] == "GET, HEAD" and body == b"405 Method Not Allowed\n"


def test_head_sends_the_headers_of_get_and_no_body(port):
    get_status, get_headers, get_body = fetch(port, "/report.html")
    status, headers, body = fetch(port, "/report.html", "HEAD")
    assert status == get_status == 200 and body == b""
    assert headers["content-length"] == get_headers["content-length"] == str(len(get_body))
    assert headers["content-type"] == get_headers["content-type"]
    assert fetch(port, "/", "HEAD")[2] == b"" and fetch(port, "/nope.html", "HEAD")[:3:2] == (404, b"")


@pytest.mark.parametrize("verbose", [False, True])
def test_verbose_logs_one_line_per_request_and_quiet_logs_none(lake, capsys, verbose):
    with running(lake / "reports", verbose=verbose) as port:
        for path in ("/", "/report.html", "/../lake.json"):
            fetch(port, path)
        fetch(port, "/", "POST")
    lines = capsys.readouterr().err.splitlines()
    if verbose:
        assert [re.sub(r".*\"(.*)\" (\d+) .*", r"\1 \2", line) for line in lines] == [
            "GET / HTTP/1.1 200", "GET /report.html HTTP/1.1 200", "GET /../lake.json HTTP/1.1 404",
            "POST / HTTP/1.1 405"]
    else:
        assert lines == []


def cli(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "dialogbench.cli", "serve", *args], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})


def test_the_cli_serves_until_sigterm_and_exits_0(lake):
    proc = cli("--lake", str(lake), "--port", "0")
    try:
        first = proc.stdout.readline()
        found = re.fullmatch(r"serving (\S+) at http://127\.0\.0\.1:(\d+)/ .*\n", first)
        assert found and found[1] == str(lake / "reports"), first
        status, _, body = fetch(int(found[2]), "/runs/20261125T010000Z-aaaaaa/report.html")
        assert status == 200 and body == b"<p>run aaaaaa</p>"
        assert fetch(int(found[2]), "/../lake.json")[0] == 404
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 0 and out == "stopped (SIGTERM)\n" and err == ""  # quiet without --verbose


def test_a_sigterm_while_a_request_is_taken_stops_the_server(lake):
    """The signal lands in the main thread while socketserver is inside ``process_request`` (its ``except
    Exception`` there once swallowed the stop: the server printed it and went on serving)."""
    server = make_server(reports=lake / "reports", host="127.0.0.1", port=0, verbose=False)
    take = server.process_request

    def process_request(request, client_address):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.2)  # the handler runs here, between two bytecodes of this frame
        take(request, client_address)

    def client():
        with contextlib.suppress(ConnectionError):  # the stopping server may hang up on it
            fetch(server.server_address[1], "/report.html")

    server.process_request = process_request
    threading.Thread(target=client, daemon=True).start()
    fallback = threading.Timer(15, server.shutdown)  # the bug: serve_forever would never return by itself
    fallback.start()
    try:
        assert serve_until_stopped(server) == "SIGTERM"
    finally:
        fallback.cancel()


def test_the_cli_refuses_a_port_in_use_with_exit_2(lake):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = cli("--lake", str(lake), "--port", str(port))
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and out == ""
    assert err == (f"error: port {port} on 127.0.0.1 is in use (another `dialogbench serve`?): "
                   "stop it or pass --port N\n")


def test_serve_refuses_a_lake_that_does_not_exist(tmp_path, capsys):
    missing = tmp_path / "no-such-lake"
    assert main(["serve", "--lake", str(missing), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert f"error: {missing}: no lake here" in err and "Traceback" not in err and not missing.exists()


def test_serve_refuses_a_bad_port_as_a_usage_error(tmp_path):
    with pytest.raises(SystemExit) as info:
        main(["serve", "--lake", str(tmp_path), "--port", "70000"])
    assert info.value.code == 2


def test_serve_refuses_an_address_it_cannot_listen_on(tmp_path, capsys):
    assert main(["serve", "--lake", str(tmp_path), "--host", "192.0.2.1", "--port", "0"]) == 2  # TEST-NET-1
    err = capsys.readouterr().err
    assert err.startswith("error: cannot listen on 192.0.2.1:0: ") and "Traceback" not in err
