"""``dialogbench serve`` under connections that do not ask, or ask slowly, or stop reading: none takes a thread of
its own, the next real request is answered while they hang, and each is closed after the timeout (the red team's
3,000 idle connections made 3,003 threads and no answer for two minutes)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time

import pytest

from dialogbench.cli import main
from tests.serve.helpers import ask, request, running, write

HEAD = b"GET /report.html HTTP/1.1\r\nHost: localhost\r\n"  # the blank line that ends it never comes


@pytest.fixture
def reports(tmp_path):
    write(tmp_path / "lake" / "reports" / "report.html", "<p>latest</p>")
    return tmp_path / "lake" / "reports"


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10)


@pytest.mark.parametrize("hanging", [6, 60])  # beyond the 2 handlers; within the 8 that may wait, and far beyond
def test_hanging_connections_take_no_thread_and_a_request_is_still_answered(reports, hanging):
    with running(reports, workers=2, timeout_s=30) as server, contextlib.ExitStack() as stack:
        port, before = server.server_address[1], threading.active_count()  # its accepting and its waiting thread
        for n in range(hanging):  # half send nothing, half the start of a head
            sock = stack.enter_context(connect(port))
            if n % 2:
                sock.sendall(HEAD)
        time.sleep(0.3)  # all accepted and waiting
        threads = threading.active_count() - before
        start = time.monotonic()
        status, body = ask(port, request(port))
        took = time.monotonic() - start
    assert threads <= 0  # no handler runs while nothing has asked
    assert status == 200 and body == b"<p>latest</p>" and took < 2, took


def closed_after(sock: socket.socket) -> float:
    """Seconds until the server closes ``sock`` (its EOF, or a reset for the bytes it did not read)."""
    start = time.monotonic()
    with contextlib.suppress(ConnectionResetError):
        assert sock.recv(1024) == b""
    return time.monotonic() - start


def test_an_idle_or_slow_sending_connection_is_closed_after_the_timeout(reports):
    with running(reports, timeout_s=0.5) as server, connect(server.server_address[1]) as idle, \
            connect(server.server_address[1]) as slow:
        def trickle():  # a byte each 0.1 s: every read gets one, the head is never complete (a slow-loris)
            with contextlib.suppress(OSError):
                for byte in HEAD:
                    slow.send(bytes([byte]))
                    time.sleep(0.1)

        threading.Thread(target=trickle, daemon=True).start()
        assert 0.3 < closed_after(idle) < 3
        assert closed_after(slow) < 1  # its deadline counts from its accept, not from its last byte
        assert ask(server.server_address[1], request(0))[0] == 200  # and the server goes on answering


def test_a_client_that_stops_reading_the_answer_frees_its_handler_after_the_timeout(reports):
    write(reports / "big.json", b"[" + b"0," * 16_000_000 + b"0]")  # 32 MB: more than every buffer on the way holds
    with running(reports, workers=1, timeout_s=0.5) as server, socket.socket() as stalled:
        port = server.server_address[1]
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect(("127.0.0.1", port))
        stalled.sendall(request(port, "/big.json"))
        time.sleep(0.2)  # the only handler writes until the buffers are full, then waits
        start = time.monotonic()
        status, body = ask(port, request(port))
        took = time.monotonic() - start
    assert status == 200 and body == b"<p>latest</p>" and took < 3, took


def test_serve_refuses_more_connections_than_the_open_file_limit_allows(tmp_path, capsys):
    (tmp_path / "lake").mkdir()
    assert main(["serve", "--lake", str(tmp_path / "lake"), "--port", "0", "--max-connections", "10000000"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --max-connections 10000000 needs up to ") and "(ulimit -n)" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize("flags", [["--timeout", "0"], ["--timeout", "nan"], ["--timeout", "-1"],
                                   ["--max-connections", "0"]])
def test_serve_refuses_a_bad_timeout_or_cap_as_a_usage_error(tmp_path, flags):
    with pytest.raises(SystemExit) as info:
        main(["serve", "--lake", str(tmp_path), "--port", "0", *flags])
    assert info.value.code == 2
