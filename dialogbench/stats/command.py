"""``dialogbench compare A B``: is model A really ahead of model B, on every headline number of a board.

One table per family: per metric and slice, A's and B's numbers on the units both have, A − B, its 95% paired-
bootstrap interval, the p-value (Holm-adjusted over the board's pairs of that metric and slice, so comparing two
models among many does not inflate the false alarms) and the verdict. With ``--all`` every pair of the board's
models; ``--standings`` prints instead each model's number, its interval and its rank range (the ranks its interval
allows: Chatbot Arena's rule)."""

from __future__ import annotations

import argparse
import json
import sys

from dialogbench.stats.bootstrap import ROUNDS
from dialogbench.text.textsafe import visible

STANDING_COLUMNS = ("metric", "slice", "model", "value", "ci_low", "ci_high", "clusters", "rank", "rank_low",
                    "rank_high", "note")
COLUMNS = ("metric", "slice", "model_a", "model_b", "value_a", "value_b", "difference", "ci_low", "ci_high", "p_holm",
           "shared", "verdict")


def _rounds(value: str) -> int:
    n = int(value)
    if n < 100:
        raise argparse.ArgumentTypeError(f"must be >= 100 (a 95% interval from fewer resamples is noise), got {n}")
    return n


def add_compare_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "compare", help="is model A really ahead of model B: paired bootstrap on the items both have, every "
                        "headline number of a board",
        description="Compare two models (or, with --all, every pair) on every headline number of a board that has "
                    "units (BotChat pass@N and GTEval, MT-Bench-101 task scores and average, GameEval rates): the "
                    "difference on the items both were scored on, its 95%% paired-bootstrap interval, the p-value "
                    "Holm-adjusted over the pairs of each metric, and a verdict.")
    p.add_argument("models", nargs="*", metavar="MODEL", help="the two models to compare (none with --all)")
    p.add_argument("--all", action="store_true", help="every pair of the board's models")
    p.add_argument("--standings", action="store_true",
                   help="each model's number with its 95%% interval, rank and rank range (the ranks its interval "
                        "allows) instead of the pairs")
    p.add_argument("--lake", help="lake directory (default: data_lake)")
    p.add_argument("--board", help="the board to read (default: the lake's default board)")
    p.add_argument("--family", action="append", default=[], help="only this family (repeatable)")
    p.add_argument("--rounds", type=_rounds, default=ROUNDS, help=f"bootstrap resamples (default {ROUNDS})")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--format", choices=("table", "json"), default="table")
    return p


def _fmt(value, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _table(rows: list[dict], columns: tuple[str, ...] = COLUMNS) -> str:
    cells = [[_fmt(r[c]) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    line = lambda values: "  ".join(v.ljust(w) for v, w in zip(values, widths)).rstrip()  # noqa: E731
    return "\n".join([line(columns), line(["-" * w for w in widths]), *(line(row) for row in cells)])


def run_compare_command(args, lake) -> int:
    """Handler for ``dialogbench compare``: exit 2 on a usage error or a model the board does not have."""
    from dialogbench.run import registry
    from dialogbench.judge_checks.check import board_findings, settings_from_yaml
    from dialogbench.judge_checks.health import not_measured
    from dialogbench.lake.catalog import connect
    from dialogbench.stats.compare import compare, models_on, standings

    if not args.standings and (args.all == bool(args.models) or (args.models and len(args.models) != 2)):
        print("error: compare: name two models (dialogbench compare A B) or say --all (or --standings)",
              file=sys.stderr)
        return 2
    known = {f.name for f in registry.families() if f.metrics}
    unknown = [name for name in args.family if name not in known]
    if unknown:
        print(f"error: compare: --family {unknown[0]!r}: not one of {', '.join(sorted(known))}", file=sys.stderr)
        return 2
    families = [f for f in registry.families() if f.metrics and (not args.family or f.name in args.family)]
    with connect(lake, board=args.board) as con:
        recorded = con.execute("select config from run_configs where board is not distinct from "
                               "(select board from current_board) order by created_at desc limit 1").fetchone()
        unmeasured = not_measured(board_findings(con, settings_from_yaml(recorded[0] if recorded else None)))
        found = [] if args.standings else compare(con, families, models=args.models or None, unmeasured=unmeasured,
                                                  rounds=args.rounds, seed=args.seed)
        ranked = standings(con, families, rounds=args.rounds, seed=args.seed) if args.standings else []
        board = con.execute("select board from current_board").fetchone()[0]
        present = models_on(con, families)
    missing = [m for m in args.models if m not in present]
    if missing:
        print(visible(f"error: compare: board {board!r} has no numbers for {', '.join(map(repr, missing))} (it has "
                      f"{', '.join(sorted(present)) or 'none'}; --board picks another)"), file=sys.stderr)
        return 2
    if args.standings:
        return _print_standings(args, board, families, [s.row() for s in ranked
                                                         if not args.models or s.model in args.models])
    rows = [c.row() | {"family": c.family} for c in found]
    if args.format == "json":
        print(json.dumps(rows, indent=2))
        return 0
    print(f"board {board}: paired bootstrap over the items both models have ({args.rounds} resamples, seed "
          f"{args.seed}); p Holm-adjusted over each metric's pairs; '<model> ahead' when it is under 0.05 and the "
          "95% interval of the difference excludes 0")
    for family in families:
        mine = [r for r in rows if r["family"] == family.name]
        if mine:
            print(f"\n{family.title}")
            print(visible(_table(mine)))
    return 0


def _print_standings(args, board: str, families, rows: list[dict]) -> int:
    if args.format == "json":
        print(json.dumps(rows, indent=2))
        return 0
    print(f"board {board}: each number with its 95% cluster-bootstrap interval ({args.rounds} resamples, seed "
          f"{args.seed}); rank_low-rank_high: the ranks its interval allows (1 + the models wholly above it, to the "
          "count less those wholly below)")
    for family in families:
        mine = [r for r in rows if r["family"] == family.name]
        if mine:
            print(f"\n{family.title}")
            print(visible(_table(mine, STANDING_COLUMNS)))
    return 0
