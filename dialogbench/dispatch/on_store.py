"""Dispatch's state on an object store, for a lake whose tables are there (``lake: s3://…``, docs/lake-format.md):
the units' attempt tokens, their heartbeats and the dispatching run's own beat, as small objects under
``<store>/_dispatch/`` that every box reaches, where a folder lake keeps them as files in ``_state/attempts`` under
POSIX locks (``units.py``). An object store has no locks, no rename and no mtime to trust across machines, so:

- **One writer per object.** The dispatching run alone writes a unit's token (``attempts/<unit>.json``: ``grant``,
  ``revoke``) and its own beat (``runs/<run id>.json``); an attempt alone writes its beat
  (``attempts/<unit>.<token>.beat``). No two writers race on an object: a plain put is enough.
- **Liveness on the reader's clock.** A beat is a counter that its writer raises every ``BEAT_S``; a reader notes,
  on its own clock, when it last saw the object change (``changed_at``), so no clock of another machine is trusted.
  The dispatching run presumes an attempt dead when its beat has not changed for ``dispatch.dead_after_s``, as on a
  folder; an attempt takes its dispatching run for gone (its lease, on a folder) when the run's beat is missing,
  says it ended, or has not changed for the ``dead_after_s`` the run wrote into it, and then commits nothing more.
- **Checked before each commit.** Each Delta commit of an attempt first reads its token and its run's beat
  (``commit_guard``); there is no lock between that check and the commit, so an attempt revoked in that instant
  may land one commit more. On a Delta lake that cannot double a cell (each commit is a MERGE on the cell key), and
  the cells it adds are the ones the next attempt would compute.

Nothing here is needed on a folder lake, whose lease and record locks already do all of it."""

from __future__ import annotations

import functools
import json
import threading
import time
from typing import Any

PREFIX = "_dispatch"  # under the lake's store root, beside its tables (a name no table may take: leading "_")
FIRST_CHANGE_WAIT_S = 12.0  # how long an attempt waits, at its start, to see its dispatching run's beat change
_SEEN: dict[tuple[str, str], tuple[bytes, float]] = {}  # (store, object) -> (its content, when first seen so)
_SEEN_LOCK = threading.Lock()


@functools.lru_cache(maxsize=8)
def _handler(uri: str):
    """A file system handler on ``<uri>/_dispatch`` with the lake's storage options (credentials from AWS_*)."""
    from deltalake.fs import DeltaStorageHandler

    from dialogbench.lake.delta.location import Location

    location = Location.parse(uri)
    return DeltaStorageHandler(f"{location.root}/{PREFIX}", location.storage_options().as_dict())


def put(uri: str, name: str, data: dict[str, Any]) -> None:
    # delta-rs's own stream: the pyarrow file deltalake 1.6 wraps it in hands it pyarrow Buffers, which it refuses
    out = _handler(uri)._handler.open_output_stream(name, None)
    try:
        out.write(json.dumps(data, sort_keys=True).encode())
    finally:
        out.close()


def get_bytes(uri: str, name: str) -> bytes | None:
    """The object's bytes, None when there is none."""
    handler = _handler(uri)
    try:
        with handler.open_input_file(name) as source:
            return source.read()
    except FileNotFoundError:
        return None


def get(uri: str, name: str) -> dict:
    data = get_bytes(uri, name)
    return json.loads(data) if data else {}


def changed_at(uri: str, name: str) -> float | None:
    """When this process first saw the object as it is now (``time.time()``); None when there is none. The first
    sight of an object counts as a change."""
    return _observed(uri, name)[1]


def _observed(uri: str, name: str) -> tuple[dict, float | None]:
    """The object's content (one read) and ``changed_at``'s answer for it."""
    data = get_bytes(uri, name)
    if data is None:
        return {}, None
    now = time.time()
    with _SEEN_LOCK:
        seen = _SEEN.get((uri, name))
        if seen is None or seen[0] != data:
            _SEEN[(uri, name)] = (data, now)
        else:
            now = seen[1]
    return json.loads(data), now


def token_name(unit: str) -> str:
    return f"attempts/{unit}.json"


def beat_name(unit: str, token: str) -> str:
    return f"attempts/{unit}.{token}.beat"


def run_name(run_id: str) -> str:
    return f"runs/{run_id}.json"


class Beating:
    """A thread that raises the counter of ``name`` every ``every_s`` (``data`` beside it) until ``stop``; the last
    put carries what ``stop`` is given (``ended=True``)."""

    def __init__(self, uri: str, name: str, every_s: float, data: dict[str, Any] | None = None) -> None:
        self.uri, self.name, self.every_s, self.data = uri, name, every_s, dict(data or {})
        self.count, self._stop = 0, threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"beat {name}", daemon=True)

    def _beat(self, **more: Any) -> None:
        self.count += 1
        put(self.uri, self.name, {**self.data, "beat": self.count, **more})

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            try:
                self._beat()
            except Exception:  # the store unreachable for a moment: the next beat tries again
                pass

    def start(self) -> "Beating":
        self._beat()  # at once: the first sight of it is a sign of life
        self.thread.start()
        return self

    def stop(self, **last: Any) -> None:
        self._stop.set()
        self.thread.join()
        if last:
            try:
                self._beat(**last)
            except Exception:
                pass


def run_gone(uri: str, run_id: str, *, wait_first_s: float = 0.0) -> str | None:
    """Why the dispatching run ``run_id`` is to be taken for gone (its beat missing, ended, or unchanged for its
    ``dead_after_s`` on this process's clock), None while it beats. ``wait_first_s``: at an attempt's start, how long
    to wait for the beat to change once, when this process has not seen it change yet (a dead run's last beat
    looks fresh on first sight)."""
    name = run_name(run_id)
    first = (uri, name) not in _SEEN
    held, since = _observed(uri, name)
    if since is None:
        return "its beat on the store is missing"
    if held.get("ended"):
        return "it ended"
    if first and wait_first_s > 0:
        deadline = time.monotonic() + wait_first_s
        while time.monotonic() < deadline:
            time.sleep(min(1.0, wait_first_s / 4))
            if changed_at(uri, name) != since:
                return run_gone(uri, run_id)
        return f"its beat on the store did not change in {wait_first_s:.0f}s"
    dead_after = float(held.get("dead_after_s", 120.0))
    silent = time.time() - since
    return f"its beat on the store has not changed for {silent:.0f}s" if silent > dead_after else None
