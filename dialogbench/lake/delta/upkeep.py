"""A Delta lake's upkeep at the end of each run (``lake_upkeep`` in the config), so a nightly lake stays fast to read
without anyone running ``dialogbench compact`` and ``vacuum`` by hand.

Each chunk a stage commits is a file: a table gains dozens a night, thousands a season, and every read lists and opens
them all (the catalog's views name each one). At the end of a run, each table whose latest version has more than
``compact_above_files`` files is compacted (its small files rewritten into few; no row changes), and the files no
version needs that are older than ``vacuum_after_hours`` are deleted (those a compaction replaced, and a killed
writer's that no commit names). Both are safe while other runs write: a compaction that races a commit is retried, and
the retention (a week by default) keeps every file a reader or a writer in flight can still need.

A folder lake (``lake_tables: files``) has no upkeep: nothing is done."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from dialogbench.lake import Lake


log = logging.getLogger("dialogbench.lake")


@dataclass(frozen=True)
class Upkept:
    """What the upkeep did to one table: its files before, the files a compaction removed and added, and the files
    the vacuum deleted."""

    table: str
    files: int
    compacted_from: int = 0
    compacted_to: int = 0
    vacuumed: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.compacted_from or self.vacuumed)


def upkeep(lake: Lake, *, compact_above_files: int | None, vacuum_after_hours: float | None) -> list[Upkept]:
    """Compact each Delta table of ``lake`` with more than ``compact_above_files`` files (None: none is), then vacuum
    the files older than ``vacuum_after_hours`` that its latest version does not name (None: no vacuum); a local
    copy no version names goes too (a lake on S3). Returns a row per table ([] for a folder lake), and logs
    ``summary`` of them when it changed something."""
    if lake.tables_kind() != "delta":
        return []
    done = []
    for table in lake.layout.tables:
        delta = lake.delta(table)
        if delta is None or not (files := delta.added(table)):
            continue
        removed = added = vacuumed = 0
        if compact_above_files is not None and len(files) > compact_above_files:
            metrics = delta.compact(table)
            removed, added = int(metrics.get("numFilesRemoved", 0)), int(metrics.get("numFilesAdded", 0))
        if vacuum_after_hours is not None:
            vacuumed = len(delta.vacuum(table, retention_hours=vacuum_after_hours)[0])
        done.append(Upkept(table, len(files), removed, added, vacuumed))
    if any(d.changed for d in done):
        log.info(summary(done))
    return done


def summary(done: list[Upkept]) -> str:
    """One line: what the upkeep changed (or that it changed nothing)."""
    changed = [d for d in done if d.changed]
    if not changed:
        return f"lake upkeep: {len(done)} Delta table(s), none to compact or vacuum"
    parts = [f"{d.table} {d.compacted_from}->{d.compacted_to} file(s)" for d in changed if d.compacted_from]
    deleted = sum(d.vacuumed for d in changed)
    return ("lake upkeep: " + (f"compacted {', '.join(parts)}" if parts else "nothing to compact")
            + f"; {deleted} unneeded file(s) deleted")
