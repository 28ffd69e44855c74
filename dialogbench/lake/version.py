"""The lake's format: a lake written by an older dialogbench is migrated by a command or refused,
never silently mixed with new rows.

Format 2 (the cell-stage mechanism): ``plans`` rows carry ``roles`` (role → model) and ``scope`` (what
the plan is the latest one for) instead of packed ``model`` strings ("a vs b", "spy=x;villager=y").
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from dialogbench.lake.schemas import PLANS
from dialogbench.lake.store import Lake

FORMAT = 2
MARKER = "lake.json"


class LakeFormatError(RuntimeError):
    """The lake needs ``dialogbench migrate`` before this version can read or extend it."""


def lake_format(lake: Lake) -> int | None:
    """The lake's format: from its marker; 1 for a lake with tables and no marker; None for a new lake."""
    marker = lake.root / MARKER
    if marker.is_file():
        return int(json.loads(marker.read_text())["format"])
    return 1 if lake.root.is_dir() and any(lake.files(t.name) for t in _tables()) else None


def ensure_current(lake: Lake) -> None:
    """Raise for an older lake (saying what to run); mark a new lake as the current format."""
    found = lake_format(lake)
    if found is None:
        _write_marker(lake)
    elif found < FORMAT:
        raise LakeFormatError(f"{lake.root}: lake format {found}, this dialogbench reads format {FORMAT}; "
                              f"run `dialogbench migrate --lake {lake.root}` (it rewrites the plans in place, "
                              "keeping every result)")
    elif found > FORMAT:
        raise LakeFormatError(f"{lake.root}: lake format {found} was written by a newer dialogbench "
                              f"(this one reads format {FORMAT}); upgrade dialogbench")


def refuse_older(lake: Lake) -> None:
    """For readers (query, catalog, report): an older lake is refused, a new or current one is left as is."""
    found = lake_format(lake)
    if found is not None and found != FORMAT:
        ensure_current(lake)


def migrate(lake: Lake) -> dict[str, int]:
    """Bring a format-1 lake to format 2: every ``plans`` file gets ``roles`` and ``scope`` unpacked from
    its ``model`` strings (each file rewritten atomically, so an interrupted migration can be rerun)."""
    found = lake_format(lake)
    rewritten = 0
    if found is not None and found < FORMAT:
        for path in lake.files("plans"):
            table = pq.read_table(path)
            if "scope" in table.column_names and table.column("scope").null_count == 0:
                continue
            rows = [{**{f.name: r.get(f.name) for f in PLANS}, **_unpack(r)} for r in table.to_pylist()]
            _replace(path, pa.Table.from_pylist(rows, schema=PLANS))
            rewritten += 1
    if found is None or found < FORMAT:
        _write_marker(lake)
    return {"from_format": found or FORMAT, "to_format": FORMAT, "plan_files_rewritten": rewritten}


def _unpack(row: dict) -> dict:
    stage, packed = row["stage"], row.get("model") or ""
    if stage == "botchat_arena" and " vs " in packed:
        first, second = packed.split(" vs ", 1)
        roles = {"first": first, "second": second}
    elif stage.startswith("gameeval_"):
        roles = dict(part.split("=", 1) for part in packed.split(";") if "=" in part)
    else:
        roles = {"model": packed} if packed else {}
    models = sorted(set(roles.values()))
    return {"roles": list(roles.items()), "model": models[0] if len(models) == 1 else None,
            "scope": [] if stage.startswith("gameeval_") else models}


def _replace(path: Path, table: pa.Table) -> None:
    tmp = path.with_name(f".{path.stem}-{uuid.uuid4().hex[:8]}.parquet.tmp")
    with open(tmp, "wb") as handle:
        pq.write_table(table, handle, compression="zstd")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def _write_marker(lake: Lake) -> None:
    lake.root.mkdir(parents=True, exist_ok=True)
    tmp = lake.root / f".{MARKER}.{uuid.uuid4().hex[:8]}.tmp"
    tmp.write_text(json.dumps({"format": FORMAT}) + "\n")
    os.replace(tmp, lake.root / MARKER)


def _tables():
    from dialogbench import registry

    return registry.tables()
