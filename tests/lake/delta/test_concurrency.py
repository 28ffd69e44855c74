"""The key guarantee, each cell once with no lease: four processes race ``insert_missing`` on overlapping keys, round
after round, on a folder and on S3 (moto), starting on a table that does not exist yet (so they race its creation
too). Afterwards the table holds every key offered exactly once, the writers' own counts of what they inserted add
up to it, no exception escaped, and the history shows their MERGE commits. The same race with plain appends doubles
cells, so the test would catch a store that stopped checking keys."""

from __future__ import annotations

import multiprocessing
from typing import Any

import pytest

from dialogbench.lake.delta import DeltaCellStore
from tests.lake.delta import racers

WRITERS = 4
ROUNDS = 5


def run_race(location: str, *, rounds: int = ROUNDS, plain_append: bool = False) -> list[dict[str, Any]]:
    """The writers' reports, after every writer process has ended."""
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(WRITERS), ctx.Queue()
    writers = [ctx.Process(target=racers.race, args=(location, i, rounds, barrier, results, plain_append))
               for i in range(WRITERS)]
    for process in writers:
        process.start()
    try:
        reports = [results.get(timeout=180) for _ in writers]
    finally:
        for process in writers:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
    assert [p.exitcode for p in writers] == [0] * WRITERS
    return reports


def test_racing_writers_store_each_cell_once(location):
    reports = run_race(location)
    assert [r["error"] for r in reports] == [None] * WRITERS
    offered = {cell for report in reports for cell in report["offered"]}
    assert len(offered) > racers.PER_WRITER * ROUNDS  # the writers did overlap and differ

    store = DeltaCellStore(location)
    table = store.read("cells")
    stored = list(zip(table.column("model").to_pylist(), table.column("k").to_pylist()))
    assert len(stored) == len(set(stored)), "a cell is stored twice"
    assert set(stored) == offered, "a cell offered is missing"
    assert sum(r["inserted"] for r in reports) == len(stored)  # each writer's count is what it committed

    merges = [c for c in store.history("cells") if c["operation"] == "MERGE"]
    assert sum(c["operationMetrics"]["num_target_rows_inserted"] for c in merges) == len(stored)
    assert {c["dialogbench.writer"] for c in merges} <= {f"w{i}" for i in range(WRITERS)}
    assert len({c["dialogbench.writer"] for c in merges}) >= 2 and len(merges) >= ROUNDS
    assert sum(r["conflicts"] for r in reports) > 0, "the writers never collided: the race did not race"


def test_the_same_race_with_plain_appends_doubles_cells(tmp_path):
    """The check above can fail: without the MERGE's key check, overlapping writers store cells twice."""
    reports = run_race(str(tmp_path / "lake"), rounds=1, plain_append=True)
    assert [r["error"] for r in reports] == [None] * WRITERS
    table = DeltaCellStore(tmp_path / "lake").read("cells")
    stored = list(zip(table.column("model").to_pylist(), table.column("k").to_pylist()))
    assert len(stored) == WRITERS * racers.PER_WRITER > len(set(stored))
