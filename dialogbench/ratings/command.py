"""``dialogbench elo FILE``: Bootstrap Elo (the paper's protocol) and Bradley-Terry ratings from a
CSV/Parquet file of pairwise verdicts (columns ``model_a``, ``model_b``, ``winner``).

Wiring (the parser in ``dialogbench/commands/parser.py``, the command in ``dialogbench/cli.py``)::

    from dialogbench.ratings.command import add_elo_parser, run_elo_command
    add_elo_parser(sub)                      # sub = parser.add_subparsers(...)
    handlers["elo"] = run_elo_command
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

import numpy as np

from dialogbench.ratings.bradley_terry import bootstrap_bradley_terry
from dialogbench.ratings.elo import INIT, K, SCALE, repeated_bootstrap_elo
from dialogbench.ratings.games import ComparisonsError, read_comparisons, win_rates
from dialogbench.text.textsafe import visible

RATING_COLUMNS = ("model", "elo", "elo_std", "elo_p2_5", "elo_p97_5", "bt", "bt_ci_low", "bt_ci_high", "games")
PAIR_COLUMNS = ("model_a", "model_b", "games", "wins_a", "wins_b", "ties", "win_rate", "tie_rate")


def _positive(value: str) -> int:
    n = int(value)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {n}")
    return n


def _non_negative(value: str) -> int:
    n = int(value)
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {n}")
    return n


def add_elo_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``elo`` subcommand to an ``add_subparsers()`` object; returns its parser."""
    p = subparsers.add_parser(
        "elo", help="Bootstrap Elo + Bradley-Terry ratings from a CSV/Parquet of pairwise verdicts",
        description="Ratings from a CSV or Parquet file with columns model_a, model_b, winner "
                    "(model_a | model_b | tie | a model's name). Elo: the BotChat Bootstrap Elo "
                    "(median over --rounds shuffles), averaged over --repeats seeds.")
    p.add_argument("file", help="CSV or Parquet file of comparisons")
    p.add_argument("--rounds", type=_positive, default=1000, help="shuffles per Bootstrap Elo (default 1000)")
    p.add_argument("--repeats", type=_positive, default=10, help="Bootstrap Elo repeats with different seeds (default 10)")
    p.add_argument("--seed", type=int, default=0, help="base random seed (default 0)")
    p.add_argument("--bt-rounds", type=_non_negative, default=200,
                   help="bootstrap resamples for the Bradley-Terry 95%% interval (default 200; 0: none)")
    p.add_argument("--init", type=float, default=INIT, help=f"initial Elo (default {INIT:g})")
    p.add_argument("--scale", type=float, default=SCALE, help=f"Elo scale (default {SCALE:g})")
    p.add_argument("--k", type=float, default=K, help=f"Elo K factor (default {K:g})")
    p.add_argument("--anchor", help="pin this model's Bradley-Terry rating at 1000 (default: mean 1000)")
    p.add_argument("--ordered-pairs", action="store_true",
                   help="pairwise table by seat (model_a column vs model_b column) instead of merged pairs")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table")
    return p


def compute_ratings(path, *, rounds: int = 1000, repeats: int = 10, seed: int = 0, bt_rounds: int = 200,
                    init: float = INIT, scale: float = SCALE, k: float = K, anchor: str | None = None,
                    ordered_pairs: bool = False) -> dict[str, list[dict[str, Any]]]:
    """``{"ratings": [row per model, by elo desc], "pairs": [row per pair]}`` for a comparisons file."""
    return rate(read_comparisons(path), rounds=rounds, repeats=repeats, seed=seed, bt_rounds=bt_rounds, init=init,
                scale=scale, k=k, anchor=anchor, ordered_pairs=ordered_pairs)


def rate(games, *, rounds: int = 1000, repeats: int = 10, seed: int = 0, bt_rounds: int = 200,
         init: float = INIT, scale: float = SCALE, k: float = K, anchor: str | None = None,
         ordered_pairs: bool = False) -> dict[str, list[dict[str, Any]]]:
    """Bootstrap Elo (mean and std of the medians over ``repeats`` seeds, pooled 2.5/97.5 percentiles)
    and Bradley–Terry with bootstrap intervals, for a set of games."""
    elo = repeated_bootstrap_elo(games, repeats=repeats, rounds=rounds, base_seed=seed,
                                 init=init, scale=scale, k=k)
    bt = bootstrap_bradley_terry(games, rounds=bt_rounds, seed=seed, anchor=anchor)
    played = games.games_per_model()
    rows = [{"model": name, "elo": elo.mean[i], "elo_std": elo.std[i], "elo_p2_5": elo.p2_5[i],
             "elo_p97_5": elo.p97_5[i], "bt": bt.ratings[i], "bt_ci_low": bt.ci_low[i],
             "bt_ci_high": bt.ci_high[i], "games": int(played[i])}
            for i, name in enumerate(games.models)]
    rows = [{key: (float(v) if isinstance(v, (float, np.floating)) else v) for key, v in row.items()}
            for row in rows]
    rows.sort(key=lambda r: (-r["elo"], r["model"]))
    pairs = win_rates(games, ordered=ordered_pairs).to_dicts()
    return {"ratings": rows, "pairs": pairs}


def _fmt(value: Any, digits: int) -> str:
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value)


def _table(rows: list[dict], columns: tuple[str, ...], digits: dict[str, int]) -> str:
    cells = [[_fmt(r[c], digits.get(c, 1)) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) if cells else len(c) for i, c in enumerate(columns)]
    text_cols = {i for i, c in enumerate(columns) if c in ("model", "model_a", "model_b")}

    def line(values):
        return "  ".join(v.ljust(w) if i in text_cols else v.rjust(w)
                         for i, (v, w) in enumerate(zip(values, widths))).rstrip()

    return "\n".join([line(columns), line(["-" * w for w in widths])] + [line(r) for r in cells])


def _csv(rows: list[dict], columns: tuple[str, ...]) -> str:
    import csv
    import io

    from dialogbench.text.csvsafe import guard_cell

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: guard_cell(v) for k, v in row.items()} for row in rows)  # a model name runs no formula
    return buf.getvalue().rstrip("\n")


def run_elo_command(args) -> int:
    """Handler for ``dialogbench elo``: prints the ratings and the pairwise table; exit 2 on bad input."""
    try:
        result = compute_ratings(args.file, rounds=args.rounds, repeats=args.repeats, seed=args.seed,
                                 bt_rounds=args.bt_rounds, init=args.init, scale=args.scale, k=args.k,
                                 anchor=args.anchor, ordered_pairs=args.ordered_pairs)
    except ComparisonsError as exc:
        print(visible(f"error: {exc}"), file=sys.stderr)
        return 2
    except ValueError as exc:  # e.g. an unknown --anchor
        print(visible(f"error: {args.file}: {exc}"), file=sys.stderr)
        return 2
    ratings, pairs = result["ratings"], result["pairs"]
    if args.format == "json":
        clean = {key: [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
                       for row in rows] for key, rows in result.items()}
        print(json.dumps(clean, indent=2))
    elif args.format == "csv":
        print(_csv(ratings, RATING_COLUMNS))
        print()
        print(_csv(pairs, PAIR_COLUMNS))
    else:
        print(f"Bootstrap Elo: mean of {args.repeats} medians over {args.rounds} shuffles "
              f"(init {args.init:g}, scale {args.scale:g}, K {args.k:g}); elo_std across repeats (ddof=1), "
              f"p2_5/p97_5 of all shuffles.  Bradley-Terry: Elo scale, "
              f"{'95% bootstrap CI over ' + str(args.bt_rounds) + ' resamples' if args.bt_rounds else 'no CI'}.")
        # the table is for a terminal: a model name from the file runs no escape sequence (csv and json are data)
        print(visible(_table(ratings, RATING_COLUMNS, {"elo_std": 2})))
        print()
        print(visible(_table(pairs, PAIR_COLUMNS, {"win_rate": 3, "tie_rate": 3})))
    return 0
