"""``dialogbench serve`` answers only requests whose ``Host`` names it: a page that rebinds its own domain to
127.0.0.1 (DNS rebinding) still sends its domain as Host, and gets a 421, not the reports. ``--allow-host`` adds a
name; HTTP/1.1 without a Host, or with two, is a 400; HTTP/1.0 without one (no browser sends it) is answered."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys

import pytest

from dialogbench.cli import main
from dialogbench.serve import ServeError, make_server
from dialogbench.serve.hosts import HostCheck, allowed_name, host_name
from tests.serve.helpers import ask, request, running, write

REFUSED = b"421 Misdirected Request: this server does not answer to that Host " \
          b"(dialogbench serve --allow-host NAME admits a name)\n"


@pytest.fixture
def reports(tmp_path):
    write(tmp_path / "lake" / "reports" / "report.html", "<p>latest</p>")
    return tmp_path / "lake" / "reports"


@pytest.fixture
def port(reports):
    with running(reports, timeout_s=5) as server:
        yield server.server_address[1]


@pytest.mark.parametrize("host", ["localhost", "localhost:{port}", "LocalHost.:{port}", "127.0.0.1",
                                  "127.0.0.1:{port}", "127.8.9.10:{port}", "[::1]", "[::1]:{port}",
                                  "[::ffff:127.0.0.1]:{port}"])
def test_the_loopback_names_are_answered_with_or_without_the_port(port, host):
    assert ask(port, request(port, host=host.format(port=port))) == (200, b"<p>latest</p>")


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "localhost.evil.example:{port}",
                                  "127.0.0.1.nip.io:{port}", "10.0.0.1:{port}", "[2001:db8::1]:{port}", "",
                                  "localhost:http", "user@localhost", "localhost:{port}/x", "[::1", "::1",
                                  "0x7f000001", "2130706433", "local host"])
def test_any_other_host_is_refused_with_one_line(port, host):
    assert ask(port, request(port, host=host.format(port=port))) == (421, REFUSED)


def test_a_head_request_from_another_host_gets_no_body(port):
    head = f"HEAD /report.html HTTP/1.1\r\nHost: evil.example:{port}\r\nConnection: close\r\n\r\n".encode()
    assert ask(port, head) == (421, b"")


def test_a_missing_host_is_answered_in_http_1_0_only_and_two_hosts_never(port):
    assert ask(port, request(port, host=None, version="HTTP/1.0")) == (200, b"<p>latest</p>")
    assert ask(port, request(port, host=None)) == (400, b"400 Bad Request\n")
    assert ask(port, request(port, headers="Host: evil.example\r\n")) == (400, b"400 Bad Request\n")


def test_allowed_hosts_are_answered_too(reports):
    with running(reports, allow_hosts=["Reports.LAN", "[2001:db8::7]"]) as server:
        port = server.server_address[1]
        for host in ("reports.lan", f"reports.lan.:{port}", f"[2001:db8::7]:{port}", f"localhost:{port}"):
            assert ask(port, request(port, host=host))[0] == 200, host
        assert ask(port, request(port, host="other.lan"))[0] == 421


def test_the_bound_address_and_with_a_wildcard_bind_this_machines_name_and_addresses_are_answered():
    bound = HostCheck(bound=["192.0.2.1"])
    assert bound.admits("192.0.2.1:8765") and not bound.admits("192.0.2.2:8765")
    assert not bound.admits(f"{socket.gethostname()}:8765")
    wildcard = HostCheck(bound=["0.0.0.0"])
    assert wildcard.admits(f"{socket.gethostname()}:8765") and wildcard.admits("192.0.2.2:8765")
    assert not wildcard.admits("evil.example:8765")
    assert HostCheck(bound=["gpu-box.lan"]).admits("GPU-BOX.lan:8765")


def test_host_names_are_parsed_strictly(tmp_path):
    assert host_name("Example.COM.:80") == "example.com" and host_name("[::1]:8") == "::1"
    for bad in ("a b", "[::1]x", "[zz]", "x:", "x:123456", "a..b", "-", "x/y"):
        assert host_name(bad) is None, bad
    assert allowed_name(" Box.Lan ") == "box.lan" and allowed_name("[::1]") == "::1"
    for bad in ("http://box", "box:8765", "box/x", "", "a b"):
        with pytest.raises(ValueError, match="--allow-host"):
            allowed_name(bad)
    with pytest.raises(ServeError, match="--allow-host 'box:1'"):
        make_server(reports=tmp_path, host="127.0.0.1", port=0, allow_hosts=["box:1"])


def test_the_cli_flag_admits_a_named_host(reports):
    proc = subprocess.Popen([sys.executable, "-m", "dialogbench.cli", "serve", "--lake", str(reports.parent),
                             "--port", "0", "--allow-host", "reports.lan", "--allow-host", "box"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        found = re.fullmatch(r"serving \S+ at http://127\.0\.0\.1:(\d+)/ .*\n", proc.stdout.readline())
        assert found
        port = int(found[1])
        assert ask(port, request(port, host=f"reports.lan:{port}"))[0] == 200
        assert ask(port, request(port, host="box"))[0] == 200
        assert ask(port, request(port, host=f"evil.example:{port}")) == (421, REFUSED)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 0 and err == ""


@pytest.mark.parametrize("value", ["http://reports.lan", "reports.lan:8765", "a/b", ""])
def test_the_cli_refuses_a_bad_allowed_host_as_a_usage_error(tmp_path, capsys, value):
    with pytest.raises(SystemExit) as info:
        main(["serve", "--lake", str(tmp_path), "--port", "0", "--allow-host", value])
    assert info.value.code == 2 and "--allow-host: expected a host name or address" in capsys.readouterr().err
