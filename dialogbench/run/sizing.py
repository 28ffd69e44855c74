"""What a run of a config would compute, before it runs (``dialogbench plan``): per stage and model (a game's
players together), the cells planned, cached, still to compute and waiting on an earlier stage; the tokens they
generate at most (``Stage.tokens_per_cell``); the tokens they are expected to take: where the lake has run the stage
before, that history's completion tokens per computed cell (and its backend seconds), else the protocol's own
lengths (``Stage.typical_tokens_per_cell``: its dataset's replies), else unknown. Nothing is
written: the plans are the stages' own, without their record."""

from __future__ import annotations

from collections import Counter
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import duckdb

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
    expected_tokens: int | None  # from the lake's history of the stage, else the protocol's lengths, else None
    expected_seconds: float | None  # from the lake's history of the stage (backend seconds a cell)
    estimate: str = "bound"  # where expected_tokens comes from: history, protocol, or bound (none: max_tokens)

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
    """One row per group of models among the stage's cells (the judged model for a judge's cells; a game's players
    together), each with its own planned, cached, to-compute and waiting counts (the cells waiting for an earlier
    stage that have no key yet are on the first row); one row when the stage has no cell."""
    planned = stage.plan(config, lake)
    todo = planned.todo if planned.todo is not None else missing(lake, stage.table, planned.cells)
    per_cell, (tokens, seconds) = stage.tokens_per_cell(config), past.get(stage.name, (None, None))
    typical = stage.typical_tokens_per_cell(config) if tokens is None else None
    per_expected, estimate = ((tokens, "history") if tokens is not None else (typical, "protocol")
                              if typical is not None else (None, "bound"))
    group = lambda cell: ", ".join(cell.models)  # noqa: E731
    cells, todo_n = Counter(group(c) for c in planned.cells), Counter(group(c) for c in todo)
    blocked_n, unplaced = _blocked(stage, lake, planned, todo, group)
    groups = sorted(cells.keys() | todo_n.keys()) or [", ".join(m.name for m in stage.models(config))]
    rows = []
    for i, models in enumerate(groups):
        first = planned.unplanned + unplaced if i == 0 else 0  # not keyed yet, or blocked in no known group
        n = todo_n[models]
        waiting = blocked_n[models] + first
        rows.append(Size(stage.name, models, planned=cells[models] + (planned.unplanned if i == 0 else 0),
                         cached=max(cells[models] - n - blocked_n[models] - (unplaced if i == 0 else 0), 0),
                         to_compute=n, waiting=waiting,
                         max_tokens=(n + waiting) * per_cell,
                         expected_tokens=None if per_expected is None else round((n + waiting) * per_expected),
                         expected_seconds=None if seconds is None else round((n + waiting) * seconds, 1),
                         estimate=estimate if per_cell else "-"))
    return rows


def _blocked(stage: Stage, lake: Lake, planned, todo, group) -> tuple[Counter, int]:
    """The stage's blocked cells (keyed, neither stored nor to compute: MT-Bench-101 turns not answered yet) by group
    of models, and how many of them could not be placed in one (counted on the first row)."""
    if not planned.blocked:
        return Counter(), 0
    keys = {c.key for c in todo}
    try:
        absent = missing(lake, stage.table, planned.cells)
    except duckdb.Error:  # a table the anti-join does not read: the count alone
        return Counter(), planned.blocked
    found = Counter(group(c) for c in absent if c.key not in keys)
    return found, max(planned.blocked - sum(found.values()), 0)


def size(config, stages: list[Stage], lake: Lake, past: dict[str, tuple[float, float]] | None = None) -> list[Size]:
    """Every row of ``stages`` on ``lake`` (``past``: the history it is expected from; default: ``lake``'s)."""
    past = history(lake) if past is None else past
    return [row for stage in stages for row in size_stage(stage, config, lake, past)]


def size_fresh(config, stages: list[Stage], lake: Lake) -> tuple[list[Size], list[str]]:
    """``size``, and on a fresh lake (no data file yet) the stages after the leading ones that call no model (BotChat's
    seeds, read from its dataset: cheap, and the input of every later BotChat cell) sized as if those had run: they
    are run into a scratch lake, thrown away, and the rest is sized on it. Returns the rows and the stages so run
    (empty when the lake has data: the stages reading an input not made yet are then sized as waiting for it)."""
    leading = []
    for stage in stages:
        if stage.models(config):
            break
        leading.append(stage)
    past = history(lake)
    first = size(config, leading, lake, past)
    if not any(r.to_compute for r in first) or _has_data(lake):
        return first + size(config, stages[len(leading):], lake, past), []
    from dialogbench.cells.runner import run_stage  # (the stages' runner: only for a fresh lake's plan)

    with tempfile.TemporaryDirectory(prefix="dialogbench-plan-") as tmp:
        scratch = Lake(Path(tmp) / "lake", layout=lake.layout)
        for stage in leading:
            run_stage(stage, config, "plan", lake=scratch)
        rest = size(config, stages[len(leading):], scratch, past)
    return first + rest, [s.name for s in leading]


def _has_data(lake: Lake) -> bool:
    return lake.root.is_dir() and next(lake.root.rglob("*.parquet"), None) is not None


COLUMNS = ("stage", "models", "planned", "cached", "to_compute", "waiting", "max_tokens", "expected_tokens",
           "expected_seconds", "estimate")


def expected_total(rows: list[Size]) -> int:
    """The tokens the rows are expected to generate: each row's estimate, its bound where it has none."""
    return sum(r.max_tokens if r.expected_tokens is None else r.expected_tokens for r in rows)


def render(rows: list[Size]) -> str:
    """A text table of ``rows`` and a total line (unknown expectations show as -; the expected tokens' total takes a
    row's bound where it has no estimate)."""
    cells = [[("-" if v is None else f"{v:,}" if isinstance(v, int) else f"{v:,.1f}" if isinstance(v, float) else v)
              for v in (getattr(r, c) for c in COLUMNS)] for r in rows]
    total = ["total", "", *(f"{sum(getattr(r, c) for r in rows):,}" for c in COLUMNS[2:7]),
             f"{expected_total(rows):,}",
             "-" if any(r.expected_seconds is None for r in rows if r.to_compute + r.waiting) else
             f"{sum(r.expected_seconds or 0 for r in rows):,.1f}", ""]
    table = [list(COLUMNS), *cells, total]
    widths = [max(len(str(row[i])) for row in table) for i in range(len(COLUMNS))]
    return "\n".join("  ".join(str(v).ljust(w) if i < 2 else str(v).rjust(w)
                               for i, (v, w) in enumerate(zip(row, widths))) for row in table)
