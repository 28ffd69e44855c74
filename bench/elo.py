"""Ratings benchmark: vectorised Bootstrap Elo and the batched Bradley-Terry bootstrap.

Run from the repository root::

    .venv/bin/python bench/elo.py [--models 14] [--rounds 1000] [--sizes 1000,10000,100000]
        [--bt-games 10000] [--bt-rounds 200] [--repeats 10] [--out bench/results/elo.json]

Random games between ``--models`` models (strengths spread over 3 logits, 20% ties). For each size:
the time of ``bootstrap_elo`` (``--rounds`` shuffles), split into drawing the permutations and the
Elo loop, and a naive per-round Python loop (``elo_sequential`` per permutation) timed on a few
rounds and scaled up, for the speed-up. Then, at ``--bt-games``: the paper's full protocol
(``repeated_bootstrap_elo``, ``--repeats`` x ``--rounds``), one Bradley-Terry fit, and its bootstrap.
Importing this module does no work.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO_ROOT / "bench" / "results" / "elo.json"
NAIVE_ROUNDS = 5


def random_games(n: int, m: int, seed: int = 0):
    from dialogbench.ratings.games import Games

    rng = np.random.default_rng(seed)
    strength = np.linspace(-1.5, 1.5, m)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    p = 1.0 / (1.0 + np.exp(-(strength[a] - strength[b])))
    score = np.where(rng.random(n) < 0.2, 0.5, np.where(rng.random(n) < p, 1.0, 0.0))
    return Games.from_arrays(a, b, score, [f"model-{i:02d}" for i in range(m)])


def _timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def bench_bootstrap(n: int, m: int, rounds: int) -> dict:
    from dialogbench.ratings.elo import bootstrap_elo, elo_sequential, shuffle_orders

    games = random_games(n, m, seed=n)
    total_s, result = _timed(lambda: bootstrap_elo(games, rounds=rounds, seed=0))
    perm_s, orders = _timed(lambda: shuffle_orders(n, rounds, 0))
    naive_s, _ = _timed(lambda: [elo_sequential(games, order=o) for o in orders[:NAIVE_ROUNDS]])
    del orders
    return {"games": n, "models": m, "rounds": rounds, "bootstrap_s": total_s, "permutations_s": perm_s,
            "elo_loop_s": max(total_s - perm_s, 0.0), "naive_est_s": naive_s * rounds / NAIVE_ROUNDS,
            "us_per_game_position": 1e6 * max(total_s - perm_s, 0.0) / max(n, 1),
            "median_spread": float(result.median.max() - result.median.min())}


def bench_protocol(n: int, m: int, rounds: int, repeats: int, bt_rounds: int) -> dict:
    from dialogbench.ratings.bradley_terry import bootstrap_bradley_terry, fit_bradley_terry
    from dialogbench.ratings.elo import repeated_bootstrap_elo

    games = random_games(n, m, seed=12345)
    rep_s, rep = _timed(lambda: repeated_bootstrap_elo(games, repeats=repeats, rounds=rounds, base_seed=0))
    fit_s, _ = _timed(lambda: fit_bradley_terry(games))
    boot_s, bt = _timed(lambda: bootstrap_bradley_terry(games, rounds=bt_rounds, seed=0))
    return {"games": n, "models": m, "rounds": rounds, "repeats": repeats,
            "repeated_bootstrap_elo_s": rep_s, "max_elo_std_across_repeats": float(rep.std.max()),
            "bt_fit_s": fit_s, "bt_rounds": bt_rounds, "bt_bootstrap_s": boot_s,
            "bt_max_ci_width": float((bt.ci_high - bt.ci_low).max()),
            "elo_bt_rank_agreement": bool(np.array_equal(np.argsort(rep.mean), np.argsort(bt.ratings)))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", type=int, default=14)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--bt-games", type=int, default=10000)
    parser.add_argument("--bt-rounds", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    from bench.record import ended, record

    run = record(script=__file__, argv=argv)  # the load average before the work

    rows = []
    print(f"bootstrap_elo, {args.rounds} rounds, {args.models} models")
    print(f"{'games':>8} {'total s':>8} {'perms s':>8} {'loop s':>8} {'us/pos':>7} {'naive s (est)':>14} {'speed-up':>9}")
    for n in sizes:
        row = bench_bootstrap(n, args.models, args.rounds)
        rows.append(row)
        print(f"{n:>8} {row['bootstrap_s']:>8.3f} {row['permutations_s']:>8.3f} {row['elo_loop_s']:>8.3f} "
              f"{row['us_per_game_position']:>7.1f} {row['naive_est_s']:>14.1f} "
              f"{row['naive_est_s'] / row['bootstrap_s']:>8.0f}x", flush=True)
    proto = bench_protocol(args.bt_games, args.models, args.rounds, args.repeats, args.bt_rounds)
    print(f"\n{args.bt_games} games, {args.models} models:")
    print(f"  repeated_bootstrap_elo ({args.repeats} x {args.rounds}): {proto['repeated_bootstrap_elo_s']:.3f} s "
          f"(max std across repeats {proto['max_elo_std_across_repeats']:.2f})")
    print(f"  Bradley-Terry fit: {proto['bt_fit_s'] * 1000:.1f} ms; bootstrap ({args.bt_rounds} resamples): "
          f"{proto['bt_bootstrap_s']:.3f} s (max 95% CI width {proto['bt_max_ci_width']:.1f}); "
          f"Elo/BT same ranking: {proto['elo_bt_rank_agreement']}")

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    ended(run)["machine"]["numpy"] = np.__version__
    out.write_text(json.dumps({**run, "bootstrap_elo": rows, "protocol": proto}, indent=2) + "\n")
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        sys.path[0] = str(REPO_ROOT)  # this checkout's dialogbench and bench.record, not bench/'s modules
    sys.exit(main())
