"""``dialogbench verify`` and ``dialogbench repair``: the lake's damage and duplicates, named and healed.

Wiring (the parser in ``dialogbench/commands/parser.py``, the command in ``dialogbench/cli.py``)::

    add_verify_parser(sub); add_repair_parser(sub)           # sub = parser.add_subparsers(...)
    run_verify_command(args, lake); run_repair_command(args, lake)  # lake: registry.open_lake(args.lake)
"""

from __future__ import annotations

from dialogbench.lake import Lake


def add_verify_parser(subparsers):
    p = subparsers.add_parser("verify", help="check every lake file against its checksum; quarantine damaged ones",
                              description="Checks every committed file of the lake against its record (sha256, "
                              "size, rows). Missing, truncated, altered or unreadable files are named and moved to "
                              "<lake>/_quarantine/<time>/; the next run recomputes their cells. Exit 1 when "
                              "anything was wrong.")
    p.add_argument("--lake", help="lake directory (default: data_lake)")
    p.add_argument("--adopt", action="store_true", help="record files that have no record but read whole "
                   "(quarantine those that do not) instead of only naming them")
    return p


def add_repair_parser(subparsers):
    p = subparsers.add_parser("repair", help="keep one copy of each cell in a lake that stored cells twice",
                              description="For every table that holds cells, keeps each cell's earliest copy "
                              "(created_at, then file) and rewrites the files holding other copies. Failures, "
                              "plans and runs are logs and are left alone. Run it while no run writes the lake.")
    p.add_argument("--lake", help="lake directory (default: data_lake)")
    p.add_argument("--dry-run", action="store_true", help="only say how many rows would go")
    return p


def run_verify_command(args, lake: Lake) -> int:
    from dialogbench.lake.catalog import rebuild_existing_catalog
    from dialogbench.lake.verify import verify
    from dialogbench.lake.version import refuse_older

    with _lease(lake):  # it moves files: not while a run writes
        refuse_older(lake)
        _refuse_unreplaceable_catalog(lake)
        found = verify(lake, adopt=args.adopt)
        moved = [d for d in found if d.problem != "unrecorded"]
        if moved:
            rebuild_existing_catalog(lake)
    for damage in found:
        print(damage.line(lake.root))
    if moved:
        print(f"{len(moved)} damaged file(s) quarantined under {lake.root / '_quarantine'}; the next "
              "`dialogbench run` recomputes their cells")
    if len(found) > len(moved):
        print(f"{len(found) - len(moved)} file(s) not committed by this lake, left out of every query; "
              "`dialogbench verify --adopt` records those that read whole")
    if not found:
        print(f"{lake.root}: every committed file matches its checksum" if lake.tables_kind() == "files" else
              f"{lake.root}: every file of its Delta tables' latest versions has the size its log committed and the "
              "sha256 its writer recorded (a file with none: every page read back)")
    return 1 if found else 0


def run_repair_command(args, lake: Lake) -> int:
    from dialogbench.lake.catalog import rebuild_existing_catalog
    from dialogbench.lake.repair import repair
    from dialogbench.lake.version import refuse_older

    if lake.tables_kind() == "delta":
        print(f"{lake.root}: a Delta lake stores each cell once by its key (every write is an insert-if-absent "
              "merge), so it holds no copies to remove: nothing to repair")
        return 0
    with _lease(lake):
        refuse_older(lake)
        _refuse_unreplaceable_catalog(lake)
        results = repair(lake, dry_run=args.dry_run)
        total = sum(r.rows_removed for r in results)
        if total and not args.dry_run:
            rebuild_existing_catalog(lake)
    verb = "would remove" if args.dry_run else "removed"
    for r in results:
        print(f"  {r.table:28} {verb} {r.rows_removed:6d} duplicate row(s), {r.files_rewritten} file(s) rewritten")
    print(f"{total} duplicate row(s) " + ("would be removed" if args.dry_run else "removed") +
          ("; each cell keeps its earliest copy" if total else ""))
    return 0


def _lease(lake: Lake):
    """The lake's one-writer lease (``lake.lease``): a run writing the lake makes these commands refuse."""
    from dialogbench.lake.lease import lake_lease
    from dialogbench.lake.version import refuse_foreign

    refuse_foreign(lake)  # a folder that is not a lake: one line, and no .lease file left in it
    return lake_lease(lake.root, create=False)


def _refuse_unreplaceable_catalog(lake: Lake) -> None:
    """Before anything moves: a catalog that could not be rebuilt afterwards (a folder in its place) stops the
    command now, with one line, rather than after the lake changed."""
    from dialogbench.lake.catalog import catalog_problem

    problem = catalog_problem(lake.root)
    if problem is not None:
        raise problem
