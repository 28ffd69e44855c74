"""The lake's pages: ``dialogbench report`` (the HTML + Markdown leaderboard report) and ``dialogbench explore``
(the dialogue explorer) write them from the lake under its lease; ``dialogbench serve`` serves ``<lake>/reports``
over HTTP, read-only."""

from __future__ import annotations

from pathlib import Path

from dialogbench.commands.lake_access import existing_lake, lease, refuse_older
from dialogbench.commands.say import say


def cmd_report(args) -> int:
    refuse_older(args.lake)
    from dialogbench.run import registry
    from dialogbench.report.build import write_report

    lake = registry.open_lake(args.lake or "data_lake")
    with lease(args):
        paths = write_report(lake, _reader_out(args, lake), board=args.board, families=registry.families())
    for kind, path in paths.items():
        say(f"{kind}: {path}")
    return 0


def cmd_explore(args) -> int:
    refuse_older(args.lake)
    from dialogbench.explorer import write_explorer
    from dialogbench.explorer.collect import DEFAULT_LIMIT
    from dialogbench.run import registry

    lake = registry.open_lake(args.lake or "data_lake")
    with lease(args):
        path = write_explorer(lake, _reader_out(args, lake), limit=args.limit or DEFAULT_LIMIT, board=args.board,
                              families=registry.families())
    say(f"explorer: {path}")
    return 0


def _reader_out(args, lake) -> Path:
    """Where ``report`` / ``explore`` write: ``--out``, else the board's folder (``--board``), else the top of
    ``<lake>/reports`` (the default board's latest report)."""
    from dialogbench.report.publish import board_folder

    if args.out:
        return Path(args.out)
    return board_folder(lake, args.board) if args.board else lake.root / "reports"


def cmd_serve(args) -> int:
    """Serve ``<lake>/reports`` until Ctrl-C or SIGTERM. Any lake format will do (the pages are already rendered),
    and no lease is taken: the server only reads, and the writers replace each file atomically."""
    from dialogbench.serve import make_server, serve_until_stopped, url

    reports = existing_lake(args.lake) / "reports"
    server = make_server(reports=reports, host=args.host, port=args.port, verbose=args.verbose,
                         allow_hosts=args.allow_host, workers=args.max_connections, timeout_s=args.timeout)
    print(f"serving {reports} at {url(server)}  (read-only; Ctrl-C stops)", flush=True)
    stopped_by = serve_until_stopped(server)
    print(f"stopped ({stopped_by})", flush=True)
    return 0
