"""Whether a board's latest run already is the answer a new run of the same config would give, so ``dialogbench run``
can say so in seconds instead of starting Prefect to recompute nothing (the config's ``reuse_unchanged_run``).

A run is reused only when all of these hold, each checked here and named when it does not:

- the board's latest published run (``reports/boards/<board>/run.json``) finished without failing;
- its effective config has this config's fingerprint (``run_configs.config_fp``: models, judges, protocols, lake);
- it ran this code: its note's ``code`` is this code's fingerprint (``environment.code_fingerprint``: every file of
  the package, the flows, the tasks and the SQL, committed or not);
- nothing was written to the lake's cell, label and dataset tables after it finished (a later run of another board,
  a labels import: they can change what this board's views read);
- the config's plan (``dialogbench plan``) has no cell to compute, none waiting on an earlier stage and none blocked:
  the canary's nightly re-judging and the judge checks' probes included.

Cells are immutable and keyed by what made them, so under these conditions the run would compute nothing and its
leaderboards, intervals and report would be the latest run's. Nothing is written."""

from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from dialogbench.lake import Lake

if TYPE_CHECKING:
    from dialogbench.run.built import Run
    from dialogbench.run.sizing import Size

# What a run writes about itself (records, history, reports, plans, the catalog): not inputs of the numbers a
# rerun would show, so their writes after the latest run do not stop a reuse.
BOOKKEEPING = frozenset({"reports", "runs", "run_configs", "plans", "metric_snapshots", "metric_changes",
                         "metric_pairs", "metric_units", "_state", "catalog.duckdb", "lake.json"})


@dataclass(frozen=True)
class Reuse:
    """The run a rerun would repeat, or why there is none (``run_id`` None, ``reason`` says)."""

    run_id: str | None
    reason: str
    finished_at: str | None = None
    folder: Path | None = None  # the run's report folder
    sizes: tuple["Size", ...] = ()


def latest_run(lake: Lake, board: str) -> dict | None:
    """The board's latest published run's note (run.json), None when none published."""
    from dialogbench.report.publish import RUN_NOTE, board_folder

    try:
        return json.loads((board_folder(lake, board) / RUN_NOTE).read_text())
    except (FileNotFoundError, NotADirectoryError, json.JSONDecodeError):
        return None


def recorded_fingerprint(lake: Lake, run_id: str) -> str | None:
    try:
        stored = lake.read_named("run_configs", "config.parquet", {"run_id": run_id})
    except (OSError, ValueError, pa.ArrowException):
        return None
    rows = [] if stored is None or "config_fp" not in stored.column_names else stored.column("config_fp").to_pylist()
    return rows[-1] if rows else None


# Delta commits that change no table's rows: a compaction rewrites them, a vacuum deletes unreferenced files
UNCHANGING = frozenset({"OPTIMIZE", "VACUUM START", "VACUUM END"})


def written_after(lake: Lake, moment: dt.datetime) -> Path | None:
    """A file of the lake's inputs (every table but ``BOOKKEEPING``) modified after ``moment``, None if none; on a
    Delta lake, a table's commit after ``moment`` that changed its rows (its log, as any writer on any machine
    committed it: the files of a lake on S3 are not all in the local folder)."""
    if lake.tables_kind() == "delta":
        return _committed_after(lake, moment)
    limit = moment.timestamp()
    for entry in os.scandir(lake.root):
        if entry.name in BOOKKEEPING or entry.name.startswith("."):
            continue
        stack = [Path(entry.path)]
        while stack:
            path = stack.pop()
            if path.is_dir():
                stack.extend(path.iterdir())
            elif path.stat().st_mtime > limit:
                return path
    return None


def _committed_after(lake: Lake, moment: dt.datetime) -> Path | None:
    from dialogbench.lake.delta.errors import TableNotFound

    limit_ms = moment.timestamp() * 1000
    for table in lake.layout.tables:
        if table in BOOKKEEPING or (delta := lake.delta(table)) is None:
            continue
        try:
            commits = delta.store.history(table, limit=50)  # newest first
        except TableNotFound:
            continue
        for commit in commits:
            if commit.get("timestamp", 0) <= limit_ms:
                break
            if commit.get("operation") not in UNCHANGING:
                return lake.root / table / "_delta_log"
    return None


def unchanged_run(run: "Run") -> Reuse:
    """The board's latest run when a rerun of ``run`` would repeat it (module docstring), else why not."""
    from dialogbench.run import sizing
    from dialogbench.run.environment import code_fingerprint
    from dialogbench.history.snapshot import config_fingerprint
    from dialogbench.report.publish import run_folder

    config, lake, board = run.config, run.lake, run.board
    note = latest_run(lake, board)
    if note is None or not note.get("run_id") or not note.get("finished_at"):
        return Reuse(None, f"board {board} has no finished run yet")
    run_id = note["run_id"]
    if note.get("failed"):
        return Reuse(None, f"its latest run {run_id} failed")
    if recorded_fingerprint(lake, run_id) != config_fingerprint(config):
        return Reuse(None, f"the config differs from its latest run {run_id}'s")
    if note.get("code") != code_fingerprint():
        return Reuse(None, f"its latest run {run_id} ran other code")
    finished = dt.datetime.fromisoformat(note["finished_at"])
    changed = written_after(lake, finished)
    if changed is not None:
        return Reuse(None, f"the lake changed after its latest run {run_id} ({changed.relative_to(lake.root)})")
    sizes = sizing.size(config, run.stages, lake)
    open_ = [s.stage for s in sizes if s.to_compute or s.waiting or s.planned != s.cached and s.planned]
    if open_:
        return Reuse(None, f"cells to compute ({', '.join(dict.fromkeys(open_))})", sizes=tuple(sizes))
    return Reuse(run_id, f"board {board}'s latest run {run_id} holds this config's results: the config, the code "
                 "and the lake are unchanged since and no cell is left to compute", finished_at=note["finished_at"],
                 folder=run_folder(lake, run_id), sizes=tuple(sizes))
