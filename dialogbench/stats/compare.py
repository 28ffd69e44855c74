"""Who is really ahead: every pair of models on every headline number of a board, on the items both have.

For each metric a family declares with a units view (``Metric.units``) and each of its slices (judge, N, task,
setting, opponent…), every pair of models in the slice is compared by ``bootstrap.paired`` (``bootstrap.independent``
for a metric whose models share no unit, ``Metric.paired``); the p-values of one
(metric, slice) are Holm-adjusted together, and the verdict reads the adjusted p and the interval. A value whose
judge failed its judge checks is compared all the same but its verdict says "not measured": the report refuses that
number, and so does the comparison."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import duckdb

from dialogbench.stats.bootstrap import (ROUNDS, Interval, Paired, holm, independent, interval, paired, rank_ranges,
                                         verdict)
from dialogbench.stats.units import read_units

if TYPE_CHECKING:
    from dialogbench.run.family_spec import Family
    from dialogbench.history import Metric


@dataclass(frozen=True)
class Comparison:
    family: str
    leaderboard: str
    metric: str
    slice: str
    a: str
    b: str
    result: Paired
    p_holm: float | None
    verdict: str
    higher_is_better: bool = True

    def row(self) -> dict:
        r = self.result
        return {"family": self.family, "leaderboard": self.leaderboard, "metric": self.metric, "slice": self.slice,
                "model_a": self.a, "model_b": self.b, "value_a": r.a, "value_b": r.b, "difference": r.difference,
                "ci_low": r.low, "ci_high": r.high, "p": r.p, "p_holm": self.p_holm, "shared": r.shared,
                "rounds": r.rounds, "verdict": self.verdict, "higher_is_better": self.higher_is_better}


@dataclass(frozen=True)
class Standing:
    """One model's number in one (metric, slice) with its interval and rank range."""

    family: str
    leaderboard: str
    metric: str
    slice: str
    model: str
    interval: Interval
    rank: int
    rank_low: int
    rank_high: int

    def row(self) -> dict:
        i = self.interval
        return {"family": self.family, "leaderboard": self.leaderboard, "metric": self.metric, "slice": self.slice,
                "model": self.model, "value": i.value, "ci_low": i.low, "ci_high": i.high, "clusters": i.clusters,
                "rank": self.rank, "rank_low": self.rank_low, "rank_high": self.rank_high, "note": i.reason}


def _slice(metric: "Metric", key_values: tuple[str, ...]) -> str:
    return ", ".join(f"{k}={v}" for k, v in zip(metric.keys, key_values))


def _judge(metric: "Metric", key_values: tuple[str, ...]) -> str | None:
    return dict(zip(metric.keys, key_values)).get("judge")


def _ahead(result: Paired, p_adjusted: float | None, *, a: str, b: str, higher_is_better: bool) -> str:
    said = verdict(result, p_adjusted, a=a, b=b)
    if higher_is_better or not said.endswith(" ahead"):
        return said
    return f"{b} ahead" if said == f"{a} ahead" else f"{a} ahead"  # a lower value is the better one


def compare(con: duckdb.DuckDBPyConnection, families: Sequence["Family"], *, models: Sequence[str] | None = None,
            unmeasured: dict | None = None, rounds: int = ROUNDS, seed: int = 0) -> list[Comparison]:
    """Every pair of ``models`` (default: every model of each slice) on every metric with units of ``families``, as
    ``con``'s board reads now. ``unmeasured``: (judge, protocol) -> the finding that makes its values not measured."""
    unmeasured = unmeasured or {}
    out: list[Comparison] = []
    for family in families:
        for metric in family.metrics:
            by_slice: dict[tuple[str, ...], dict] = {}
            for (model, key_values), units in read_units(con, metric).items():
                by_slice.setdefault(key_values, {})[model] = units
            for key_values in sorted(by_slice):
                present = by_slice[key_values]
                names = [m for m in models if m in present] if models else sorted(present)
                pairs = list(itertools.combinations(names, 2))
                test = paired if metric.paired else independent
                results = [test(present[a], present[b], rounds=rounds, seed=seed) for a, b in pairs]
                adjusted = holm([r.p for r in results])
                finding = unmeasured.get((_judge(metric, key_values), metric.protocol)) if metric.protocol else None
                for (a, b), result, p_adjusted in zip(pairs, results, adjusted):
                    said = (f"not measured ({finding.why})" if finding is not None else
                            _ahead(result, p_adjusted, a=a, b=b, higher_is_better=metric.higher_is_better))
                    out.append(Comparison(family=family.name, leaderboard=metric.view, metric=metric.name,
                                          slice=_slice(metric, key_values), a=a, b=b, result=result,
                                          p_holm=p_adjusted, verdict=said, higher_is_better=metric.higher_is_better))
    return out


def models_on(con: duckdb.DuckDBPyConnection, families: Sequence["Family"]) -> set[str]:
    """The models with units on any metric of ``families`` (what ``compare`` can compare)."""
    return {model for family in families for metric in family.metrics
            for model, _ in read_units(con, metric)}


def standings(con: duckdb.DuckDBPyConnection, families: Sequence["Family"], *, rounds: int = ROUNDS,
              seed: int = 0) -> list[Standing]:
    """Every model's number, interval and rank range on every metric with units of ``families`` (the rank range: the
    ranks its interval allows, Chatbot Arena's rule, ``bootstrap.rank_ranges``)."""
    out: list[Standing] = []
    for family in families:
        for metric in family.metrics:
            by_slice: dict[tuple[str, ...], dict[str, Interval]] = {}
            for (model, key_values), units in read_units(con, metric).items():
                by_slice.setdefault(key_values, {})[model] = interval(units, rounds=rounds, seed=seed)
            for key_values in sorted(by_slice):
                found = by_slice[key_values]
                ranges = rank_ranges(found, higher_is_better=metric.higher_is_better)
                sign = -1 if metric.higher_is_better else 1
                order = sorted(found, key=lambda m: (found[m].value is None, sign * (found[m].value or 0), m))
                for model in order:  # a tie shares the better rank: 1 + the models with a strictly better value
                    value = found[model].value
                    rank = 1 + sum(1 for other in order if value is not None and found[other].value is not None
                                   and sign * found[other].value < sign * value)
                    out.append(Standing(family=family.name, leaderboard=metric.view, metric=metric.name,
                                        slice=_slice(metric, key_values), model=model, interval=found[model],
                                        rank=rank, rank_low=ranges[model][0], rank_high=ranges[model][1]))
    return out
