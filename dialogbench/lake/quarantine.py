"""Damaged files are moved aside, never deleted: ``<lake>/_quarantine/<UTC time>-<id>/<path in the lake>`` (with
the file's record when it has one) and ``quarantine.json`` saying what was wrong with each. Once a file's rows are
out of its table the stages' anti-join finds its cells missing, so the next run recomputes exactly them; a
quarantined plan only means its stage plans again."""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import uuid
from pathlib import Path

from dialogbench.lake import manifest
from dialogbench.lake.health import Damaged
from dialogbench.lake.store import QUARANTINE, Lake

log = logging.getLogger("dialogbench.lake")
NOTE = "quarantine.json"


def quarantine(lake: Lake, damaged: list[Damaged]) -> Path | None:
    """Move every damaged file (and record) under a new quarantine folder; returns the folder (None: nothing to
    move). The note is written first, so a folder never holds files without saying why."""
    if not damaged:
        return None
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    folder = lake.root / QUARANTINE / f"{stamp}-{uuid.uuid4().hex[:6]}"
    folder.mkdir(parents=True)
    note = [{"table": d.table, "path": str(d.path.relative_to(lake.root)), "problem": d.problem,
             "detail": d.detail} for d in damaged]
    (folder / NOTE).write_text(json.dumps(note, indent=2) + "\n")
    for d in damaged:
        target = folder / d.path.relative_to(lake.root)
        target.parent.mkdir(parents=True, exist_ok=True)
        for source, dest in ((d.path, target), (manifest.record_path(d.path), manifest.record_path(target))):
            try:
                os.replace(source, dest)  # the data first: a kill between leaves a record of a missing file
            except FileNotFoundError:
                pass
        log.warning("quarantined %s -> %s", d.line(lake.root), target.relative_to(lake.root))
    for table in sorted({d.table for d in damaged}):  # a Delta table's log still names them: it forgets them
        if (delta := lake.delta(table)) is not None:
            delta.forget(table)
    return folder


def notes(lake: Lake) -> list[dict]:
    """Every quarantined file's note, oldest folder first (what ``dialogbench verify`` lists)."""
    root = lake.root / QUARANTINE
    found = []
    for note in sorted(root.glob(f"*/{NOTE}")) if root.is_dir() else []:
        found += [{**entry, "folder": note.parent.name} for entry in json.loads(note.read_text())]
    return found
