"""One cluster bootstrap for every family's headline numbers, and one paired test for any two models.

A headline number is a mean over strata of a weighted mean over clusters: ``sum(w * v) / sum(w)`` within each
stratum, then the plain mean over the strata. The cluster is the independent unit that is resampled whole:

* BotChat: the seed (both orders of a GTEval or Arena comparison are one seed, so one cluster; ``v`` a seed's share
  of wins or ties, ``w`` its comparisons, which makes the weighted mean the pooled rate);
* MT-Bench-101: the dialogue (its value is already its minimum over turns); the overall average is the mean over the
  13 task strata of each task's mean, so the resample is stratified by task, as the estimator is;
* GameEval: the word (Ask-Guess), the word pair (SpyFall), the game (TofuKingdom): what the authors average over.

``interval`` draws ``rounds`` resamples of the clusters with replacement inside each stratum (multinomial counts, one
matrix product per stratum: vectorised, seeded) and returns the 2.5th and 97.5th percentiles of the statistic.
``paired`` resamples the clusters two models share with the same draws for both, so the difference's interval
removes what the items themselves contribute (a hard item is hard for both); its p-value is the two-sided bootstrap
p of no difference (the resampled differences centred on the observed one, as Efron & Tibshirani 1993, 16.4).
``holm`` adjusts a family of p-values for multiplicity. With fewer than ``MIN_CLUSTERS`` clusters (in a stratum)
there is no interval and the reason says so: a band of zero width over two dialogues would claim a certainty there
is none."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

ROUNDS = 1000       # default resamples
LEVEL = 0.95
MIN_CLUSTERS = 5    # in each stratum: below it a percentile interval is not one
ALPHA = 0.05


@dataclass(frozen=True)
class Units:
    """A model's units for one number: ``strata[i]``, ``clusters[i]`` (names), ``values[i]`` and ``weights[i]``, one
    row per cluster (a cluster named twice in a stratum is summed first: ``Units.of``)."""

    strata: tuple[str, ...]
    clusters: tuple[str, ...]
    values: np.ndarray
    weights: np.ndarray

    @classmethod
    def of(cls, rows: Iterable[tuple[str, str, float, float]]) -> "Units":
        """From ``(stratum, cluster, value, weight)`` rows; rows of one cluster pool their weighted values; rows with a
        null value or a weight that is not positive are left out."""
        pooled: dict[tuple[str, str], list[float]] = {}
        for stratum, cluster, value, weight in rows:
            if value is None or weight is None or not np.isfinite(value) or not np.isfinite(weight) or not weight > 0:
                continue
            sums = pooled.setdefault((str(stratum or ""), str(cluster)), [0.0, 0.0])
            sums[0] += float(value) * float(weight)
            sums[1] += float(weight)
        keys = sorted(pooled)
        return cls(strata=tuple(k[0] for k in keys), clusters=tuple(k[1] for k in keys),
                   values=np.array([pooled[k][0] / pooled[k][1] for k in keys], dtype=float),
                   weights=np.array([pooled[k][1] for k in keys], dtype=float))

    def __len__(self) -> int:
        return len(self.clusters)

    def groups(self) -> dict[str, np.ndarray]:
        """Row indices of each stratum, strata sorted."""
        strata = np.array(self.strata, dtype=object)
        return {s: np.flatnonzero(strata == s) for s in sorted(set(self.strata))}

    def select(self, keys: Sequence[tuple[str, str]]) -> "Units":
        """These units' rows for ``keys`` ((stratum, cluster) pairs, each present), in that order."""
        index = {k: i for i, k in enumerate(zip(self.strata, self.clusters))}
        rows = np.array([index[k] for k in keys], dtype=int)
        return Units(strata=tuple(k[0] for k in keys), clusters=tuple(k[1] for k in keys),
                     values=self.values[rows] if len(rows) else np.zeros(0), weights=self.weights[rows]
                     if len(rows) else np.zeros(0))


@dataclass(frozen=True)
class Interval:
    """``value`` (the statistic on the units as they are) and its 95% bootstrap interval; ``low`` / ``high`` are None
    with ``reason`` saying why when there is none. ``clusters``: how many units it rests on."""

    value: float | None
    low: float | None
    high: float | None
    clusters: int
    rounds: int
    reason: str | None = None


@dataclass(frozen=True)
class Paired:
    """A − B on the clusters both have (``shared``): the difference, its 95% paired-bootstrap interval and the
    two-sided p-value of no difference (None with ``reason`` when it cannot be computed)."""

    a: float | None
    b: float | None
    difference: float | None
    low: float | None
    high: float | None
    p: float | None
    shared: int
    rounds: int
    reason: str | None = None


def statistic(units: Units) -> float | None:
    """The number itself: per stratum ``sum(w * v) / sum(w)``, then the mean over strata (None without units)."""
    if not len(units):
        return None
    means = [float(np.dot(units.values[rows], units.weights[rows]) / units.weights[rows].sum())
             for rows in units.groups().values()]
    return float(np.mean(means))


def _too_few(units: Units, *, constant: bool = True) -> str | None:
    """Why ``units`` give no interval (None: they give one): no units, fewer than ``MIN_CLUSTERS`` in a stratum, or
    (``constant``) every cluster of every stratum alike, so that every resample is the same number."""
    groups = units.groups()
    if not groups:
        return "no units"
    smallest = min(len(rows) for rows in groups.values())
    if smallest < MIN_CLUSTERS:
        where = " in a stratum" if len(groups) > 1 else ""
        return f"too few clusters for an interval ({smallest}{where}, fewer than {MIN_CLUSTERS})"
    if constant and all(np.ptp(units.values[rows]) == 0 for rows in groups.values()):
        # every resample gives the same number: a band of zero width would claim a certainty 12 passes of 12 lack
        return ("every cluster scores the same" + (" within each stratum" if len(groups) > 1 else "")
                + f" ({len(units)} clusters): a resample cannot vary, no interval")
    return None


@functools.lru_cache(maxsize=16)
def _counts(seed: int, rounds: int, sizes: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """Per stratum of ``sizes`` clusters, a rounds x clusters matrix: how often each cluster is drawn in each resample
    (size draws with replacement; one bincount over all rounds at once). Every call with the same seed, rounds and
    strata draws the same matrices, so they are drawn once and shared read-only (a board's 91 pairs of one slice)."""
    rng = np.random.default_rng(seed)
    found = []
    for size in sizes:
        drawn = rng.integers(0, size, size=(rounds, size)) + (np.arange(rounds) * size)[:, None]
        counts = np.bincount(drawn.ravel(), minlength=rounds * size).reshape(rounds, size).astype(float)
        counts.setflags(write=False)
        found.append(counts)
    return tuple(found)


def replicates(unit_sets: Sequence[Units], *, rounds: int, seed: int) -> list[np.ndarray]:
    """The statistic of each of ``unit_sets`` (same strata and clusters, in the same order: a paired design) over
    ``rounds`` resamples of the clusters, the same draws for every set: one array of ``rounds`` values per set."""
    groups = unit_sets[0].groups()
    k = len(unit_sets)
    totals = np.zeros((k, rounds))
    for counts, rows in zip(_counts(seed, rounds, tuple(len(r) for r in groups.values())), groups.values()):
        # one product for every set's numerator and denominator: rounds x 2k
        sums = counts @ np.column_stack([*(u.values[rows] * u.weights[rows] for u in unit_sets),
                                         *(u.weights[rows] for u in unit_sets)])
        totals += (sums[:, :k] / sums[:, k:]).T
    return list(totals / len(groups))


def _percentiles(samples: np.ndarray) -> tuple[float, float]:
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(samples, [tail, 100 - tail])
    return float(low), float(high)


def interval(units: Units, *, rounds: int = ROUNDS, seed: int = 0) -> Interval:
    """The statistic of ``units`` and its 95% percentile interval over ``rounds`` cluster resamples."""
    if rounds < 100:
        raise ValueError(f"rounds must be at least 100 for a 95% interval, not {rounds}")
    value = statistic(units)
    reason = _too_few(units)
    if reason is not None:
        return Interval(value=value, low=None, high=None, clusters=len(units), rounds=rounds, reason=reason)
    low, high = _percentiles(replicates([units], rounds=rounds, seed=seed)[0])
    return Interval(value=value, low=low, high=high, clusters=len(units), rounds=rounds)


def paired(a: Units, b: Units, *, rounds: int = ROUNDS, seed: int = 0) -> Paired:
    """A − B on the (stratum, cluster) units both have, with the same resamples for both sides."""
    if rounds < 100:
        raise ValueError(f"rounds must be at least 100 for a 95% interval, not {rounds}")
    if a.strata == b.strata and a.clusters == b.clusters:  # the usual case: both scored on the same units
        shared = list(zip(a.strata, a.clusters))
    else:
        shared = sorted(set(zip(a.strata, a.clusters)) & set(zip(b.strata, b.clusters)))
        a, b = a.select(shared), b.select(shared)
    va, vb = statistic(a), statistic(b)
    if va is None or vb is None:
        return Paired(a=va, b=vb, difference=None, low=None, high=None, p=None, shared=0, rounds=rounds,
                      reason="no items both were scored on")
    difference = va - vb
    reason = _too_few(a, constant=False)
    if reason is not None:
        return Paired(a=va, b=vb, difference=difference, low=None, high=None, p=None, shared=len(shared),
                      rounds=rounds, reason=reason.replace("clusters", "shared items", 1))
    if np.array_equal(a.weights, b.weights) and _too_few(Units(a.strata, a.clusters, a.values - b.values,
                                                                a.weights)) is not None:
        # every shared unit differs by the same amount: no resample varies, a zero-width band would be no evidence;
        # no difference at all is no difference whatever the spread
        return Paired(a=va, b=vb, difference=difference, low=None, high=None,
                      p=1.0 if abs(difference) < 1e-12 else None, shared=len(shared), rounds=rounds,
                      reason="every shared item differs by the same amount: a resample cannot vary, no interval")
    ra, rb = replicates([a, b], rounds=rounds, seed=seed)
    return _tested(va, vb, difference, ra - rb, shared=len(shared), rounds=rounds)


def independent(a: Units, b: Units, *, rounds: int = ROUNDS, seed: int = 0) -> Paired:
    """A − B when the two never share a unit (TofuKingdom: two models in one camp never play the same game): each side
    resampled on its own, the difference's interval and the two-sided p as ``paired``'s; ``shared`` is 0."""
    if rounds < 100:
        raise ValueError(f"rounds must be at least 100 for a 95% interval, not {rounds}")
    va, vb = statistic(a), statistic(b)
    if va is None or vb is None:
        return Paired(a=va, b=vb, difference=None, low=None, high=None, p=None, shared=0, rounds=rounds,
                      reason="one side has no units")
    difference = va - vb
    reason = _too_few(a, constant=False) or _too_few(b, constant=False)
    if reason is None and _too_few(a) is not None and _too_few(b) is not None:
        reason = "both sides score the same on every unit: a resample cannot vary, no interval"
    if reason is not None:
        return Paired(a=va, b=vb, difference=difference, low=None, high=None,
                      p=1.0 if abs(difference) < 1e-12 else None, shared=0, rounds=rounds, reason=reason)
    samples = replicates([a], rounds=rounds, seed=seed)[0] - replicates([b], rounds=rounds, seed=seed + 1)[0]
    return _tested(va, vb, difference, samples, shared=0, rounds=rounds)


def _tested(va: float, vb: float, difference: float, samples: np.ndarray, *, shared: int, rounds: int) -> Paired:
    low, high = _percentiles(samples)
    if abs(difference) < 1e-12:
        p = 1.0
    else:  # how often a resample lands as far from the observed difference as the observed is from zero
        extreme = int(np.count_nonzero(np.abs(samples - difference) >= abs(difference) - 1e-12))
        p = min(1.0, (extreme + 1) / (rounds + 1))
    return Paired(a=va, b=vb, difference=difference, low=low, high=high, p=p, shared=shared, rounds=rounds)


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment of ``p_values`` (None stays None and is not counted in the family)."""
    present = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    adjusted: list[float | None] = [None] * len(p_values)
    running, m = 0.0, len(present)
    for rank, (p, i) in enumerate(present):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted


def verdict(paired_result: Paired, p_adjusted: float | None, *, a: str, b: str, alpha: float = ALPHA) -> str:
    """"<a> ahead" / "<b> ahead" when the adjusted p is under ``alpha`` (and the interval excludes 0), "within noise"
    otherwise, or "cannot tell (<reason>)" without a test."""
    if p_adjusted is None or paired_result.difference is None:
        return f"cannot tell ({paired_result.reason or 'no test'})"
    excludes_zero = paired_result.low is not None and (paired_result.low > 0 or paired_result.high < 0)
    if p_adjusted < alpha and excludes_zero:
        return f"{a} ahead" if paired_result.difference > 0 else f"{b} ahead"
    return "within noise"


def rank_ranges(intervals: dict[str, Interval], *, higher_is_better: bool = True) -> dict[str, tuple[int, int]]:
    """Each model's rank range given the intervals (Chatbot Arena's rule): best rank 1 + the models whose interval
    lies wholly above its own, worst rank the models count minus those wholly below. A model without an interval
    ranks anywhere from 1 to the count."""
    names = list(intervals)
    ranges = {}
    for name in names:
        mine = intervals[name]
        if mine.low is None:
            ranges[name] = (1, len(names))
            continue
        above = below = 0
        for other in names:
            theirs = intervals[other]
            if other == name or theirs.low is None:
                continue
            better = theirs.low > mine.high if higher_is_better else theirs.high < mine.low
            worse = theirs.high < mine.low if higher_is_better else theirs.low > mine.high
            above += better
            below += worse
        ranges[name] = (1 + above, len(names) - below)
    return ranges
