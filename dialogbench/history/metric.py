"""What a family declares for its history: which columns of which leaderboard view are metrics."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Metric:
    """One metric of a leaderboard view, one snapshot row per view row: ``view`` (the leaderboard view), ``name`` (the
    metric; ``value`` is its SQL expression over the view's columns, default the column ``name``), ``model`` the
    column naming the model, ``keys`` the other columns that tell a row apart (judge, N, setting, opponent…), ``low``
    / ``high`` its 95% interval's columns (none: no interval) and ``n`` the column counting the cells it rests on.
    ``stages``: the stages (names or prefixes such as ``generate:``) whose cells the value rests on: a row whose
    models miss cells of one (failed, blocked, not computed yet) is incomplete. ``protocol``: the judge stage whose
    verdicts make the value (none: no judge); a (judge, protocol) that fails its judge checks is not measured.
    ``units``: the family's units view (``<family>_units``: the independent units the value is a mean of, see
    dialogbench/stats), whose bootstrap gives the value's interval (then ``low`` / ``high`` are not read) and whose
    shared units pair two models in ``dialogbench compare``; none: the view's own interval, if any.
    ``higher_is_better``: the direction a rank and a verdict read the value in. ``paired``: two models share units
    (the same seeds, dialogues, words); False where they never do (TofuKingdom: two models in one camp never play the
    same game), so ``compare`` resamples each side on its own."""

    view: str
    name: str
    value: str | None = None
    model: str = "model"
    keys: tuple[str, ...] = ()
    low: str | None = None
    high: str | None = None
    n: str | None = None
    stages: tuple[str, ...] = ()
    protocol: str | None = None
    units: str | None = None
    higher_is_better: bool = True
    paired: bool = True

    def select_sql(self) -> str:
        """One row per view row: model, the key columns (as text), value, interval, n."""
        def column(expr: str | None, cast: str) -> str:
            return f"CAST({expr} AS {cast})" if expr else f"CAST(NULL AS {cast})"

        def quoted(name: str | None) -> str | None:
            return f'"{name}"' if name else None

        keys = ", ".join(f'CAST("{k}" AS VARCHAR)' for k in self.keys)
        value = self.value or f'"{self.name}"'
        return (f'SELECT CAST("{self.model}" AS VARCHAR) AS model, [{keys}]::VARCHAR[] AS key_values, '
                f"{column(value, 'DOUBLE')} AS value, {column(quoted(self.low), 'DOUBLE')} AS ci_low, "
                f"{column(quoted(self.high), 'DOUBLE')} AS ci_high, {column(quoted(self.n), 'BIGINT')} AS n "
                f'FROM "{self.view}"')
