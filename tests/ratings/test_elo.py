"""Elo and Bootstrap Elo (BotChat appendix A): hand-computed values, vectorised == naive, seeding."""

from __future__ import annotations

import numpy as np
import pytest

from dialogbench.ratings.elo import (bootstrap_elo, elo_sequential, repeated_bootstrap_elo,
                                     shuffle_orders)
from dialogbench.ratings.games import Games

E_AFTER_ONE = 1.0 / (1.0 + 10.0 ** -0.08)     # 0.5459219227804837, see test_two_games_by_hand


def games(rows, models=("A", "B")):
    """rows: (model_a, model_b, score for model_a)."""
    index = {m: i for i, m in enumerate(models)}
    return Games.from_arrays([index[a] for a, _, _ in rows], [index[b] for _, b, _ in rows],
                             [s for _, _, s in rows], list(models))


def random_games(n, m, seed, tie_rate=0.2):
    rng = np.random.default_rng(seed)
    strength = np.linspace(-1.5, 1.5, m)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    p = 1.0 / (1.0 + np.exp(-(strength[a] - strength[b])))
    u = rng.random(n)
    score = np.where(u < tie_rate, 0.5, np.where(rng.random(n) < p, 1.0, 0.0))
    return Games.from_arrays(a, b, score, [f"m{i:02d}" for i in range(m)])


def naive_bootstrap(g, orders):
    return np.stack([elo_sequential(g, order=o) for o in orders])


def test_one_win_by_hand():
    # Both start at 1000: E_A = 1/(1+10^0) = 0.5; dS = 32 * (1 - 0.5) = 16.
    np.testing.assert_allclose(elo_sequential(games([("A", "B", 1.0)])), [1016.0, 984.0], atol=1e-12)
    # Same game recorded from B's seat (B loses): same result.
    np.testing.assert_allclose(elo_sequential(games([("B", "A", 0.0)])), [1016.0, 984.0], atol=1e-12)


def test_two_games_by_hand():
    # Game 1: A beats B -> A 1016, B 984.
    # Game 2: B beats A. E_A = 1/(1+10^((984-1016)/400)) = 1/(1+10^-0.08) = 1/(1+0.831763771102671)
    #         = 0.5459219227804837; dS_A = 32 * (0 - 0.54592...) = -17.469501528975478
    #         -> A = 998.5304984710245, B = 1001.4695015289755.
    g = games([("A", "B", 1.0), ("A", "B", 0.0)])
    np.testing.assert_allclose(elo_sequential(g), [998.5304984710245, 1001.4695015289755], atol=1e-9)
    np.testing.assert_allclose(elo_sequential(g), [1016 - 32 * E_AFTER_ONE, 984 + 32 * E_AFTER_ONE], atol=1e-9)
    # Reversed order: B beats A first (B 1016, A 984), then A beats B: mirror image.
    np.testing.assert_allclose(elo_sequential(g, order=[1, 0]), [1001.4695015289755, 998.5304984710245], atol=1e-9)


def test_tie_by_hand():
    # After the two games above (A 998.5305, B 1001.4695) a tie: E_A = 1/(1+10^(2.93900/400))
    # = 0.4957705354885277; dS_A = 32 * (0.5 - 0.49577...) = 0.1353428643671144.
    g = games([("A", "B", 1.0), ("A", "B", 0.0), ("B", "A", 0.5)])
    np.testing.assert_allclose(elo_sequential(g), [998.6658413353916, 1001.3341586646084], atol=1e-9)
    # A tie between equals changes nothing; ratings are zero-sum around init.
    np.testing.assert_allclose(elo_sequential(games([("A", "B", 0.5)])), [1000.0, 1000.0])
    assert elo_sequential(g).sum() == pytest.approx(2000.0)


def test_parameters_are_used():
    g = games([("A", "B", 1.0)])
    # init 1500, K 10: E = 0.5, dS = 5.
    np.testing.assert_allclose(elo_sequential(g, init=1500, k=10), [1505.0, 1495.0])
    # scale only matters once ratings differ: second win with scale 200: E_A = 1/(1+10^(-32/200)).
    g2 = games([("A", "B", 1.0), ("A", "B", 1.0)])
    e = 1.0 / (1.0 + 10.0 ** (-32.0 / 200.0))
    np.testing.assert_allclose(elo_sequential(g2, scale=200), [1016 + 32 * (1 - e), 984 - 32 * (1 - e)])


def test_bootstrap_one_round_is_sequential_on_that_permutation():
    g = random_games(300, 5, seed=1)
    orders = shuffle_orders(len(g), 1, seed=7)
    assert sorted(orders[0].tolist()) == list(range(len(g)))
    result = bootstrap_elo(g, rounds=1, seed=7)
    np.testing.assert_allclose(result.ratings[0], elo_sequential(g, order=orders[0]), rtol=0, atol=1e-9)
    np.testing.assert_allclose(result.median, result.ratings[0], rtol=0, atol=0)


def test_vectorised_equals_naive_loop():
    g = random_games(400, 7, seed=2)
    orders = shuffle_orders(len(g), 25, seed=3)
    assert len({tuple(o) for o in orders}) == 25                        # different permutations
    expected = naive_bootstrap(g, orders)
    got = bootstrap_elo(g, rounds=25, seed=3)
    np.testing.assert_allclose(got.ratings, expected, rtol=0, atol=1e-9)
    np.testing.assert_allclose(bootstrap_elo(g, orders=orders).ratings, expected, rtol=0, atol=1e-9)
    # Non-default Elo parameters go through too.
    expected = np.stack([elo_sequential(g, order=o, init=1500, scale=200, k=10) for o in orders])
    got = bootstrap_elo(g, orders=orders, init=1500, scale=200, k=10)
    np.testing.assert_allclose(got.ratings, expected, rtol=0, atol=1e-9)


def test_chunked_rounds_equal_unchunked():
    """Rounds drawn in several chunks (memory cap) give the same permutations and ratings."""
    g = random_games(200, 4, seed=4)
    small = bootstrap_elo(g, rounds=10, seed=5, max_cells=200 * 3)       # chunks of 3 rounds
    np.testing.assert_array_equal(shuffle_orders(len(g), 10, 5, max_cells=600), shuffle_orders(len(g), 10, 5))
    np.testing.assert_allclose(small.ratings, bootstrap_elo(g, rounds=10, seed=5).ratings, rtol=0, atol=1e-9)


def test_median_over_rounds():
    g = random_games(200, 4, seed=6)
    result = bootstrap_elo(g, rounds=11, seed=0)
    assert result.ratings.shape == (11, 4)
    # Odd number of rounds: the median is the middle sorted value of each column.
    np.testing.assert_array_equal(result.median, np.sort(result.ratings, axis=0)[5])
    even = bootstrap_elo(g, rounds=4, seed=0)
    s = np.sort(even.ratings, axis=0)
    np.testing.assert_allclose(even.median, (s[1] + s[2]) / 2)
    assert result.as_dict().keys() == {"m00", "m01", "m02", "m03"}


def test_seed_determinism():
    g = random_games(200, 4, seed=8)
    a = bootstrap_elo(g, rounds=20, seed=11)
    np.testing.assert_array_equal(a.ratings, bootstrap_elo(g, rounds=20, seed=11).ratings)
    assert not np.array_equal(a.ratings, bootstrap_elo(g, rounds=20, seed=12).ratings)
    r1 = repeated_bootstrap_elo(g, repeats=3, rounds=20, base_seed=1)
    r2 = repeated_bootstrap_elo(g, repeats=3, rounds=20, base_seed=1)
    np.testing.assert_array_equal(r1.medians, r2.medians)
    assert len({tuple(row) for row in r1.medians}) == 3                 # repeats use different seeds


def test_repeated_bootstrap_summary():
    g = random_games(200, 4, seed=9)
    r = repeated_bootstrap_elo(g, repeats=4, rounds=30, base_seed=2)
    assert r.medians.shape == (4, 4)
    np.testing.assert_allclose(r.mean, r.medians.mean(axis=0))
    np.testing.assert_allclose(r.std, r.medians.std(axis=0, ddof=1))
    assert np.all(r.p2_5 <= r.mean) and np.all(r.mean <= r.p97_5)
    one = repeated_bootstrap_elo(g, repeats=1, rounds=30, base_seed=2)
    np.testing.assert_array_equal(one.std, np.zeros(4))


def test_repeated_std_small_on_larger_set():
    """The paper: std of the Bootstrap Elo (1000 rounds) across seeds is at most 1.4. Here, 5 repeats
    (a noisy sample std, seen 0.5-2.7 over seeds) must stay far below the per-shuffle spread (~150)."""
    g = random_games(1500, 6, seed=10)
    r = repeated_bootstrap_elo(g, repeats=5, rounds=1000, base_seed=0)
    spread = r.p97_5 - r.p2_5
    assert np.all(r.std < 4.0), r.std
    assert np.all(r.std < spread / 40), (r.std, spread)
    # Strengths are increasing in the model index; the Bootstrap Elo recovers that order.
    assert np.all(np.diff(r.mean) > 0), r.mean
    one = repeated_bootstrap_elo(g, repeats=1, rounds=5, base_seed=0)
    np.testing.assert_allclose(one.p2_5.shape, (6,))
    # Each shuffled run is zero-sum around init (the medians need not be).
    from dialogbench.ratings.elo import bootstrap_elo as be
    np.testing.assert_allclose(be(g, rounds=5).ratings.sum(axis=1), 6000.0, atol=1e-8)


def test_orders_shape_checked_and_empty_games():
    g = random_games(10, 3, seed=0)
    with pytest.raises(ValueError):
        bootstrap_elo(g, orders=np.zeros((2, 9), dtype=int))
    empty = Games.from_arrays([], [], [], ["x", "y"])
    np.testing.assert_array_equal(bootstrap_elo(empty, rounds=3).median, [1000.0, 1000.0])
