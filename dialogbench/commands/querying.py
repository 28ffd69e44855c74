"""``dialogbench query`` and ``dialogbench export``: read-only SQL over the lake's views (in a child process, under
time and memory limits: ``dialogbench/lake/query.py``), printed or written to a file outside the lake; ``export``
without SQL writes every leaderboard of a board."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from dialogbench.commands.lake_access import data_lake
from dialogbench.commands.say import say


def cmd_query(args) -> int:
    from dialogbench.lake.query import query, run
    from dialogbench.lake.terminal import print_csv, print_json, print_table

    # The printers run in the query's child process and print to its sys.stdout (a pipe to this one's): looked up
    # when they run, not now.
    if args.format == "csv":
        def printer(con, sql):
            print_csv(con, sql, out=sys.stdout, raw=args.raw)
    elif args.format == "json":
        def printer(con, sql):
            print_json(con, sql, out=sys.stdout)
    else:
        def printer(con, sql):
            relation = query(con, sql)
            if relation is not None:
                print_table(relation, sys.stdout, max_rows=args.max_rows)
    try:
        run(data_lake(args.lake), args.sql, printer, board=args.board, limits=_limits(args))
    except BrokenPipeError:  # the reader (head, a pager) stopped reading: not an error of the query
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def cmd_export(args) -> int:
    from dialogbench.lake.query import export

    if args.sql is None:
        return _export_leaderboards(args)
    rows = export(data_lake(args.lake), args.sql, Path(args.out), fmt=args.format, board=args.board,
                  limits=_limits(args), raw=args.raw)
    print(f"{rows} row(s) written to {args.out}")
    return 0


def _export_leaderboards(args) -> int:
    """``export`` without SQL: every leaderboard of ``--board`` (``dialogbench.report.results``) as one JSON file, or as a
    folder of one CSV per leaderboard, outside the lake; a board no run published to is refused (exit 2), named."""
    from dialogbench.lake.query import QueryRefused
    from dialogbench.report.results import NoResults, collect_results, write_csv, write_json
    from dialogbench.run import registry

    out = Path(args.out)
    fmt = args.format or ("json" if out.suffix.lower() == ".json" else None)
    if fmt not in ("json", "csv"):
        raise QueryRefused(f"{out}: the leaderboards export as --format json (one file) or --format csv (a folder, "
                           "one CSV per leaderboard)" + (f", not {fmt}" if fmt else ""))
    lake = data_lake(args.lake)
    if out.resolve().is_relative_to(lake.root.resolve()):
        raise QueryRefused(f"{out}: is inside the lake {lake.root}; export writes outside it (runs own the lake)")
    if fmt == "csv" and out.exists() and not out.is_dir():
        raise QueryRefused(f"{out}: is a file; --format csv writes a folder of one CSV per leaderboard there")
    try:
        results = collect_results(lake, args.board, families=registry.families())
    except NoResults as exc:
        raise QueryRefused(str(exc)) from None
    if fmt == "json":
        write_json(results, out)
    else:
        write_csv(results, out, raw=args.raw)
    tables = results["leaderboards"]
    say(f"{len(tables)} leaderboard(s), {sum(len(t['rows']) for t in tables.values())} row(s) of board "
        f"{results['board']} written to {out}{'' if fmt == 'json' else '/ (one CSV each)'}")
    return 0


def _limits(args):
    from dialogbench.lake.limits import Limits

    return Limits(args.timeout, args.memory_limit) if args.memory_limit else Limits(args.timeout)
