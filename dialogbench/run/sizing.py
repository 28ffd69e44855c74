"""What a run of a config would compute, before it runs (``dialogbench plan``): per stage and model (a game's
players together), the cells planned, cached, still to compute and waiting on an earlier stage; the tokens they
generate at most (``Stage.tokens_per_cell``); and, where the lake has run the stage before, the tokens and seconds
they are expected to take (that history's completion tokens and backend seconds per computed cell). Nothing is
written: the plans are the stages' own, without their record."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass

from dialogbench.cells.missing import missing
from dialogbench.cells.shared_tables import BACKEND_CALLS_TABLE, RUNS_TABLE
from dialogbench.cells.stage import Stage
from dialogbench.lake import Lake


@dataclass(frozen=True)
class Size:
    stage: str
    models: str
    planned: int
    cached: int
    to_compute: int
    waiting: int  # cells that need an earlier stage's output first (counted, not yet keyed)
    max_tokens: int  # what the cells to compute and waiting generate at most
    expected_tokens: int | None  # from the lake's history of the stage, None without one
    expected_seconds: float | None

    def to_dict(self) -> dict:
        return asdict(self)


def history(lake: Lake) -> dict[str, tuple[float, float]]:
    """stage -> (completion tokens, backend seconds) per computed cell over every recorded run of it."""
    calls = lake.relation_sql(BACKEND_CALLS_TABLE.name, BACKEND_CALLS_TABLE.schema)
    runs = lake.relation_sql(RUNS_TABLE.name, RUNS_TABLE.schema)
    with lake.connect() as con:
        rows = con.sql(f"""
            WITH spent AS (SELECT stage, sum(completion_tokens) AS tokens, sum(seconds) AS seconds FROM {calls}
                           GROUP BY stage),
                 computed AS (SELECT stage, sum(computed) AS cells FROM {runs} GROUP BY stage)
            SELECT stage, coalesce(tokens, 0) / cells, coalesce(seconds, 0) / cells
            FROM spent JOIN computed USING (stage) WHERE cells > 0""").fetchall()
    return {stage: (tokens, seconds) for stage, tokens, seconds in rows}


def size_stage(stage: Stage, config, lake: Lake, past: dict[str, tuple[float, float]]) -> list[Size]:
    """One row per group of models among the stage's cells to compute (the judged model for a judge's cells; the
    first row also holds the stage's planned, cached and waiting counts), one row when none is left."""
    planned = stage.plan(config, lake)
    todo = planned.todo if planned.todo is not None else missing(lake, stage.table, planned.cells)
    per_cell, (tokens, seconds) = stage.tokens_per_cell(config), past.get(stage.name, (None, None))
    groups = sorted(Counter(", ".join(cell.models) for cell in todo).items())
    rows = []
    for i, (models, n) in enumerate(groups or [(", ".join(m.name for m in stage.models(config)), 0)]):
        first = i == 0
        cells = n + (planned.blocked + planned.unplanned if first else 0)
        rows.append(Size(stage.name, models, planned=len(planned.cells) + planned.unplanned if first else 0,
                         cached=len(planned.cells) - len(todo) - planned.blocked if first else 0, to_compute=n,
                         waiting=cells - n, max_tokens=cells * per_cell,
                         expected_tokens=None if tokens is None else round(cells * tokens),
                         expected_seconds=None if seconds is None else round(cells * seconds, 1)))
    return rows


def size(config, stages: list[Stage], lake: Lake) -> list[Size]:
    past = history(lake)
    return [row for stage in stages for row in size_stage(stage, config, lake, past)]


COLUMNS = ("stage", "models", "planned", "cached", "to_compute", "waiting", "max_tokens", "expected_tokens",
           "expected_seconds")


def render(rows: list[Size]) -> str:
    """A text table of ``rows`` and a total line (unknown expectations show as -)."""
    cells = [[("-" if v is None else f"{v:,}" if isinstance(v, int) else f"{v:,.1f}" if isinstance(v, float) else v)
              for v in (getattr(r, c) for c in COLUMNS)] for r in rows]
    total = ["total", "", *(f"{sum(getattr(r, c) for r in rows):,}" for c in COLUMNS[2:7]),
             *("-" if any(getattr(r, c) is None for r in rows if r.to_compute + r.waiting) else
               f"{sum(getattr(r, c) or 0 for r in rows):,}" for c in COLUMNS[7:])]
    table = [list(COLUMNS), *cells, total]
    widths = [max(len(str(row[i])) for row in table) for i in range(len(COLUMNS))]
    return "\n".join("  ".join(str(v).ljust(w) if i < 2 else str(v).rjust(w)
                               for i, (v, w) in enumerate(zip(row, widths))) for row in table)
