"""Elo and the BotChat "Bootstrap Elo" (BotChat paper, appendix A; Table 2 uses init 1000, scale 400, K 32).

For a game between i and j with result R for i (1 win, 0 loss, 0.5 tie)::

    E_i  = 1 / (1 + 10 ** ((S_j - S_i) / scale))
    S_i += K * (R - E_i)
    S_j -= K * (R - E_i)

(The appendix prints E_j with the same formula as E_i and dS_j = K(1 - R - E_i); both are typos --
with E_j = 1 - E_i the update of j is exactly minus the update of i, as above.)

Bootstrap Elo: shuffle the games ``rounds`` (N = 1000) times, run sequential Elo over each shuffled
list and take the per-model median of the ``rounds`` final ratings. The paper repeats this with 10
seeds and reports the mean of the medians (:func:`repeated_bootstrap_elo`).

:func:`bootstrap_elo` is vectorised over rounds: all permutations are drawn at once, then one Python
loop walks the game positions and updates a (rounds x models) rating matrix (stored flat) by fancy
indexing. The result is identical (to float rounding) to running :func:`elo_sequential` on every
permutation; ``tests/ratings/test_elo.py`` checks that.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator, Union

import numpy as np

from dialogbench.ratings.games import Games

INIT = 1000.0
SCALE = 400.0
K = 32.0
# Permutation matrices are drawn in chunks of rounds so that one chunk holds at most this many
# (round, position) cells: 2**26 int32 = 256 MiB. Only >= 67k games x 1000 rounds are chunked.
MAX_CELLS = 1 << 26
# Game positions gathered per block (a (block x rounds) slice of index arrays is built at a time).
_T_BLOCK = 1024

SeedLike = Union[int, np.random.SeedSequence, np.random.Generator, None]


def elo_sequential(games: Games, *, init: float = INIT, scale: float = SCALE, k: float = K,
                   order: np.ndarray | None = None) -> np.ndarray:
    """Plain Elo over the games in the given ``order`` (default: as stored). Returns the final ratings,
    aligned with ``games.models``. A straightforward loop: the reference for the vectorised version."""
    ratings = [float(init)] * games.n_models
    idx = range(len(games)) if order is None else order
    a, b, score = games.a, games.b, games.score
    for g in idx:
        i, j = int(a[g]), int(b[g])
        e_i = 1.0 / (1.0 + 10.0 ** ((ratings[j] - ratings[i]) / scale))
        delta = k * (float(score[g]) - e_i)
        ratings[i] += delta
        ratings[j] -= delta
    return np.array(ratings, dtype=np.float64)


@dataclass(frozen=True)
class BootstrapElo:
    models: list[str]
    ratings: np.ndarray   # (rounds, models): final Elo of each shuffled run
    median: np.ndarray    # (models,): the Bootstrap Elo

    def as_dict(self) -> dict[str, float]:
        return dict(zip(self.models, map(float, self.median)))


@dataclass(frozen=True)
class RepeatedBootstrapElo:
    models: list[str]
    medians: np.ndarray   # (repeats, models): the Bootstrap Elo of each repeat
    mean: np.ndarray      # (models,): mean of the medians -- what Table 2 reports
    std: np.ndarray       # (models,): sample std (ddof=1) of the medians across repeats; 0 for 1 repeat
    p2_5: np.ndarray      # (models,): 2.5th percentile of all repeats x rounds per-run ratings
    p97_5: np.ndarray     # (models,): 97.5th percentile of the same pool
    rounds: int
    repeats: int


def _chunk_rounds(n_games: int, rounds: int, max_cells: int) -> int:
    if n_games == 0:
        return max(rounds, 1)
    return max(1, min(rounds, max_cells // n_games))


def _iter_orders(n_games: int, rounds: int, rng: np.random.Generator,
                 max_cells: int = MAX_CELLS) -> Iterator[np.ndarray]:
    """Permutations of ``range(n_games)``, one per row, in (chunk x n_games) blocks."""
    # The smallest index type: rng.permuted is memory-bound, int16 shuffles ~1.7x faster than int32.
    # The permutation drawn does not depend on the dtype.
    dtype = np.int16 if n_games < 2**15 else np.int32 if n_games < 2**31 else np.int64
    step = _chunk_rounds(n_games, rounds, max_cells)
    base = np.arange(n_games, dtype=dtype)
    for start in range(0, rounds, step):
        r = min(step, rounds - start)
        orders = np.tile(base, (r, 1))          # contiguous: in-place permuted is ~3x faster than
        rng.permuted(orders, axis=1, out=orders)  # permuting a broadcast view for 100k games
        yield orders


def shuffle_orders(n_games: int, rounds: int, seed: SeedLike = 0, *, max_cells: int = MAX_CELLS) -> np.ndarray:
    """The (rounds x n_games) permutations :func:`bootstrap_elo` draws for the same ``seed``."""
    rng = np.random.default_rng(seed)
    chunks = list(_iter_orders(n_games, rounds, rng, max_cells))
    return np.concatenate(chunks, axis=0) if chunks else np.empty((0, n_games), dtype=np.int64)


def _elo_rounds(games: Games, orders: np.ndarray, init: float, scale: float, k: float) -> np.ndarray:
    """Sequential Elo for every row of ``orders`` at once: one loop over positions, none over rounds.

    Works in half-logit units relative to ``init``, q = (S - init) * c / 2 with c = ln(10) / scale, so
    that E_a = 1 / (1 + exp(2 (q_b - q_a))) = (1 + tanh(q_a - q_b)) / 2 and the Elo update
    dS = K (R - E_a) becomes dq = (c K / 2)(R - 1/2) - (c K / 4) tanh(q_a - q_b): per game position
    8 numpy calls on arrays of length ``rounds`` (one gather, one scatter of both players' ratings).
    """
    rounds, n = orders.shape
    m = games.n_models
    flat = np.zeros(rounds * m, dtype=np.float64)                # q of (round r, model j) at r * m + j
    if n == 0 or rounds == 0:
        return np.full((rounds, m), float(init))
    c = math.log(10.0) / scale
    half_win = (c * k / 2.0) * (games.score - 0.5)               # per game: (c K / 2)(R - 1/2)
    slope = c * k / 4.0
    offset = np.arange(rounds, dtype=np.int64) * m
    x = np.empty(rounds, dtype=np.float64)
    q = np.empty((2, rounds), dtype=np.float64)
    qa, qb = q[0], q[1]                                          # views, made once
    for t0 in range(0, n, _T_BLOCK):
        cols = np.ascontiguousarray(orders[:, t0:t0 + _T_BLOCK].T)  # (block, rounds): game ids
        pair = np.empty((cols.shape[0], 2, rounds), dtype=np.int64)
        np.add(games.a[cols], offset, out=pair[:, 0])             # flat slot of a's rating per round
        np.add(games.b[cols], offset, out=pair[:, 1])             # ... and of b's
        base = half_win[cols]
        for t in range(cols.shape[0]):
            idx = pair[t]
            flat.take(idx, out=q, mode="clip")                   # (2, rounds): q_a, q_b
            np.subtract(qa, qb, out=x)
            np.tanh(x, out=x)
            x *= slope
            np.subtract(base[t], x, out=x)                       # dq for a
            qa += x
            qb -= x
            flat[idx] = q                                        # a != b and rounds use disjoint slots:
                                                                 # no slot repeats within a step
    return init + flat.reshape(rounds, m) * (2.0 / c)


def bootstrap_elo(games: Games, *, rounds: int = 1000, seed: SeedLike = 0, init: float = INIT,
                  scale: float = SCALE, k: float = K, orders: np.ndarray | None = None,
                  max_cells: int = MAX_CELLS) -> BootstrapElo:
    """Bootstrap Elo: ``rounds`` random orderings of all games (drawn from ``seed``), sequential Elo
    over each, median per model. Pass ``orders`` (rounds x n_games permutations) to fix the orderings
    (``rounds`` and ``seed`` are then ignored). Deterministic for a given seed, rounds and game list."""
    if orders is not None:
        orders = np.asarray(orders)
        if orders.ndim != 2 or orders.shape[1] != len(games):
            raise ValueError(f"orders must be (rounds, {len(games)}), got {orders.shape}")
        ratings = _elo_rounds(games, orders, init, scale, k)
    else:
        if rounds < 1:
            raise ValueError(f"rounds must be >= 1, got {rounds}")
        rng = np.random.default_rng(seed)
        parts = [_elo_rounds(games, chunk, init, scale, k)
                 for chunk in _iter_orders(len(games), rounds, rng, max_cells)]
        ratings = np.concatenate(parts, axis=0)
    return BootstrapElo(list(games.models), ratings, np.median(ratings, axis=0))


def repeated_bootstrap_elo(games: Games, *, repeats: int = 10, rounds: int = 1000, base_seed: int = 0,
                           init: float = INIT, scale: float = SCALE, k: float = K) -> RepeatedBootstrapElo:
    """The paper's protocol: :func:`bootstrap_elo` ``repeats`` times with independent seeds (spawned
    from ``base_seed`` by ``np.random.SeedSequence``), reporting per model the mean of the medians,
    their sample standard deviation (ddof=1; 0.0 when ``repeats == 1``), and the 2.5 / 97.5
    percentiles of all ``repeats * rounds`` per-run final ratings as a spread."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    runs = [bootstrap_elo(games, rounds=rounds, seed=ss, init=init, scale=scale, k=k)
            for ss in np.random.SeedSequence(base_seed).spawn(repeats)]
    medians = np.stack([r.median for r in runs])
    pooled = np.concatenate([r.ratings for r in runs], axis=0)
    std = medians.std(axis=0, ddof=1) if repeats > 1 else np.zeros(games.n_models)
    p2_5, p97_5 = np.percentile(pooled, [2.5, 97.5], axis=0)
    return RepeatedBootstrapElo(list(games.models), medians, medians.mean(axis=0), std, p2_5, p97_5,
                                rounds, repeats)
