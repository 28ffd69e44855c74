"""The lake's format: a lake written by an older dialogbench is migrated by a command or refused,
never silently mixed with new rows.

Format 2 (the cell-stage mechanism): ``plans`` rows carry ``roles`` (role → model) and ``scope`` (what
the plan is the latest one for) instead of packed ``model`` strings ("a vs b", "spy=x;villager=y").
Format 3: each protocol's judge verdicts are its own table (``unieval_judgments``, ``arena_judgments``,
``gteval_judgments``, ``mtbench101_judgments``) instead of rows of one ``judgments`` table of every column.
Format 4: every committed file has its record (checksum, size, rows: ``lake.manifest``); reads leave out files
without one. A format-3 lake is brought to 4 in place by the first run (or ``migrate``) that opens it, under the
lake's lease: each file that reads whole is recorded (nothing is rewritten), one that does not is quarantined.
Readers refuse a format-3 lake until then.
Format 5: the MT-Bench-101 judge stage is named ``mtbench101_judge`` (it was ``mtbench101``) wherever the lake stores a
stage or judge protocol name (``lake.renames``). A format-4 lake is brought to 5 in place by the first run (or
``migrate``) that opens it, under the lake's lease; readers refuse it until then.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from dialogbench.lake import links, manifest, space
from dialogbench.lake.schemas import PLANS
from dialogbench.lake.store import Lake

FORMAT = 5
MARKER = "lake.json"
log = logging.getLogger("dialogbench.lake")
LEGACY_JUDGMENTS = "judgments"  # the format-2 table of every protocol's verdicts, split by migrate
VERDICT_TABLES = {"botchat_unieval": "unieval_judgments", "botchat_arena": "arena_judgments",
                  "botchat_gteval": "gteval_judgments", "mtbench101": "mtbench101_judgments"}


class LakeFormatError(RuntimeError):
    """The lake needs ``dialogbench migrate`` before this version can read or extend it."""


def lake_format(lake: Lake) -> int | None:
    """The lake's format: from its marker; 1 for a lake with tables and no marker; None for a new lake. Every
    command asks this first, so it is also where a lake whose top-level entries are links is refused
    (``links.LakeLinkError``: the marker is read without following one)."""
    links.check_top(lake.root)
    marker = lake.root / MARKER
    try:
        text = links.read_regular(marker, 4096)
    except FileNotFoundError:
        text = None
    if text is not None:
        try:
            found = json.loads(text)["format"]
            if not isinstance(found, int) or isinstance(found, bool):
                raise TypeError(f"format {found!r} is not an integer")
            return found
        except (ValueError, TypeError, KeyError) as exc:
            raise LakeFormatError(f"{marker}: not a lake format marker ({type(exc).__name__}: {exc}); it should "
                                  f'read {{"format": {FORMAT}}}') from None
    if not lake.root.is_dir():
        return None
    return 1 if any(lake.files(t) for t in [*lake.layout.tables, LEGACY_JUDGMENTS]) else None


def ensure_current(lake: Lake) -> None:
    """Raise for an older lake (saying what to run); mark a new lake as the current format."""
    found = lake_format(lake)
    if found is None:
        _write_marker(lake)
    elif found in (3, 4):  # records each file, renames a stage: no command needed
        result = migrate(lake)
        log.info("%s: lake format %d -> %d: %d file(s) recorded, %d unreadable one(s) quarantined, %d file(s) "
                 "rewritten with the renamed stage", lake.root, found, FORMAT, result["files_adopted"],
                 result["files_quarantined"], result["stage_files_renamed"])
    elif found < FORMAT:
        raise LakeFormatError(f"{lake.root}: lake format {found}, this dialogbench reads format {FORMAT}; "
                              f"run `dialogbench migrate --lake {lake.root}` (it rewrites the plans and "
                              "judgments in place, keeping every result)")
    elif found > FORMAT:
        raise LakeFormatError(f"{lake.root}: lake format {found} was written by a newer dialogbench "
                              f"(this one reads format {FORMAT}); upgrade dialogbench")


def refuse_older(lake: Lake) -> None:
    """For readers (query, catalog, report): an older lake is refused, a new or current one is left as is. A
    reader never writes, so a format-3 lake is not recorded here (a run or ``migrate`` does it, under the lease)."""
    found = lake_format(lake)
    if found == 3:
        raise LakeFormatError(f"{lake.root}: lake format 3, this dialogbench reads format {FORMAT} (every file with "
                              f"its checksum record); run `dialogbench migrate --lake {lake.root}` or any run: it "
                              "records the files in place")
    if found == 4:
        raise LakeFormatError(f"{lake.root}: lake format 4, this dialogbench reads format {FORMAT} (the MT-Bench-101 "
                              f"judge stage renamed mtbench101_judge); run `dialogbench migrate --lake {lake.root}` or "
                              "any run: it renames the stage in place, keeping every row")
    if found is not None and found != FORMAT:
        ensure_current(lake)


EMPTY_LAKE = {"raw", ".lease"}  # what a lake no run has written yet may hold: a checkout's datasets, a lease


def refuse_not_a_lake(lake: Lake) -> None:
    """For readers of a lake's data (query, export): a folder is a lake when it holds ``lake.json`` (the format
    marker, the first thing a run writes), or holds nothing yet but ``EMPTY_LAKE`` (a lake before its first run, whose
    views are all empty). Any other folder (the repository, a lake's ``reports``) is refused naming the path, rather
    than answered with 0 rows."""
    if (lake.root / MARKER).is_file():
        return
    others = sorted(p.name for p in lake.root.iterdir() if p.name not in EMPTY_LAKE)
    if others:
        shown = ", ".join(others[:3]) + (", …" if len(others) > 3 else "")
        raise LakeFormatError(f"{lake.root}: not a dialogbench lake (no {MARKER}, the marker every run writes first, "
                              f"and it holds other things: {shown}); pass --lake with the lake's folder (default: "
                              "data_lake)")


def migrate(lake: Lake) -> dict[str, int]:
    """Bring an older lake to the current format: every ``plans`` file gets ``roles`` and ``scope`` unpacked
    from its ``model`` strings (format 1 → 2); every ``judgments`` file's rows move to their protocol's verdict
    table (2 → 3). Each file is rewritten atomically under a name derived from the old one, and an old file is
    removed only after its rows are written, so an interrupted migration can be rerun without duplicates. Then
    every file without a record is recorded if it reads whole, else quarantined (3 → 4), and the MT-Bench-101 judge
    stage's old name is rewritten where it is stored (4 → 5, ``lake.renames``)."""
    from dialogbench.lake.renames import rename_stages
    from dialogbench.lake.verify import adopt

    found = lake_format(lake)
    rewritten = moved = adopted = renamed = 0
    unreadable: list = []
    if found is not None and found < 2:
        for path in lake.files("plans"):
            table = pq.read_table(path)
            if "scope" in table.column_names and table.column("scope").null_count == 0:
                continue
            rows = [{**{f.name: r.get(f.name) for f in PLANS}, **_unpack(r)} for r in table.to_pylist()]
            _replace(path, pa.Table.from_pylist(rows, schema=PLANS))
            rewritten += 1
    if found is not None and found < 3:
        moved = _split_judgments(lake)
    if found is not None and found < 4:
        adopted, unreadable = adopt(lake)
    if found is not None and found < 5:
        renamed = rename_stages(lake)
    if found is None or found < FORMAT:
        _write_marker(lake)
    return {"from_format": found or FORMAT, "to_format": FORMAT, "plan_files_rewritten": rewritten,
            "judgment_files_split": moved, "files_adopted": adopted, "files_quarantined": len(unreadable),
            "stage_files_renamed": renamed}


def _split_judgments(lake: Lake) -> int:
    tables = dict(lake.layout.tables)
    moved = 0
    for path in lake.files(LEGACY_JUDGMENTS):
        rows = pq.read_table(path).to_pylist()
        groups: dict[tuple[str, str], list[dict]] = {}
        for i, row in enumerate(rows):
            if row.get("protocol") not in VERDICT_TABLES:
                raise LakeFormatError(f"{path}: row {i}: protocol {row.get('protocol')!r} has no verdict table "
                                      f"(known: {', '.join(VERDICT_TABLES)}); nothing was removed")
            groups.setdefault((VERDICT_TABLES[row["protocol"]], row["judge"]), []).append(row)
        for (name, judge), group in groups.items():
            table = tables[name]
            lake.write(name, pa.Table.from_pylist([{c: r.get(c) for c in table.schema.names} for r in group],
                                                  schema=table.schema),
                       partition={"judge": judge}, name=f"migrated-{path.stem}.parquet")
        path.unlink()
        with contextlib.suppress(FileNotFoundError):  # its record, when a format-4 writer made it
            os.unlink(manifest.record_path(path))
        moved += 1
    return moved


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
    """``path`` rewritten with ``table`` as ``Lake.write`` does it: temp file, its record, rename."""
    tmp = path.with_name(manifest.temp_name(path.name))
    try:
        with os.fdopen(links.create_new(tmp), "wb") as handle:
            pq.write_table(table, handle, compression="zstd")
            handle.flush()
            os.fsync(handle.fileno())
        manifest.write(path, manifest.describe(tmp, table="plans", rows=table.num_rows, tmp=tmp, name=path.name))
    except Exception:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)


def _write_marker(lake: Lake) -> None:
    lake.root.mkdir(parents=True, exist_ok=True)
    tmp = lake.root / f".{MARKER}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        with os.fdopen(links.create_new(tmp), "w") as handle:
            handle.write(json.dumps({"format": FORMAT}) + "\n")
        os.replace(tmp, lake.root / MARKER)  # replaces a link, never writes through one
    except Exception as exc:
        tmp.unlink(missing_ok=True)
        if space.is_disk_full(exc):
            raise space.disk_full(lake.root / MARKER, lake.root, exc) from exc
        raise
