"""Night over night without narrating noise: each run keeps the units of its numbers (``metric_units``) and tests each
series against its previous value on the units both nights share (``metric_changes``), so the ``changes`` view calls a
movement only when the paired difference's 95% interval excludes zero.

A cached cell is the same verdict both nights, so a rerun moves nothing; what moves a series is recomputed cells (a
model, judge or prompt change, a cell that failed last night) and cells one night has and the other not. The paired
test looks at the first only: the units both nights have, resampled together (``stats.bootstrap.paired``), tonight
minus the previous night."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import duckdb

from dialogbench.stats.bootstrap import ROUNDS, Units, paired
from dialogbench.stats.units import read_units

if TYPE_CHECKING:
    from dialogbench.run.family_spec import Family

Series = tuple[str, str, str, str, str]  # family, leaderboard, metric, model, slice


def slice_text(keys: Sequence[str], key_values: Sequence[str]) -> str:
    """The snapshot's ``slice``: "judge=j, n=8" ('' when the metric has no keys)."""
    return ", ".join(f"{k}={v}" for k, v in zip(keys, key_values))


def tonight_units(con: duckdb.DuckDBPyConnection, families: Sequence["Family"]) -> dict[Series, Units]:
    """The units of every series of ``families``' metrics with a units view, as ``con``'s board reads now."""
    found = {}
    for family in families:
        for metric in family.metrics:
            for (model, key_values), units in read_units(con, metric).items():
                found[(family.name, metric.view, metric.name, model, slice_text(metric.keys, key_values))] = units
    return found


def unit_rows(units: dict[Series, Units], *, run_id: str, board: str | None) -> list[dict]:
    """``metric_units`` rows: one per (series, stratum, cluster)."""
    rows = []
    for (family, leaderboard, metric, model, slice_), found in units.items():
        for stratum, cluster, value, weight in zip(found.strata, found.clusters, found.values, found.weights):
            rows.append({"run_id": run_id, "board": board, "family": family, "leaderboard": leaderboard,
                         "metric": metric, "model": model, "slice": slice_, "stratum": stratum, "cluster": cluster,
                         "value": float(value), "weight": float(weight)})
    return rows


def previous_units(con: duckdb.DuckDBPyConnection, *, board: str | None, run_id: str) -> dict[Series, tuple[str, Units]]:
    """Each series' latest earlier run on ``board`` that recorded it (as ``changes`` picks it) and that run's units,
    when that run kept them (runs before ``metric_units`` did not)."""
    try:
        found = con.execute(
            """
            with earlier as (  -- the run board_runs puts next before this one, the order changes uses
                select h.family, h.leaderboard, h.metric, h.model, h.slice,
                       arg_min(h.run_id, r.recency) as previous_run_id
                from metric_history h
                join board_runs r using (run_id)
                where h.board is not distinct from ? and h.run_id <> ?
                group by h.family, h.leaderboard, h.metric, h.model, h.slice
            )
            select u.family, u.leaderboard, u.metric, u.model, u.slice, u.run_id, u.stratum, u.cluster, u.value,
                   u.weight
            from metric_units u
            join earlier e
              on u.run_id = e.previous_run_id and u.family = e.family and u.leaderboard = e.leaderboard
             and u.metric = e.metric and u.model = e.model and u.slice = e.slice
            """, [board, run_id]).fetchall()
    except duckdb.CatalogException:
        return {}
    rows: dict[Series, tuple[str, list]] = {}
    for family, leaderboard, metric, model, slice_, previous, stratum, cluster, value, weight in found:
        rows.setdefault((family, leaderboard, metric, model, slice_), (previous, []))[1].append(
            (stratum, cluster, value, weight))
    return {series: (previous, Units.of(found)) for series, (previous, found) in rows.items()}


def change_rows(tonight: dict[Series, Units], before: dict[Series, tuple[str, Units]], *, run_id: str,
                rounds: int = ROUNDS, seed: int = 0) -> list[dict]:
    """``metric_changes`` rows: tonight − the previous night on the units both have, per series both nights have."""
    rows = []
    for series, units in tonight.items():
        if series not in before:
            continue
        previous_run_id, earlier = before[series]
        result = paired(units, earlier, rounds=rounds, seed=seed)
        family, leaderboard, metric, model, slice_ = series
        rows.append({"run_id": run_id, "family": family, "leaderboard": leaderboard, "metric": metric,
                     "model": model, "slice": slice_, "previous_run_id": previous_run_id, "shared": result.shared,
                     "shared_value": result.a, "shared_previous": result.b, "shared_delta": result.difference,
                     "ci_low": result.low, "ci_high": result.high, "p": result.p, "note": result.reason})
    return rows
