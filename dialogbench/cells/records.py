"""The two records every stage writes the same way: its plan (``plans``) and its failed cells (``failures``)."""

from __future__ import annotations

import pyarrow as pa

from dialogbench.cells.cell import Cell
from dialogbench.lake import Lake
from dialogbench.lake.schemas import FAILURES, PLANS
from dialogbench.text.redact import redact
from dialogbench.run.runs import now


def record_plan(lake: Lake, *, stage: str, cells: list[Cell], run_id: str, per_models: bool,
                board: str | None = None, file: str = "plan.parquet") -> None:
    """Every cell the run asked of ``stage``: the metrics read each scope's latest plan on each board. ``scope`` is
    the cell's models (``per_models``: a later run for other models leaves these cells current) or empty (the
    stage's latest plan replaces all its cells); ``board`` the board the run publishes to (dialogbench/run/boards.py);
    ``file`` its name in the run's partition of the stage (two stages recorded as one, a protocol's judges, apart)."""
    created = now()
    rows = [{"run_id": run_id, "stage": stage, "cell_key": c.key, "item_id": c.item_id, "model": c.model,
             "judge": c.judge, "created_at": created, "task": c.task, "roles": list(c.roles.items()),
             "scope": c.models if per_models else [], "board": board} for c in cells]
    lake.write("plans", pa.Table.from_pylist(rows, schema=PLANS), partition={"stage": stage, "run_id": run_id},
               name=file)


def failure_rows(*, stage: str, failed: list[tuple[Cell, str, str | None]], run_id: str) -> list[dict]:
    """A row per (cell, error, model): ``model`` is who failed (a game's player), else the cell's model.
    The error is redacted: an endpoint's error can quote the API key it was sent."""
    created = now()
    return [{"cell_key": cell.key, "stage": stage, "item_id": cell.item_id, "model": model or cell.model,
             "judge": cell.judge, "error": redact(error or "no text"), "run_id": run_id, "created_at": created}
            for cell, error, model in failed]


def write_failures(lake: Lake, *, stage: str, failed: list[tuple[Cell, str, str | None]], run_id: str) -> None:
    lake.write("failures", pa.Table.from_pylist(failure_rows(stage=stage, failed=failed, run_id=run_id),
                                                schema=FAILURES), partition={"stage": stage})


def run_failures(lake: Lake, run_id: str) -> list[dict]:
    """The cells that failed in run ``run_id``, one row per (stage, cell), by stage and item: a cell tried several
    times (a game's re-asked moves, one row each in ``failures``) is one failed cell, as the stage counts it.
    ``error`` is its first error (redacted when written), ``attempts`` its failure rows, ``models`` who failed."""
    quoted = run_id.replace("'", "''")
    rows = lake.read("failures", FAILURES, where=f"run_id = '{quoted}'").to_pylist()
    cells: dict[tuple[str, str], dict] = {}
    for row in sorted(rows, key=lambda r: r["created_at"]):
        cell = cells.setdefault((row["stage"], row["cell_key"]), {**row, "attempts": 0, "models": []})
        cell["attempts"] += 1
        if row["model"] and row["model"] not in cell["models"]:
            cell["models"].append(row["model"])
    return sorted(cells.values(), key=lambda r: (r["stage"] or "", r["item_id"] or "", r["model"] or ""))
