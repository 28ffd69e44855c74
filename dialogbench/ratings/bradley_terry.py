"""Maximum-likelihood Bradley-Terry ratings on the Elo scale, with bootstrap confidence intervals.

Model: P(i beats j) = sigmoid(theta_i - theta_j). A tie is the outcome 0.5 ("half a win for each
side"), so the log-likelihood of a game with result R for a is
``R log sigmoid(theta_a - theta_b) + (1 - R) log sigmoid(theta_b - theta_a)``. Only the per-pair
totals matter: ``W[i, j]`` = points i scored against j (wins + ties/2), ``N = W + W.T``.

Fit: Newton's method (with step halving, so the penalised log-likelihood never decreases) on
``loglik(theta) - l2/2 * |theta|^2 - 1/2 * (sum theta)^2``. The last term only fixes the free additive
constant (it is zero at the optimum, whose gradient sums to zero); the ``l2`` term is a small
Gaussian prior (std 1/sqrt(l2) logits, 10 logits ~ 1737 Elo points for the default 0.01) that keeps a
model that won or lost every game -- whose MLE is at infinity -- finite, and ties disconnected
groups of models together at the mean. With lots of games it moves ratings by well under a point;
pass ``l2=0`` for the pure MLE (then a perfect record diverges until ``max_iter``).

Ratings are reported on the Elo scale: ``400 / ln 10`` Elo points per logit (so a 400-point gap is
10:1 odds, like Elo), shifted so that the mean is ``anchor_rating`` (1000), or so that the model
named by ``anchor`` is at ``anchor_rating``.

Bootstrap: resample the games with replacement (``rounds`` times, seeded) and refit. Resampling n
games with replacement is the same as drawing a multinomial(n, counts / n) over the distinct
(a, b, result) cells, which is what is done, and all rounds are fitted at once (batched Newton).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from dialogbench.ratings.games import Games

ELO_PER_LOGIT = 400.0 / math.log(10.0)
L2 = 1e-2


@dataclass(frozen=True)
class BradleyTerry:
    models: list[str]
    ratings: np.ndarray    # (models,) Elo-scale ratings of the fit on all games
    ci_low: np.ndarray     # (models,) lower bootstrap percentile ((1 - ci) / 2); NaN without bootstrap
    ci_high: np.ndarray    # (models,) upper bootstrap percentile
    boot: np.ndarray       # (rounds, models) Elo-scale ratings of each bootstrap refit
    ci: float

    def as_dict(self) -> dict[str, float]:
        return dict(zip(self.models, map(float, self.ratings)))


def pair_points(games: Games, weights: np.ndarray | None = None) -> np.ndarray:
    """``W[i, j]``: points i scored against j (win 1, tie 1/2), optionally weighting each game."""
    m = games.n_models
    w = np.ones(len(games)) if weights is None else np.asarray(weights, dtype=np.float64)
    points = np.bincount(games.a * m + games.b, weights=w * games.score, minlength=m * m) + \
        np.bincount(games.b * m + games.a, weights=w * (1.0 - games.score), minlength=m * m)
    return points.reshape(m, m)


def _penalised_loglik(theta: np.ndarray, W: np.ndarray, l2: float) -> np.ndarray:
    d = theta[:, :, None] - theta[:, None, :]                    # (B, m, m): theta_i - theta_j
    ll = -(W * np.logaddexp(0.0, -d)).sum(axis=(1, 2))          # sum W_ij log sigmoid(d_ij)
    return ll - 0.5 * l2 * (theta ** 2).sum(axis=1) - 0.5 * theta.sum(axis=1) ** 2


def fit_logits(W: np.ndarray, *, l2: float = L2, max_iter: int = 100, tol: float = 1e-10) -> np.ndarray:
    """Penalised ML strengths (logits, mean zero) from points matrices ``W`` of shape (m, m) or
    (batch, m, m); batches are fitted together."""
    W = np.asarray(W, dtype=np.float64)
    single = W.ndim == 2
    if single:
        W = W[None]
    batch, m, _ = W.shape
    N = W + W.transpose(0, 2, 1)
    theta = np.zeros((batch, m))
    ll = _penalised_loglik(theta, W, l2)
    eye = np.eye(m)
    active = np.ones(batch, dtype=bool)
    for _ in range(max_iter):
        ids = np.flatnonzero(active)
        if ids.size == 0:
            break
        th, Wa, Na = theta[ids], W[ids], N[ids]
        p = 1.0 / (1.0 + np.exp(-(th[:, :, None] - th[:, None, :])))   # P(i beats j)
        s = th.sum(axis=1, keepdims=True)
        grad = (Wa - Na * p).sum(axis=2) - l2 * th - s
        info = Na * p * (1.0 - p)                                    # Fisher information weights
        # Negative Hessian: Laplacian of the information graph + l2 I + the gauge term 1 1^T.
        neg_h = eye * (info.sum(axis=2)[:, :, None] + l2 + 1e-12) - info + 1.0
        step = np.linalg.solve(neg_h, grad[:, :, None])[:, :, 0]
        lla = ll[ids]
        scale = np.ones(ids.size)
        new = th + step
        new_ll = _penalised_loglik(new, Wa, l2)
        for _half in range(40):                                      # step halving where needed
            worse = new_ll < lla - 1e-12 * np.abs(lla)
            if not worse.any():
                break
            scale[worse] *= 0.5
            new[worse] = th[worse] + scale[worse, None] * step[worse]
            new_ll[worse] = _penalised_loglik(new[worse], Wa[worse], l2)
        theta[ids], ll[ids] = new, new_ll
        done = np.abs(scale[:, None] * step).max(axis=1) < tol
        active[ids[done]] = False
    theta -= theta.mean(axis=1, keepdims=True)
    return theta[0] if single else theta


def _to_elo(theta: np.ndarray, models: Sequence[str], anchor: str | None, anchor_rating: float) -> np.ndarray:
    elo = theta * ELO_PER_LOGIT
    if anchor is None:
        ref = elo.mean(axis=-1, keepdims=True)
    else:
        if anchor not in models:
            raise ValueError(f"anchor model {anchor!r} is not one of {list(models)}")
        ref = elo[..., [list(models).index(anchor)]]
    return elo - ref + anchor_rating


def fit_bradley_terry(games: Games, *, l2: float = L2, anchor: str | None = None,
                      anchor_rating: float = 1000.0, max_iter: int = 100) -> np.ndarray:
    """Bradley-Terry ratings on the Elo scale, aligned with ``games.models``."""
    theta = fit_logits(pair_points(games), l2=l2, max_iter=max_iter)
    return _to_elo(theta, games.models, anchor, anchor_rating)


def bootstrap_bradley_terry(games: Games, *, rounds: int = 200, seed: int | np.random.SeedSequence = 0,
                            ci: float = 0.95, l2: float = L2, anchor: str | None = None,
                            anchor_rating: float = 1000.0, max_iter: int = 100) -> BradleyTerry:
    """:func:`fit_bradley_terry` plus a percentile bootstrap interval (``ci``, default 95%) from
    ``rounds`` resamplings of the games with replacement. ``rounds=0``: no interval (NaN)."""
    m = games.n_models
    ratings = fit_bradley_terry(games, l2=l2, anchor=anchor, anchor_rating=anchor_rating, max_iter=max_iter)
    n = len(games)
    if rounds <= 0 or n == 0:
        nan = np.full(m, np.nan)
        return BradleyTerry(list(games.models), ratings, nan, nan.copy(), np.empty((0, m)), ci)
    # Distinct (a, b, result) cells and their counts; a bootstrap sample is a multinomial over them.
    code = (games.a * m + games.b) * 3 + np.rint(games.score * 2).astype(np.int64)
    cells, counts = np.unique(code, return_counts=True)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, counts / n, size=rounds).astype(np.float64)   # (rounds, cells)
    result = (cells % 3) / 2.0
    pair = cells // 3
    a, b = pair // m, pair % m
    W = np.zeros((rounds, m * m))
    np.add.at(W, (slice(None), a * m + b), draws * result)
    np.add.at(W, (slice(None), b * m + a), draws * (1.0 - result))
    theta = fit_logits(W.reshape(rounds, m, m), l2=l2, max_iter=max_iter)
    boot = _to_elo(theta, games.models, anchor, anchor_rating)
    lo, hi = np.percentile(boot, [50.0 * (1.0 - ci), 50.0 * (1.0 + ci)], axis=0)
    return BradleyTerry(list(games.models), ratings, lo, hi, boot, ci)
