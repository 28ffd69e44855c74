"""The sha256 of each file a Delta table's commits add, as the writer that committed them read it back: what a folder
lake's records hold (``lake.manifest``), so ``dialogbench verify`` sees a flipped bit that still decodes on a Delta lake
too. The Delta log keeps each file's size and row count, no checksum, and delta-rs writes no Parquet page checksums.

Right after a commit, its writer reads the commit's entry in the table's log (``_delta_log/<version>.json``), hashes
each file it added (written a moment ago, still in the page cache) and writes ``<table>/_checksums/<version>.json``
(``{"files": {"<file>": "<sha256>"}}``, a temp file renamed into place). The folder's leading ``_`` keeps it out of
Delta's readers and of ``vacuum``. A writer killed between its commit and this leaves its files without a checksum:
``verify`` then reads their every page back instead, as it does for a file a compaction wrote.

Only a lake whose tables are in its own folder: on S3 the files are written to the store, and hashing them would mean
reading each back over the network (the store keeps its own checksums of what it holds)."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from urllib.parse import unquote

from dialogbench.lake.manifest import sha256

FOLDER = "_checksums"  # in each Delta table's folder, beside _delta_log


def record(table_dir: Path, first: int, last: int) -> int:
    """Hash the files versions ``first``..``last`` of the table at ``table_dir`` added and write each version's
    checksums; returns how many files were hashed. A version already recorded (another writer got there first), or
    whose log entry is gone, is skipped."""
    hashed = 0
    for version in range(max(first, 0), last + 1):
        target = table_dir / FOLDER / f"{version:020d}.json"
        if target.exists():
            continue
        files = {}
        for path in _added(table_dir, version):
            try:
                files[path] = sha256(table_dir / path)
            except FileNotFoundError:  # vacuumed, or quarantined, already: nothing to vouch for
                continue
        if not files:
            continue
        target.parent.mkdir(exist_ok=True)
        tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.tmp")
        tmp.write_text(json.dumps({"files": files}, sort_keys=True))
        os.replace(tmp, target)
        hashed += len(files)
    return hashed


def recorded(table_dir: Path) -> dict[str, str]:
    """Every file of the table at ``table_dir`` whose sha256 a writer recorded (its path inside the table), with it.
    A record that does not parse is skipped: its files are checked as unrecorded ones."""
    found: dict[str, str] = {}
    folder = table_dir / FOLDER
    if not folder.is_dir():
        return found
    for entry in sorted(folder.glob("*.json")):
        try:
            files = json.loads(entry.read_text()).get("files", {})
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(files, dict):
            found.update({str(k): str(v) for k, v in files.items()})
    return found


def _added(table_dir: Path, version: int) -> list[str]:
    """The paths (inside the table) of the files version ``version``'s log entry adds; [] when the entry is gone."""
    try:
        lines = (table_dir / "_delta_log" / f"{version:020d}.json").read_text().splitlines()
    except FileNotFoundError:
        return []
    paths = []
    for line in lines:
        try:
            action = json.loads(line)
        except ValueError:
            continue
        add = action.get("add") if isinstance(action, dict) else None
        if isinstance(add, dict) and isinstance(add.get("path"), str) and "://" not in add["path"]:
            paths.append(unquote(add["path"]))
    return paths
