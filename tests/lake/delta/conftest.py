"""Fixtures for the Delta cell store: a local S3-compatible server (moto's ``ThreadedMotoServer`` on a free port of
127.0.0.1, in a process of its own: ``s3server.py`` says why) and a lake location that is a folder or a fresh bucket
on it, so every store test runs on both."""

from __future__ import annotations

import itertools
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

REPO = Path(__file__).resolve().parents[3]
ACCESS_KEY = "AKIADELTATESTKEY7Q2Z"  # distinctive, so the secrets test can look for them in any text
SECRET_KEY = "deltaTestSecret/kQ9+x7Vb2mN4pR8sT1uW3yZ5aC6dE0"
REGION = "eu-west-3"
_buckets = itertools.count()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def s3_server() -> Iterator[str]:
    """A moto S3 server for the session, started and stopped here; its endpoint URL."""
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "tests.lake.delta.s3server", str(port)], cwd=REPO,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ready", "moto did not start"
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        if server.stdin is not None:
            server.stdin.close()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture
def s3_env(s3_server: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The AWS_* variables for the server set (child processes inherit them), anything that would change how the
    store talks to S3 unset, and a fresh bucket; returns ``s3://<bucket>``."""
    import boto3

    for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_REGION", "AWS_S3_ALLOW_UNSAFE_RENAME",
                 "AWS_S3_LOCKING_PROVIDER", "AWS_CONDITIONAL_PUT", "AWS_ALLOW_HTTP"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server)
    bucket = f"delta-test-{next(_buckets)}"
    client = boto3.client("s3", endpoint_url=s3_server, region_name=REGION, aws_access_key_id=ACCESS_KEY,
                          aws_secret_access_key=SECRET_KEY)
    client.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": REGION})
    return f"s3://{bucket}"


@pytest.fixture(params=["local", "s3"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A lake location: a folder under tmp_path, or a prefix in a fresh bucket of the moto server."""
    if request.param == "local":
        return str(tmp_path / "lake")
    return request.getfixturevalue("s3_env") + "/lake"
