"""Find the lake's damaged files, name them and move them aside (``lake.quarantine``) so the next run recomputes
their cells. ``quick_check`` is every run's start (size, mtime, Parquet footer: no full read); ``verify`` is the
``dialogbench verify`` command (every byte against its sha256: the check that sees a flipped bit). Both also
finish an interrupted ``repair`` (remove files a committed rewrite supersedes) and refresh a record whose file
was only touched (same checksum, new mtime), so reads stop re-hashing it. Files with no record are not the
lake's: they are left out of every query and left in place; ``adopt`` records the ones that read whole."""

from __future__ import annotations

import dataclasses
import logging

import pyarrow.parquet as pq

from dialogbench.lake import manifest
from dialogbench.lake.health import Damaged, Snapshot
from dialogbench.lake.quarantine import quarantine
from dialogbench.lake.store import QUARANTINE, Lake

log = logging.getLogger("dialogbench.lake")
NOT_TABLES = {QUARANTINE, "reports", "raw"}


def tables_on_disk(lake: Lake) -> list[str]:
    """Every top-level folder of the lake that may hold Parquet files (tables, ``_state``)."""
    if not lake.root.is_dir():
        return []
    return sorted(p.name for p in lake.root.iterdir() if p.is_dir() and p.name not in NOT_TABLES)


def scan(lake: Lake, level: str) -> dict[str, Snapshot]:
    return {table: lake.snapshot(table, level) for table in tables_on_disk(lake)}


def quick_check(lake: Lake) -> list[Damaged]:
    """The run-start check: quarantines committed files that are missing, truncated, altered (size, footer row
    count, or checksum when the mtime moved) or unreadable, and returns them. Call it with no writer running."""
    snaps = scan(lake, "footer")
    damaged = _settle(lake, snaps)
    for d in _unrecorded(snaps):
        log.warning("not the lake's (left out of every query): %s; `dialogbench verify --adopt` records it if it "
                    "reads whole", d.line(lake.root))
    return damaged


def verify(lake: Lake, *, adopt: bool = False) -> list[Damaged]:
    """Check every byte of every committed file; quarantine the damaged ones. Returns what is wrong: the
    quarantined files, and files with no record (adopted instead with ``adopt``: recorded if they read whole,
    quarantined if not)."""
    snaps = scan(lake, "full")
    damaged = _settle(lake, snaps)
    strays = _unrecorded(snaps)
    if adopt:
        unreadable = [d for d in (_adopt(d) for d in strays) if d is not None]
        quarantine(lake, unreadable)
        return damaged + unreadable
    return damaged + strays


def adopt(lake: Lake) -> tuple[int, list[Damaged]]:
    """Record every file with no record that reads whole; quarantine the ones that do not (an older lake's
    migration to format 4). Returns how many were adopted, and the quarantined ones."""
    strays = _unrecorded(scan(lake, "stat"))
    unreadable = [d for d in (_adopt(d) for d in strays) if d is not None]
    quarantine(lake, unreadable)
    return len(strays) - len(unreadable), unreadable


def _settle(lake: Lake, snaps: dict[str, Snapshot]) -> list[Damaged]:
    damaged = [d for snap in snaps.values() for d in snap.damaged if d.problem != "unrecorded"]
    quarantine(lake, damaged)
    for snap in snaps.values():
        for path in snap.superseded:
            manifest.remove(path)
        for path, record in snap.records.items():
            mtime = path.stat().st_mtime_ns
            if mtime != record.mtime_ns:  # checked already: same bytes, touched since
                manifest.write(path, dataclasses.replace(record, mtime_ns=mtime))
    return damaged


def _unrecorded(snaps: dict[str, Snapshot]) -> list[Damaged]:
    return [d for snap in snaps.values() for d in snap.damaged if d.problem == "unrecorded"]


def _adopt(stray: Damaged) -> Damaged | None:
    """Record ``stray`` if it reads whole; else the damage to quarantine."""
    try:
        rows = pq.read_table(stray.path).num_rows
    except Exception as exc:  # a broken file raises one of several pyarrow / OS errors
        return dataclasses.replace(stray, problem="unreadable", detail=f"no record, {type(exc).__name__}: {exc}")
    manifest.write(stray.path, manifest.describe(stray.path, table=stray.table, rows=rows))
    log.debug("adopted %s (%d rows)", stray.path, rows)
    return None
