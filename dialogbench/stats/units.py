"""Reading the units a family's headline number rests on (its ``<family>_units`` view) and the number's interval."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import duckdb

from dialogbench.stats.bootstrap import ROUNDS, Interval, Units, interval, statistic

if TYPE_CHECKING:
    from dialogbench.history import Metric

AGREE = 5.0001e-5  # how far the units' statistic may lie from the view's value (views round rates to 4 places)

Key = tuple[str, tuple[str, ...]]  # (model, the metric's key values as text)


def read_units(con: duckdb.DuckDBPyConnection, metric: "Metric") -> dict[Key, Units]:
    """The units of ``metric`` per (model, key values) from its units view (none when the view is not defined)."""
    if metric.units is None:
        return {}
    try:
        found = con.execute(f'SELECT model, key_values, stratum, cluster, value, weight FROM "{metric.units}" '
                            "WHERE leaderboard = ? AND metric = ?", [metric.view, metric.name]).fetchall()
    except duckdb.CatalogException:
        return {}
    rows: dict[Key, list] = defaultdict(list)
    for model, key_values, stratum, cluster, value, weight in found:
        rows[(str(model), tuple(str(k) for k in key_values))].append((stratum, cluster, value, weight))
    return {key: Units.of(found) for key, found in rows.items()}


def checked_interval(units: Units | None, value: float | None, *, rounds: int = ROUNDS, seed: int = 0) -> Interval:
    """The interval of a view's ``value`` from its ``units``: none (and why) when the value is null, there are no
    units, or the units' statistic is not the value (a units view out of step with its leaderboard: an interval of
    another number would be worse than none)."""
    if value is None:
        return Interval(value=None, low=None, high=None, clusters=0, rounds=rounds, reason="no value")
    if units is None or not len(units):
        return Interval(value=value, low=None, high=None, clusters=0, rounds=rounds, reason="no units")
    own = statistic(units)
    if own is None or abs(own - value) > AGREE * max(1.0, abs(value)):
        return Interval(value=value, low=None, high=None, clusters=len(units), rounds=rounds,
                        reason=f"its units give {own!r}, not the view's {value!r}")
    return interval(units, rounds=rounds, seed=seed)
