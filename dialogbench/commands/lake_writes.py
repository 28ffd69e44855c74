"""The commands besides ``run`` that write the lake's own files, each under its lease: ``migrate`` (an older lake
brought to this format), ``catalog`` (``<lake>/catalog.duckdb`` rebuilt) and ``labels import`` (a person's labels,
stored as one more judge)."""

from __future__ import annotations

import sys

from dialogbench.commands.lake_access import lease, refuse_older
from dialogbench.commands.say import say


def cmd_migrate(args) -> int:
    from dialogbench.run.registry import open_lake
    from dialogbench.lake.version import migrate

    with lease(args):  # refuses a folder that is not a lake before the lease writes its file there
        result = migrate(open_lake(args.lake or "data_lake"))
    print(f"lake format {result['from_format']} -> {result['to_format']}: "
          f"{result['plan_files_rewritten']} plan file(s) rewritten, {result['judgment_files_split']} judgments "
          f"file(s) split into their protocol's verdict table, {result['stage_files_renamed']} file(s) rewritten "
          "with the MT-Bench-101 judge stage's new name (mtbench101_judge)")
    return 0


def cmd_catalog(args) -> int:
    refuse_older(args.lake)
    from dialogbench.run.registry import open_lake
    from dialogbench.lake.catalog import build_catalog

    with lease(args):
        path = build_catalog(open_lake(args.lake or "data_lake"))
    print(path)
    return 0


def cmd_labels(args) -> int:
    """``labels import FILE``: a person's labels of judged items, stored as one more judge (human:<source>)."""
    from dialogbench.judge_checks.labels import LabelError, import_labels
    from dialogbench.run.registry import open_lake

    refuse_older(args.lake)
    try:
        with lease(args):
            summary = import_labels(lake=open_lake(args.lake or "data_lake"), path=args.file, source=args.source,
                                    board=args.board)
    except LabelError as exc:
        say(f"error: {exc}", file=sys.stderr)
        return 2
    for line in summary.lines():
        print(line)
    return 0
