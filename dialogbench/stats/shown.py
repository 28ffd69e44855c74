"""The interval and rank range of a number a leaderboard shows, as the board's latest run recorded them (the
``headline`` view: each headline number's cluster-bootstrap 95% interval, its rank and the ranks its interval allows).

One reader for the report, the CLI's leaderboards and the Prefect artifacts: a leaderboard row looks its number up by
(leaderboard view, metric, model, slice) and shows the interval only when the recorded value is the number it shows
(a leaderboard read after a later run, or before the snapshot, shows no stale interval)."""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb

SQL = ("select leaderboard, metric, model, slice, raw_value, raw_ci_low, raw_ci_high, rank, rank_low, rank_high "
       "from headline")
SAME = 1e-6  # a recorded value within this of the shown one is the shown one


def slice_text(**keys: object) -> str:
    """The slice of a number, as ``metric_snapshots.slice`` writes it: its key columns in the metric's order."""
    return ", ".join(f"{k}={v}" for k, v in keys.items())


@dataclass(frozen=True)
class Shown:
    """The headline rows of a board's latest run, by (leaderboard, metric, model, slice)."""
    rows: dict[tuple[str, str, str, str], dict] = field(default_factory=dict)

    @classmethod
    def from_rows(cls, rows: list[dict] | None) -> "Shown":
        return cls({(r["leaderboard"], r["metric"], r["model"], r["slice"] or ""): r for r in rows or []})

    def of(self, leaderboard: str, metric: str, model: str, slice: str, value: float | None) -> dict | None:
        """The recorded row of the number shown (``value``), or None when none was recorded or it records another
        value."""
        found = self.rows.get((leaderboard, metric, model, slice))
        if found is None or value is None or found["raw_value"] is None or abs(found["raw_value"] - value) > SAME:
            return None
        return found

    def interval(self, leaderboard: str, metric: str, model: str, slice: str,
                 value: float | None) -> tuple[float, float] | None:
        found = self.of(leaderboard, metric, model, slice, value)
        if found is None or found["raw_ci_low"] is None:
            return None
        return found["raw_ci_low"], found["raw_ci_high"]

    def interval_text(self, leaderboard: str, metric: str, model: str, slice: str, value: float | None, *,
                      digits: int = 2, scale: float = 1.0) -> str:
        """"[low, high]" (times ``scale``), or '' when the number shown has no recorded interval."""
        found = self.interval(leaderboard, metric, model, slice, value)
        return "" if found is None else f"[{found[0] * scale:.{digits}f}, {found[1] * scale:.{digits}f}]"

    def rank_range(self, leaderboard: str, metric: str, model: str, slice: str,
                   value: float | None) -> tuple[int, int] | None:
        found = self.of(leaderboard, metric, model, slice, value)
        if found is None or found.get("rank_low") is None:
            return None
        return found["rank_low"], found["rank_high"]

    def rank_text(self, leaderboard: str, metric: str, model: str, slice: str, value: float | None) -> str:
        """"2-4" (the ranks the number's interval allows), "1" when it allows one, '' when none was recorded."""
        found = self.rank_range(leaderboard, metric, model, slice, value)
        return "" if found is None else range_text(*found)


def range_text(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}-{high}"


def read_shown(con: duckdb.DuckDBPyConnection, leaderboards: tuple[str, ...] | None = None) -> Shown:
    """The board's latest run's headline rows (``con``: the catalog on that board); none on a lake whose catalog has
    no ``headline`` view or no run recorded."""
    sql = SQL + (" where list_contains(?, leaderboard)" if leaderboards else "")
    try:
        relation = con.execute(sql, [list(leaderboards)] if leaderboards else [])
    except duckdb.CatalogException:
        return Shown()
    columns = [d[0] for d in relation.description]
    return Shown.from_rows([dict(zip(columns, r)) for r in relation.fetchall()])


def with_intervals(row: dict, shown: Shown, *, leaderboard: str, metric: str, model: str, slice: str,
                   column: str) -> dict:
    """``row`` with ``<column>_ci_low``, ``<column>_ci_high`` and ``<column>_ranks`` (e.g. "1-3") of the number in
    ``row[column]`` (None when not recorded): what a leaderboard's rows carry to the CLI and the artifacts."""
    found = shown.interval(leaderboard, metric, model, slice, row.get(column))
    ranks = shown.rank_range(leaderboard, metric, model, slice, row.get(column))
    return {**row, f"{column}_ci_low": found[0] if found else None, f"{column}_ci_high": found[1] if found else None,
            f"{column}_ranks": range_text(*ranks) if ranks else None}
