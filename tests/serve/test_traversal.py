"""The red team's traversal spellings against ``serve`` that held, kept held: each is sent raw (no client normalises
it on the way) and is a one-line 404 that shows nothing of the lake, the files beside the reports or the system.
``tests/report/test_serve.py`` has the first ones (``../``, ``%2e%2e``, ``..%2f``, backslashes, NUL, symlinks out);
these are the other spellings."""

from __future__ import annotations

import pytest

from tests.report.test_serve import lake  # noqa: F401  (a fixture: reports, a lake file and a folder beside them)
from tests.serve.helpers import ask, running

LEAKS = (b"LAKE-FILE", b"LEAKED", b"root:", b"HIDDEN", b"TEMP")


@pytest.fixture
def port(lake):  # noqa: F811  (the fixture imported above)
    reports = lake / "reports"
    (reports / "root").symlink_to("/", target_is_directory=True)  # a folder link to the whole file system
    (reports / "up").symlink_to("..", target_is_directory=True)  # a relative one to the lake
    with running(reports) as server:
        yield server.server_address[1]


@pytest.mark.parametrize("target", [
    "/%252e%252e/%252e%252e/lake.json",  # encoded twice: decoded once, it is a name, not a step up
    "/%252e%252e%252flake.json", "/..%255c..%255clake.json", "/runs/%25%32%65%25%32%65/lake.json",
    "/.%2e/lake.json", "/%2e./lake.json", "/runs/.%2E/.%2E/lake.json",  # one dot encoded
    "/..;/lake.json", "/runs/..;/..;/lake.json",  # a parameter after the dots
    "/....//lake.json", "/.../lake.json",  # more dots
    "/%5c..%5clake.json", "/%5c%2e%2e%5clake.json", "/..\\lake.json",  # backslashes, encoded or not
    "/%c0%ae%c0%ae/lake.json", "/..%c0%aflake.json", "/%e0%80%ae%e0%80%ae/lake.json",  # overlong UTF-8
    "/%ef%bc%8e%ef%bc%8e/lake.json", "/%e2%80%a5/lake.json", "/%u002e%u002e/lake.json",  # look-alike dots
    "/runs/20261125T010000Z-aaaaaa/../../../lake.json", "/runs/linked-out/../../lake.json",
    "/{abs}", "/%2f{abs}", "/{abs_encoded}",  # the lake file's absolute path, plain and encoded
    "/etc/passwd", "/root/etc/passwd", "/root/{abs}", "/up/lake.json", "/root/proc/self/environ",  # links out
    "/report.html%00", "/%00/../lake.json", "/report.html%2500.png", "/lake.json%00.html",  # NUL, raw and encoded
    "http://127.0.0.1/../lake.json", "http://localhost/%2e%2e/lake.json", "*",  # not a path
    "/.git/../../lake.json", "/./.././lake.json", "/runs/./../../lake.json",
])
def test_traversal_spellings_are_a_404_that_shows_nothing(lake, port, target):  # noqa: F811
    absolute = str((lake / "lake.json").resolve()).lstrip("/")
    target = target.format(abs=absolute, abs_encoded=absolute.replace("/", "%2f"))
    head = f"GET {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode("latin-1")
    status, body = ask(port, head)
    assert status == 404 and body == b"404 Not Found\n", (target, status, body)
    assert not any(leak in body for leak in LEAKS)


def test_a_raw_nul_or_space_in_the_request_line_is_refused(port):
    for target in ("/report.html\0", "/../lake.json\0.html", "/ ../lake.json"):
        status, body = ask(port, f"GET {target} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode("latin-1"))
        assert status in (400, 404) and body in (b"400 Bad Request\n", b"404 Not Found\n"), target
