"""``dialogbench convert``, ``compact`` and ``vacuum``: a folder lake made a Delta lake, and a Delta lake's upkeep.

Wiring (the parser in ``dialogbench/commands/parser.py``, the command in ``dialogbench/cli.py``)::

    add_delta_parsers(sub)                                   # sub = parser.add_subparsers(...)
    run_convert_command(args, source, target); run_compact_command(args, lake); run_vacuum_command(args, lake)

``compact`` and ``vacuum`` take no lease: a compaction that races a run's commit is retried (it changes no row), and
``vacuum`` deletes only files older than its retention that the latest version does not name, so a run that writes
meanwhile loses nothing as long as the retention is longer than its longest write (the default, a week, is).
"""

from __future__ import annotations

import math
from pathlib import Path

from dialogbench.lake import Lake

DEFAULT_RETENTION_HOURS = 168.0  # Delta's own default: a week


def add_delta_parsers(subparsers) -> None:
    p = subparsers.add_parser("convert", help="copy a folder lake into a new lake of Delta tables",
                              description="Copies every table of a folder lake (--lake) into a new lake of Delta "
                              "tables (--to), one commit per table, and checks each table's rows on both sides. The "
                              "source is only read, under its lease. A rerun after a kill copies what is missing. "
                              "The reports are copied too. Not copied: _state (unfinished work), _quarantine and the "
                              "catalog (the next run or `dialogbench catalog` writes it). Then point the config's lake at --to "
                              "(and drop lake_tables: files where the config sets it).")
    p.add_argument("--lake", help="the folder lake to copy (default: data_lake)")
    p.add_argument("--to", required=True, help="the new lake's folder (new, or one an earlier convert began)")
    p = subparsers.add_parser("compact", help="rewrite a Delta lake's small files into fewer (no row changes)",
                              description="For every Delta table of the lake: the latest version's small files "
                              "rewritten into fewer, larger ones (one commit each; no row changes, and readers of an "
                              "older version keep their files until `dialogbench vacuum`). Safe while a run writes.")
    p.add_argument("--lake", help="lake directory (default: data_lake)")
    p = subparsers.add_parser("vacuum", help="delete the files no recent version of a Delta lake needs",
                              description="For every Delta table of the lake: deletes the files the latest version "
                              "does not name and that are older than --retention-hours: files compaction replaced, "
                              "and files of writers killed before their commit. Keep the retention longer than the "
                              "longest run: a run's files are on disk before its commit names them.")
    p.add_argument("--lake", help="lake directory (default: data_lake)")
    p.add_argument("--retention-hours", type=_hours, default=DEFAULT_RETENTION_HOURS,
                   help=f"keep files younger than this (default {DEFAULT_RETENTION_HOURS:g}: a week)")
    p.add_argument("--dry-run", action="store_true", help="only list the files that would go")


def _hours(text: str) -> float:
    import argparse

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of hours") from None
    if value < 0 or math.isnan(value) or math.isinf(value):
        raise argparse.ArgumentTypeError(f"{text!r}: give 0 or more hours")
    return value


def run_convert_command(args, source: Lake, target: Lake) -> int:
    """``source``, ``target``: ``--lake`` and ``--to``, opened with their layout (``registry.open_lake``)."""
    import sys

    from dialogbench.lake.delta.convert import ConvertError, convert
    from dialogbench.lake.lease import lake_lease
    from dialogbench.lake.version import ensure_current, refuse_foreign, refuse_older

    refuse_foreign(source)
    if source.tables_kind() == "delta":  # before the target is made: nothing is written
        print(f"error: {source.root}: its tables are Delta tables already; nothing to convert", file=sys.stderr)
        return 1
    refuse_foreign(target)
    try:
        with lake_lease(source.root, create=False), lake_lease(target.root):
            refuse_older(source)
            ensure_current(target, tables="delta")
            results = convert(source, target)
    except ConvertError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for r in results:
        what = "copied" if r.copied else "already there" if r.source_rows else "empty"
        print(f"  {r.table:28} {r.source_rows:8d} row(s) -> {r.target_rows:8d}  {what}")
    print(f"{target.root}: a Delta lake holding {sum(r.target_rows for r in results)} row(s) of {source.root}; point "
          "the config's lake at it (and drop lake_tables: files where the config sets it)")
    return 0


def run_compact_command(args, lake: Lake) -> int:
    from dialogbench.lake.catalog import rebuild_existing_catalog

    def compact(name: str) -> tuple[int, str]:
        metrics = lake.delta(name).compact(name)
        return 1, f"{metrics.get('numFilesRemoved', 0):5d} file(s) -> {metrics.get('numFilesAdded', 0):3d}"

    done = _each_table(lake, compact)
    if done is not None:
        rebuild_existing_catalog(lake)
        print(f"{lake.root}: {done} table(s) compacted; `dialogbench vacuum` deletes the replaced files once no "
              "reader needs them")
    return 0 if done is not None else 1


def run_vacuum_command(args, lake: Lake) -> int:
    from dialogbench.lake.catalog import rebuild_existing_catalog

    def vacuum(name: str) -> tuple[int, str]:
        # a store's mirror: its copies of the same files go too
        removed, local = lake.delta(name).vacuum(name, retention_hours=args.retention_hours, dry_run=args.dry_run)
        return len(removed), f"{len(removed):5d} file(s)" + (f", {len(local)} local cop(ies)" if local else "")

    total = _each_table(lake, vacuum)
    if total is not None and not args.dry_run:
        rebuild_existing_catalog(lake)
    if total is not None:
        verb = "would be deleted" if args.dry_run else "deleted"
        print(f"{lake.root}: {total} file(s) older than {args.retention_hours:g} h that no version needs {verb}")
    return 0 if total is not None else 1


def _each_table(lake: Lake, action) -> int | None:
    """``action(table)`` on each Delta table of the lake, a line each (its text); the sum of its counts, or None (said
    on stderr) when the lake is not a Delta lake."""
    tables = _delta_tables(lake)
    if tables is None:
        return None
    total = 0
    for name in tables:
        count, text = action(name)
        total += count
        print(f"  {name:28} {text}")
    return total


def _delta_tables(lake: Lake) -> list[str] | None:
    """The lake's Delta tables, or None (said on stderr) when it is not a Delta lake."""
    import sys

    from dialogbench.lake.version import refuse_not_a_lake

    refuse_not_a_lake(lake)
    if lake.tables_kind() != "delta":
        print(f"error: {lake.root}: a folder lake (its tables are recorded files); compact and vacuum are for a Delta "
              "lake (`dialogbench convert` makes one)", file=sys.stderr)
        return None
    return [name for name in lake.layout.tables if lake.delta(name).added(name)]


def open_store_lake(uri: str) -> Path:
    """The local folder of the lake at ``uri`` (``--lake s3://…`` of a command that reads or keeps a lake), made and
    marked as that store's on first use, so the command reads the store's tables; a folder marked for another
    store is refused (``version.ensure_current``)."""
    from dialogbench.lake.delta.mirror import mirror_folder
    from dialogbench.lake.version import ensure_current

    folder = mirror_folder(uri)
    ensure_current(Lake(folder), tables="delta", store=uri.rstrip("/"))
    return folder
