"""The lake's format: a lake written by an older dialogbench is migrated by a command or refused,
never silently mixed with new rows.

Format 2 (the cell-stage mechanism): ``plans`` rows carry ``roles`` (role → model) and ``scope`` (what
the plan is the latest one for) instead of packed ``model`` strings ("a vs b", "spy=x;villager=y").
Format 3: each protocol's judge verdicts are its own table (the families declare which: ``Legacy.verdict_tables``)
instead of rows of one ``judgments`` table of every column.
Format 4: every committed file has its record (checksum, size, rows: ``lake.manifest``); reads leave out files
without one. A format-3 lake is brought to 4 in place by the first run (or ``migrate``) that opens it, under the
lake's lease: each file that reads whole is recorded (nothing is rewritten), one that does not is quarantined.
Readers refuse a format-3 lake until then.
Format 5: the MT-Bench-101 judge stage has its new name wherever the lake stores a stage or judge protocol name
(``lake.renames``; the families declare the names: ``Legacy.stages``, ``Legacy.protocols``). A format-4 lake is
brought to 5 in place by the first run (or ``migrate``) that opens it, under the lake's lease; readers refuse it until
then.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from dialogbench.lake import links, manifest, space
from dialogbench.lake.catalog import CATALOG
from dialogbench.lake.lease import LEASE_FILE
from dialogbench.lake.legacy import Unpacked, Unpacker
from dialogbench.lake.schemas import PLANS
from dialogbench.lake.store import MARKER, QUARANTINE, WORK, Lake

FORMAT = 5
MIRROR_HINT = "DIALOGBENCH_LAKE_CACHE, or the lake folder a config's lake: s3://… maps to"
log = logging.getLogger("dialogbench.lake")
LEGACY_JUDGMENTS = "judgments"  # the format-2 table of every protocol's verdicts, split by migrate (into the tables
# of ``Layout.legacy.verdict_tables``, which the families declare)


class LakeFormatError(RuntimeError):
    """The lake needs ``dialogbench migrate`` before this version can read or extend it."""


class NotALake(LakeFormatError):
    """A folder with no lake marker that holds what no dialogbench lake wrote: no command reads, writes, sweeps or
    migrates it (a home folder given as ``--lake`` would otherwise be made a lake, its temp files removed and its
    Parquet files adopted)."""


def lake_format(lake: Lake) -> int | None:
    """The lake's format: from its marker; 1 for a folder with no marker that holds a format-1 lake and nothing else
    (``_old_lake_problem``); None for a new lake (no folder, or one holding nothing but ``EMPTY_LAKE``). Any other
    folder is not a lake (``NotALake``, naming what it holds). Every command asks this first, so it is also where a
    lake whose top-level entries are links is refused (``links.LakeLinkError``: the marker is read without following
    one)."""
    links.check_top(lake.root)
    if os.path.lexists(lake.root) and not lake.root.is_dir():
        raise NotALake(f"{lake.root}: not a dialogbench lake (not a folder); pass --lake with the lake's folder, or a "
                       "new or empty one (default: data_lake)")
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
    others = sorted(p.name for p in lake.root.iterdir() if p.name not in EMPTY_LAKE)
    if not others:
        return None
    if (problem := _old_lake_problem(lake, others)) is not None:
        raise NotALake(f"{lake.root}: not a dialogbench lake (no {MARKER}, the marker every run writes first, and "
                       f"{problem}); pass --lake with the lake's folder, or a new or empty one (default: "
                       "data_lake)")
    return 1


def ensure_current(lake: Lake, *, tables: str | None = None, store: str | None = None) -> None:
    """Raise for an older lake (saying what to run); mark a new lake as the current format, its tables stored as
    ``tables`` ("delta", the default, or "files": the config's ``lake_tables``), at ``store`` when they are on an
    object store (``lake.delta.mirror``). A lake that stores its tables otherwise than ``tables`` asks, or elsewhere
    than ``store``, is refused, naming the command that converts it."""
    found = lake_format(lake)
    if found is None:
        _write_marker(lake, tables=tables or "delta", store=store)
        return
    if (problem := tables_mismatch(lake, tables=tables, store=store)) is not None:
        raise LakeFormatError(problem)
    if found in (3, 4):  # records each file, renames a stage: no command needed
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


def tables_mismatch(lake: Lake, *, tables: str | None, store: str | None) -> str | None:
    """Why an existing lake is not the one a config asks for: its tables kept otherwise than ``tables`` or elsewhere
    than ``store`` (None: not asked); None when it is. What ``ensure_current`` refuses and ``validate`` says first."""
    if store is not None and lake.store() != store:
        return (f"{lake.root}: the local folder of the lake at {lake.store() or 'this folder'}, not of {store}; give "
                f"each store its own folder ({MIRROR_HINT})")
    if tables is not None and (kind := lake.tables_kind()) != tables:
        return (f"{lake.root}: this lake stores its tables as {kind}, the config asks for {tables} (lake_tables); "
                f"convert it into a new lake with `dialogbench convert --lake {lake.root} --to NEW_LAKE` and point "
                f"the config at that, or set lake_tables: {kind}")
    return None


def refuse_older(lake: Lake) -> None:
    """For readers (query, catalog, report): an older lake is refused, a new or current one is left as is. A
    reader never writes, so a format-3 lake is not recorded here (a run or ``migrate`` does it, under the lease)."""
    found = lake_format(lake)
    if found == 3:
        raise LakeFormatError(f"{lake.root}: lake format 3, this dialogbench reads format {FORMAT} (every file with "
                              f"its checksum record); run `dialogbench migrate --lake {lake.root}` or any run: it "
                              "records the files in place")
    if found == 4:
        renamed = ", ".join(f"{old} renamed {new}" for old, new in lake.layout.legacy.protocols.items())
        raise LakeFormatError(f"{lake.root}: lake format 4, this dialogbench reads format {FORMAT} (the judge stage "
                              f"{renamed}); run `dialogbench migrate --lake {lake.root}` or any run: it renames the "
                              "stage in place, keeping every row")
    if found is not None and found != FORMAT:
        ensure_current(lake)


EMPTY_LAKE = {"raw", LEASE_FILE}  # what a lake no run has written yet may hold: a checkout's datasets, a lease
# What else a format-1 lake (no marker) held at its top, besides its tables: reports, the catalog, checkpoints; and a
# migration of one cut short, its quarantine or a temp file of the marker or the catalog.
OLD_LAKE = {"reports", CATALOG, f"{CATALOG}.wal", WORK, QUARANTINE}
_OLD_LAKE_TEMP = re.compile(rf"\.(?:{re.escape(MARKER)}|{re.escape(CATALOG)})\.[0-9a-f]{{8}}\.tmp(?:\.wal|\.tmp)?")


def refuse_not_a_lake(lake: Lake) -> None:
    """For readers of a lake's data (query, export): a folder is a lake when it holds ``lake.json`` (the format
    marker, the first thing a run writes), or holds nothing yet but ``EMPTY_LAKE`` (a lake before its first run, whose
    views are all empty). Any other folder (the repository, a lake's ``reports``, a format-1 lake) is refused naming
    the path, rather than answered with 0 rows (``lake_format`` raises ``NotALake`` or names the migration)."""
    if (lake.root / MARKER).is_file():
        return
    if lake_format(lake) is not None:  # a format-1 lake: refuse_older has named the migration already
        raise LakeFormatError(f"{lake.root}: lake format 1, this dialogbench reads format {FORMAT}; run "
                              f"`dialogbench migrate --lake {lake.root}`")


def refuse_foreign(lake: Lake) -> None:
    """For writers (``run``, ``migrate``), before they take the lease or write anything: a folder that is not a lake
    and may not become one raises ``NotALake`` (``lake_format``), so nothing is written into it, nothing in it swept,
    nothing adopted. A missing or empty folder (a new lake), a lake and a format-1 lake pass."""
    lake_format(lake)


def _old_lake_problem(lake: Lake, entries: list[str]) -> str | None:
    """Why the folder ``lake.root`` (no marker; ``entries``: its top-level names besides ``EMPTY_LAKE``) is not a
    format-1 lake, or None when it is one: every entry is a table of the layout, the old ``judgments`` table or one
    of ``OLD_LAKE``, and every file in the tables is one a lake wrote (``_old_file_problem``). Decided by the old
    lake's own signs, so ``migrate`` rewrites and adopts only a lake's files, never a folder's that happen to sit in
    one named like a table (``runs``)."""
    tables = [*lake.layout.tables, LEGACY_JUDGMENTS]
    if others := [e for e in entries if e not in tables and e not in OLD_LAKE and not _OLD_LAKE_TEMP.fullmatch(e)]:
        return f"it holds {_show(others)}, which no lake writes"
    found = False
    for name in [*tables, WORK]:
        if name not in entries:
            continue
        if not lake.table_dir(name).is_dir():
            return f"its {_show([name])} is not a folder"
        for path, kind in sorted(links.walk(lake.table_dir(name)).items()):
            if (problem := _old_file_problem(lake, name, path, kind)) is not None:
                return f"{_show([str(path.relative_to(lake.root))])} {problem}"
            found = found or name != WORK and path.name.endswith(manifest.DATA_SUFFIX)
    if not found:
        return f"it holds {_show(entries)} but no table's file"
    return None


def _old_file_problem(lake: Lake, table: str, path: Path, kind: str) -> str | None:
    """Why ``path`` (under ``table``'s folder, of ``links.walk``'s ``kind``) is not a file a lake wrote: the lake
    writes regular files only, its Parquet files in ``key=value`` folders (at least one for a partitioned table),
    holding the table's partition columns and only the table's columns (format-1 tables have only gained columns
    since; the old ``judgments``: the verdict tables' columns), and beside them only its records and temp files."""
    name = path.name
    if kind != "file":
        return "is a symbolic link" if kind == "link" else "is not a regular file"
    if manifest.is_record(path) or manifest.final_name(name) is not None or manifest.is_record_temp(name):
        return None
    if manifest.name_problem(name) is not None:
        return "is not a file a lake writes"
    folders = path.parent.relative_to(lake.table_dir(table)).parts
    if not all(part.partition("=")[0] and "=" in part for part in folders):
        return f"is not in {table}'s key=value partition folders"
    if table == WORK:
        return None
    columns, partition = _old_columns(lake, table)
    if partition and not folders:
        return f"is not in {table}'s key=value partition folders"
    try:
        names = set(pq.read_schema(path).names)
    except Exception as exc:  # pyarrow raises several types for a file that is not Parquet
        return f"does not read as Parquet ({type(exc).__name__})"
    if extra := sorted(names - columns):
        return f"has columns that are not the {table} table's: {_show(extra)}"
    if missing := [c for c in partition if c not in names]:
        return f"lacks the {table} table's partition columns {_show(missing)}"
    return None


def _old_columns(lake: Lake, table: str) -> tuple[set[str], tuple[str, ...]]:
    """The columns a format-1 file of ``table`` may have, and the partition columns it must have."""
    if table == LEGACY_JUDGMENTS:
        return {n for t in lake.layout.tables.values() if t.verdicts for n in t.schema.names}, ("protocol", "judge")
    found = lake.layout.tables[table]
    return set(found.schema.names), tuple(found.partition)


def _show(names: list[str], limit: int = 3) -> str:
    """The first ``limit`` of a folder's ``names`` for a one-line message: a name with a control character quoted
    (``repr``), so no name of a user's folder reaches the terminal raw."""
    shown = [n if n.isprintable() else repr(n) for n in names[:limit]]
    return ", ".join(shown) + (", …" if len(names) > limit else "")


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
            rows = [{**{f.name: r.get(f.name) for f in PLANS}, **_unpack(r, lake.layout.legacy.unpackers)}
                    for r in table.to_pylist()]
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
    verdict_tables = lake.layout.legacy.verdict_tables
    moved = 0
    for path in lake.files(LEGACY_JUDGMENTS):
        rows = pq.read_table(path).to_pylist()
        groups: dict[tuple[str, str], list[dict]] = {}
        for i, row in enumerate(rows):
            if row.get("protocol") not in verdict_tables:
                raise LakeFormatError(f"{path}: row {i}: protocol {row.get('protocol')!r} has no verdict table "
                                      f"(known: {', '.join(verdict_tables)}); nothing was removed")
            groups.setdefault((verdict_tables[row["protocol"]], row["judge"]), []).append(row)
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


def _unpack(row: dict, unpackers: tuple[Unpacker, ...]) -> dict:
    """A format-1 plan's ``roles``, ``model`` and ``scope``: as the first of the families' ``unpackers`` that claims
    its stage reads the packed ``model`` string, else one model (or none) in the role ``model``."""
    stage, packed = row["stage"], row.get("model") or ""
    found = next((u for u in (unpack(stage, packed) for unpack in unpackers) if u is not None), None)
    if found is None:
        found = Unpacked({"model": packed} if packed else {})
    models = sorted(set(found.roles.values()))
    return {"roles": list(found.roles.items()), "model": models[0] if len(models) == 1 else None,
            "scope": models if found.scope is None else found.scope}


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


def _write_marker(lake: Lake, *, tables: str | None = None, store: str | None = None) -> None:
    """The marker of the current format; ``tables``: how the lake stores its tables, ``store``: where, when not in
    its folder (None: as the marker says already)."""
    tables, store = tables or lake.tables_kind(), store or lake.store()
    lake.root.mkdir(parents=True, exist_ok=True)
    tmp = lake.root / f".{MARKER}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        with os.fdopen(links.create_new(tmp), "w") as handle:
            handle.write(json.dumps({"format": FORMAT, **({"tables": tables} if tables != "files" else {}),
                                     **({"store": store} if store else {})}) + "\n")
        os.replace(tmp, lake.root / MARKER)  # replaces a link, never writes through one
    except Exception as exc:
        tmp.unlink(missing_ok=True)
        if space.is_disk_full(exc):
            raise space.disk_full(lake.root / MARKER, lake.root, exc) from exc
        raise
