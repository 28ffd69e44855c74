"""Bradley-Terry: the closed-form MLE, symmetry, ordering recovery, perfect records, bootstrap CIs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dialogbench.ratings.bradley_terry import (ELO_PER_LOGIT, bootstrap_bradley_terry, fit_bradley_terry,
                                               pair_points)
from dialogbench.ratings.games import Games


def from_rows(rows):
    return Games.from_records([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])


def synthetic(n=4000, m=6, seed=0):
    rng = np.random.default_rng(seed)
    strength = rng.permutation(np.linspace(-1.2, 1.2, m))          # logits, shuffled vs index
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    p = 1.0 / (1.0 + np.exp(-(strength[a] - strength[b])))
    score = (rng.random(n) < p).astype(float)
    return Games.from_arrays(a, b, score, [f"m{i}" for i in range(m)]), strength


def test_three_of_four_is_the_closed_form_mle():
    # Two players, A wins 3 of 4: the MLE of P(A beats B) is 3/4, so theta_A - theta_B = ln 3 logits
    # = 400 * log10(3) = 190.8485 Elo points; mean anchored at 1000.
    g = from_rows([("A", "B", "model_a")] * 3 + [("A", "B", "model_b")])
    r = fit_bradley_terry(g, l2=0.0)
    assert r[0] - r[1] == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert r.mean() == pytest.approx(1000.0)
    # The default small prior (l2=0.01) shrinks it a little (1.3 points with only 4 games).
    r = fit_bradley_terry(g)
    assert 400 * math.log10(3) - 2.0 < r[0] - r[1] < 400 * math.log10(3)


def test_ties_are_half_wins():
    # 2 wins + 2 ties of 4 = 3 points of 4: same MLE as 3 wins of 4.
    g = from_rows([("A", "B", "A")] * 2 + [("A", "B", "tie")] * 2)
    r = fit_bradley_terry(g, l2=0.0)
    assert r[0] - r[1] == pytest.approx(400 * math.log10(3), abs=1e-6)


def test_symmetric_record_gives_equal_ratings():
    g = from_rows([("A", "B", "model_a")] * 3 + [("B", "A", "model_a")] * 3)
    for l2 in (0.0, 1e-2):
        np.testing.assert_allclose(fit_bradley_terry(g, l2=l2), [1000.0, 1000.0], atol=1e-9)


def test_recovers_synthetic_ordering_and_scale():
    g, strength = synthetic()
    r = fit_bradley_terry(g)
    assert list(np.argsort(r)) == list(np.argsort(strength))
    # Elo-scale gaps track the true logit gaps (400/ln10 per logit), within sampling noise.
    true = (strength - strength.mean()) * ELO_PER_LOGIT + 1000
    assert np.max(np.abs(r - true)) < 40


def test_perfect_record_stays_finite_with_prior():
    g = from_rows([("A", "B", "A")] * 5 + [("B", "C", "B")] * 5 + [("A", "C", "tie")] * 2)
    r = fit_bradley_terry(g)
    assert np.all(np.isfinite(r)) and np.max(np.abs(r - 1000)) < 3000
    assert r[0] > r[1] > r[2], r
    # A model that lost everything is last.
    g2 = from_rows([("A", "Z", "A"), ("B", "Z", "B"), ("A", "B", "A"), ("A", "B", "B")])
    r2 = fit_bradley_terry(g2)
    assert np.all(np.isfinite(r2)) and np.argmin(r2) == 2


def test_anchor():
    g = from_rows([("A", "B", "model_a")] * 3 + [("A", "B", "model_b")])
    r = fit_bradley_terry(g, l2=0.0, anchor="B")
    assert r[1] == pytest.approx(1000.0)
    assert r[0] == pytest.approx(1000.0 + 400 * math.log10(3), abs=1e-6)
    with pytest.raises(ValueError, match="anchor"):
        fit_bradley_terry(g, anchor="nobody")


def test_pair_points():
    g = from_rows([("A", "B", "A"), ("B", "A", "tie"), ("B", "A", "model_a")])
    # A: 1 (win) + 0.5 (tie) = 1.5 against B; B: 0.5 + 1 = 1.5 against A.
    np.testing.assert_allclose(pair_points(g), [[0.0, 1.5], [1.5, 0.0]])


def test_bootstrap_ci_seeded_and_sensible():
    g, strength = synthetic(n=2000, m=5, seed=3)
    res = bootstrap_bradley_terry(g, rounds=100, seed=4)
    assert res.boot.shape == (100, 5)
    assert np.all(res.ci_low < res.ratings) and np.all(res.ratings < res.ci_high)
    width = res.ci_high - res.ci_low
    assert np.all(width > 5) and np.all(width < 150), width
    again = bootstrap_bradley_terry(g, rounds=100, seed=4)
    np.testing.assert_array_equal(res.ci_low, again.ci_low)
    assert not np.array_equal(res.boot, bootstrap_bradley_terry(g, rounds=100, seed=5).boot)
    none = bootstrap_bradley_terry(g, rounds=0)
    assert np.all(np.isnan(none.ci_low)) and np.array_equal(none.ratings, res.ratings)


def test_batched_bootstrap_fit_equals_single_fits():
    """Each bootstrap row equals fitting that resample alone (the batched Newton is not approximate)."""
    from dialogbench.ratings.bradley_terry import fit_logits

    g, _ = synthetic(n=300, m=4, seed=5)
    rng = np.random.default_rng(0)
    Ws = np.stack([pair_points(g.subset(rng.integers(0, len(g), len(g)))) for _ in range(5)])
    batched = fit_logits(Ws)
    for W, row in zip(Ws, batched):
        np.testing.assert_allclose(fit_logits(W), row, atol=1e-8)
