"""A local S3-compatible server for the Delta store's tests: moto's ``ThreadedMotoServer`` on 127.0.0.1, run as a
process of its own (``python -m tests.lake.delta.s3server PORT``) until its stdin closes.

Why a process and not a thread of the test's own: delta-rs' ``DeltaTable.history`` (deltalake 1.6) keeps the GIL
while it lists the log over HTTP, so a server in the same interpreter can never answer it (the call hangs for
object_store's 180 s retry timeout).

Why PUT and POST run one at a time: moto checks ``If-None-Match: *`` and then stores the object, two steps that two
of its server threads can interleave; S3, MinIO and the others do the check and the write atomically, and a Delta
commit relies on that (two writers must never both create one version). Without the lock the race test would test
moto, not the store."""

from __future__ import annotations

import functools
import logging
import sys
import threading


def atomic_object_writes() -> None:
    """moto's object PUT (conditional put included) and POST (multipart completion) one at a time, for good."""
    from moto.s3.responses import S3Response

    lock = threading.Lock()
    for name in ("_key_response_put", "_key_response_post"):
        method = getattr(S3Response, name)

        @functools.wraps(method)
        def serialized(self, *args, _method=method, **kwargs):
            with lock:
                return _method(self, *args, **kwargs)

        setattr(S3Response, name, serialized)


def main(port: int) -> None:
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    atomic_object_writes()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    print("ready", flush=True)
    try:
        sys.stdin.read()  # until the test session closes our stdin (or dies: the pipe closes with it)
    finally:
        server.stop()


if __name__ == "__main__":
    main(int(sys.argv[1]))
