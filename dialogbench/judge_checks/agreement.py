"""Agreement between two judges of one protocol (or a judge and imported human labels: labels.py), on the items both
answered (the ``judge_pairs`` view: one row per protocol, item and pair of judges, judge_a < judge_b).

* ``kappa``: Cohen's kappa of the pair's answers (``category``: UniEval's Yes / No; Arena's outcome of the
  alphabetically first model and GTEval's of the model, win / lose / tie, so both orders pool; MT-Bench-101's rating,
  quadratic-weighted: ``1 - mean((a - b)^2) / (E[a^2] + E[b^2] - 2 E[a] E[b])``, the margins taken independent),
  on the items both parsed, with the observed agreement (the share answered alike) and a 95% interval.
* ``ranking_agreement``: Spearman's rho between the two judges' model scores (UniEval pass rate at the judged
  length: no AI found; GTEval win-or-tie rate; Arena mean score, a win 1, a tie 1/2; MT-Bench-101 mean rating), on
  the same items, with a 95% interval; at least ``MIN_MODELS`` models, else None and the reason.
* ``disagreements``: the items the two answered differently, with the explorer's address of their records.

The intervals are percentile bootstrap intervals of the project's one cluster bootstrap
(``dialogbench.stats.bootstrap.replicates``, ``ROUNDS`` resamples, seed ``SEED``): the items' clusters (the seed of a
BotChat item, so both orders and every model of a seed move together; the dialogue of an MT-Bench-101 turn) are
resampled whole, and each resample's kappa (rho) is computed from its resampled shares; fewer than ``MIN_CLUSTERS``
clusters give no interval (the reason says so). No asymptotic standard error is used."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import duckdb
import numpy as np

from dialogbench.explorer.hrefs import explorer_href
from dialogbench.stats.bootstrap import LEVEL, MIN_CLUSTERS, ROUNDS, Units, replicates

SEED = 0
MIN_MODELS = 3
RATED = frozenset({"mtbench101_judge"})  # answers are ratings: weighted kappa on the score
# the explorer's protocol of each judge protocol (the records dialogbench/<family>/explorer.py gives the page)
EXPLORER_PROTOCOLS = {"botchat_unieval": "botchat_unieval", "botchat_arena": "botchat_arena",
                      "botchat_gteval": "botchat_gteval", "mtbench101_judge": "mtbench101"}
PAIRS_SQL = "select * from judge_pairs"

Pair = Mapping[str, object]  # a judge_pairs row


@dataclass(frozen=True)
class Kappa:
    """Cohen's kappa of ``judge_a`` and ``judge_b`` on ``protocol``: ``kappa`` (None when undefined: both gave every
    item the same answer), its 95% interval ``low`` / ``high`` (None with ``reason``), ``n`` items both parsed (of
    ``items`` both answered; the rest are left out), ``observed`` the share of the ``n`` answered alike, ``weighted``
    (quadratic weights on ratings), ``clusters`` resampled."""

    protocol: str
    judge_a: str
    judge_b: str
    kappa: float | None
    low: float | None
    high: float | None
    n: int
    items: int
    observed: float | None
    weighted: bool
    clusters: int
    reason: str | None = None


@dataclass(frozen=True)
class Ranking:
    """Spearman's rho of the two judges' model scores on ``protocol`` (``scores_a`` / ``scores_b``: model -> score on
    the ``items`` both parsed), its 95% interval; ``rho`` None with ``reason`` (fewer than ``MIN_MODELS`` models, a
    judge that scores every model alike, a protocol without a model score)."""

    protocol: str
    judge_a: str
    judge_b: str
    rho: float | None
    low: float | None
    high: float | None
    models: int
    items: int
    clusters: int
    scores_a: dict[str, float] = field(default_factory=dict)
    scores_b: dict[str, float] = field(default_factory=dict)
    reason: str | None = None


@dataclass(frozen=True)
class Disagreement:
    """An item ``judge_a`` and ``judge_b`` answered differently: their answers as given and compared (a win / lose /
    tie is ``side``'s: the model, or an Arena pair's alphabetically first model), ``distance``
    (ratings: how far apart; else None), their cells, and ``href``: the explorer showing the item's records."""

    protocol: str
    item: str
    judge_a: str
    judge_b: str
    answer_a: str | None
    answer_b: str | None
    category_a: str | None
    category_b: str | None
    side: str | None
    distance: float | None
    cell_key_a: str | None
    cell_key_b: str | None
    href: str | None


def read_pairs(*, con: duckdb.DuckDBPyConnection, lake=None) -> list[dict]:
    """The judge_pairs rows of ``con``'s board, and with ``lake`` those of its stored human labels
    (``labels.human_pairs``)."""
    relation = con.execute(PAIRS_SQL)
    columns = [d[0] for d in relation.description]
    rows = [dict(zip(columns, values)) for values in relation.fetchall()]
    if lake is not None:
        from dialogbench.judge_checks.labels import human_pairs

        rows += human_pairs(con=con, lake=lake)
    return rows


def groups(pairs: Iterable[Pair]) -> dict[tuple[str, str, str], list[Pair]]:
    """``pairs`` by (protocol, judge_a, judge_b), sorted."""
    found: dict[tuple[str, str, str], list[Pair]] = {}
    for row in pairs:
        found.setdefault((row["protocol"], row["judge_a"], row["judge_b"]), []).append(row)
    return dict(sorted(found.items()))


def _units(clusters: Sequence[str], index: dict[str, int], rows: Sequence[Pair], values: np.ndarray) -> Units:
    """One value per row pooled per cluster (mean value, weight the rows), on the shared ``clusters`` (a cluster
    without rows: weight 0)."""
    sums, counts = np.zeros(len(clusters)), np.zeros(len(clusters))
    at = np.array([index[str(r["cluster"])] for r in rows], dtype=int)
    np.add.at(sums, at, values)
    np.add.at(counts, at, 1.0)
    means = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
    return Units(strata=("",) * len(clusters), clusters=tuple(clusters), values=means, weights=counts)


def _interval(samples: np.ndarray) -> tuple[float | None, float | None, str | None]:
    samples = samples[np.isfinite(samples)]
    if len(samples) < 100:
        return None, None, "too few resamples where it is defined for an interval"
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(samples, [tail, 100 - tail])
    return float(low), float(high), None


def _kappa_of(shares: list[np.ndarray], *, weighted: bool, categories: int) -> np.ndarray:
    """kappa from the shares ``_kappa_units`` lists (each an array: the value, or one per resample)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if weighted:
            disagreement, mean_a, mean_b, square_a, square_b = shares
            expected = square_a + square_b - 2 * mean_a * mean_b
            return np.where(expected > 1e-12, 1 - disagreement / expected, np.nan)
        observed, margins_a, margins_b = shares[0], shares[1:1 + categories], shares[1 + categories:]
        expected = sum(a * b for a, b in zip(margins_a, margins_b))
        return np.where(expected < 1 - 1e-12, (observed - expected) / (1 - expected), np.nan)


def _kappa_values(rows: Sequence[Pair], *, weighted: bool) -> tuple[list[np.ndarray], int]:
    """Per row, the values whose means give kappa: weighted, (a - b)^2, a, b, a^2, b^2 of the scores; else the
    agreement and each category's indicator for a, then for b. Returns them and the categories' count."""
    if weighted:
        a = np.array([float(r["score_a"]) for r in rows])
        b = np.array([float(r["score_b"]) for r in rows])
        return [(a - b) ** 2, a, b, a * a, b * b], 0
    a = [r["category_a"] for r in rows]
    b = [r["category_b"] for r in rows]
    categories = sorted(set(a) | set(b))
    agree = np.array([x == y for x, y in zip(a, b)], dtype=float)
    return ([agree, *(np.array([x == c for x in a], dtype=float) for c in categories),
             *(np.array([y == c for y in b], dtype=float) for c in categories)], len(categories))


def _is_rated(protocol: str, rows: Sequence[Pair]) -> bool:
    return protocol in RATED and all(r["score_a"] is not None and r["score_b"] is not None for r in rows)


def kappa(*, pairs: Iterable[Pair], rounds: int = ROUNDS, seed: int = SEED) -> list[Kappa]:
    """Cohen's kappa per (protocol, judge_a, judge_b) of ``pairs`` (judge_pairs rows, ``read_pairs``), on the items
    both judges parsed; quadratic-weighted on ratings (``RATED``). The interval: the module's docstring."""
    found = []
    for (protocol, judge_a, judge_b), rows in groups(pairs).items():
        both = [r for r in rows if r["category_a"] is not None and r["category_b"] is not None]
        weighted = protocol in RATED
        base = dict(protocol=protocol, judge_a=judge_a, judge_b=judge_b, items=len(rows), n=len(both),
                    weighted=weighted)
        if not both:
            found.append(Kappa(**base, kappa=None, low=None, high=None, observed=None, clusters=0,
                               reason="no item both parsed"))
            continue
        weighted = _is_rated(protocol, both)
        base["weighted"] = weighted
        observed = float(np.mean([r["category_a"] == r["category_b"] for r in both]))
        values, categories = _kappa_values(both, weighted=weighted)
        value = _kappa_of([np.array(v.mean()) for v in values], weighted=weighted, categories=categories)
        point = float(value) if np.isfinite(value) else None
        clusters = sorted({str(r["cluster"]) for r in both})
        reason = None if point is not None else "both judges gave every item the same answer: kappa is undefined"
        low = high = None
        if point is not None and len(clusters) < MIN_CLUSTERS:
            reason = f"too few clusters for an interval ({len(clusters)}, fewer than {MIN_CLUSTERS})"
        elif point is not None:
            index = {c: i for i, c in enumerate(clusters)}
            units = [_units(clusters, index, both, v) for v in values]
            shares = replicates(units, rounds=rounds, seed=seed)
            low, high, reason = _interval(_kappa_of(shares, weighted=weighted, categories=categories))
        found.append(Kappa(**base, kappa=point, low=low, high=high, observed=observed, clusters=len(clusters),
                           reason=reason))
    return found


def item_scores(protocol: str, row: Pair, *, side: str) -> dict[str, float] | None:
    """The model score(s) one judge's answer of an item gives (``side``: 'a' or 'b'): model -> value; None for a
    protocol without a model score."""
    category, score = row[f"category_{side}"], row[f"score_{side}"]
    if protocol == "botchat_unieval":
        return {row["side"]: 1.0 if category == "No" else 0.0}
    if protocol == "botchat_gteval":
        return {row["side"]: 1.0 if category in ("win", "tie") else 0.0}
    if protocol == "botchat_arena":
        won = {"win": 1.0, "tie": 0.5, "lose": 0.0}[category]
        return {row["side"]: won, row["other"]: 1.0 - won}
    if score is not None:
        return {row["side"]: float(score)}
    return None


def ranks(values: np.ndarray) -> np.ndarray:
    """Average ranks (ties share their mean rank) along the last axis."""
    order = np.argsort(values, axis=-1, kind="stable")
    sorted_values = np.take_along_axis(values, order, axis=-1)
    out = np.empty_like(values, dtype=float)
    for index in np.ndindex(values.shape[:-1]):
        row, at = sorted_values[index], order[index]
        position = np.arange(1, len(row) + 1, dtype=float)
        start = 0
        while start < len(row):
            end = start
            while end + 1 < len(row) and row[end + 1] == row[start]:
                end += 1
            position[start:end + 1] = (start + end + 2) / 2
            start = end + 1
        out[index + (at,)] = position
    return out


def spearman(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Spearman's rho of ``a`` and ``b`` along the last axis (NaN where either is constant or holds a NaN)."""
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    bad = ~(np.isfinite(a).all(axis=-1) & np.isfinite(b).all(axis=-1))
    a, b = np.where(np.isfinite(a), a, 0.0), np.where(np.isfinite(b), b, 0.0)
    ra, rb = ranks(a), ranks(b)
    ra, rb = ra - ra.mean(axis=-1, keepdims=True), rb - rb.mean(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = (ra * rb).sum(axis=-1) / np.sqrt((ra * ra).sum(axis=-1) * (rb * rb).sum(axis=-1))
    return np.where(bad, np.nan, rho)


def ranking_agreement(*, pairs: Iterable[Pair], rounds: int = ROUNDS, seed: int = SEED) -> list[Ranking]:
    """Spearman's rho of judge_a's and judge_b's model scores per (protocol, judge_a, judge_b) of ``pairs``, each
    judge's score of a model taken on the items both parsed (the module's docstring); the interval resamples the
    items' clusters, the same draws for both judges."""
    found = []
    for (protocol, judge_a, judge_b), rows in groups(pairs).items():
        both = [r for r in rows if r["category_a"] is not None and r["category_b"] is not None]
        base = dict(protocol=protocol, judge_a=judge_a, judge_b=judge_b, items=len(both))
        per_row = [((item_scores(protocol, r, side="a"), item_scores(protocol, r, side="b")), r) for r in both]
        if any(a is None or b is None for (a, b), _ in per_row):
            found.append(Ranking(**base, rho=None, low=None, high=None, models=0, clusters=0,
                                 reason=f"no model score for {protocol}"))
            continue
        models = sorted({m for (a, _), _ in per_row for m in a})
        clusters = sorted({str(r["cluster"]) for r in both})
        index = {c: i for i, c in enumerate(clusters)}
        units = []  # per judge, per model: that model's values on its items, pooled per cluster
        for side in (0, 1):
            for model in models:
                mine = [(scores[side][model], r) for scores, r in per_row if model in scores[side]]
                units.append(_units(clusters, index, [r for _, r in mine], np.array([v for v, _ in mine])))
        scores_a = {m: float(u.values @ u.weights / u.weights.sum()) for m, u in zip(models, units[:len(models)])}
        scores_b = {m: float(u.values @ u.weights / u.weights.sum()) for m, u in zip(models, units[len(models):])}
        base.update(models=len(models), clusters=len(clusters), scores_a=scores_a, scores_b=scores_b)
        if len(models) < MIN_MODELS:
            found.append(Ranking(**base, rho=None, low=None, high=None,
                                 reason=f"{len(models)} model{'s' if len(models) != 1 else ''}: a rank correlation "
                                        f"needs at least {MIN_MODELS}"))
            continue
        rho = spearman(np.array([scores_a[m] for m in models]), np.array([scores_b[m] for m in models]))[0]
        if not np.isfinite(rho):
            found.append(Ranking(**base, rho=None, low=None, high=None,
                                 reason="a judge scores every model alike: rho is undefined"))
            continue
        low = high = None
        if len(clusters) < MIN_CLUSTERS:
            reason = f"too few clusters for an interval ({len(clusters)}, fewer than {MIN_CLUSTERS})"
        else:
            with np.errstate(divide="ignore", invalid="ignore"):  # a model absent from a resample: NaN, left out
                samples = replicates(units, rounds=rounds, seed=seed)
            matrix = np.array(samples)  # (2 * models) x rounds
            low, high, reason = _interval(spearman(matrix[:len(models)].T, matrix[len(models):].T))
        found.append(Ranking(**base, rho=float(rho), low=low, high=high, reason=reason))
    return found


def href(row: Pair) -> str | None:
    """The explorer's records of the item (both judges' verdicts, every order for a BotChat pair): its dialogue(s)'
    keys (BotChat) or its turn and model (MT-Bench-101); None for a protocol the explorer does not show."""
    protocol = EXPLORER_PROTOCOLS.get(str(row["protocol"]))
    if protocol is None:
        return None
    if protocol == "mtbench101":
        return explorer_href(protocol=protocol, models=[str(row["side"])], keys=[str(row["item_id"])])
    keys = [k for k in str(row["output_key"] or "").split("+") if k]
    n = row["n"] if protocol == "botchat_arena" else None
    return explorer_href(protocol=protocol, keys=keys, n=n)


def disagreements(*, pairs: Iterable[Pair], unparsed: bool = False) -> list[Disagreement]:
    """The items of ``pairs`` the two judges answered differently (both parsed, categories apart; with ``unparsed``
    also those exactly one of them parsed), per (protocol, judge_a, judge_b), the farthest apart first (ratings),
    then by item."""
    found = []
    for (protocol, judge_a, judge_b), rows in groups(pairs).items():
        mine = []
        for r in rows:
            a, b = r["category_a"], r["category_b"]
            if (a is not None and b is not None and a != b) or (unparsed and (a is None) != (b is None)):
                distance = (abs(float(r["score_a"]) - float(r["score_b"]))
                            if r["score_a"] is not None and r["score_b"] is not None else None)
                mine.append(Disagreement(protocol=protocol, item=str(r["item"]), judge_a=judge_a, judge_b=judge_b,
                                         answer_a=r["answer_a"], answer_b=r["answer_b"], category_a=a, category_b=b,
                                         side=r["side"], distance=distance, cell_key_a=r["cell_key_a"], cell_key_b=r["cell_key_b"],
                                         href=href(r)))
        found += sorted(mine, key=lambda d: (-(d.distance or 0.0), d.item))
    return found
