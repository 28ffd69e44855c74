"""``dialogbench repair``: a lake holding cells twice keeps each cell's earliest copy (created_at, then file path),
rewrites only the files holding other copies, leaves rows that are not computed cells alone, and converges
without loss when killed midway and rerun."""

from __future__ import annotations

import datetime as dt

import pyarrow.parquet as pq
import pytest

from dialogbench.run.registry import open_lake
from dialogbench.run import registry
from dialogbench.lake import Lake, manifest
from dialogbench.lake.catalog import data_tests
from dialogbench.lake.repair import repair
from dialogbench.lake.verify import verify

T0 = dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc)


def table(name: str):
    return next(t for t in registry.tables() if t.name == name)


def gen(key: str, hours: float, run: str) -> dict:
    return {"cell_key": key, "protocol": "botchat", "model": "a", "item_id": key, "n_target": 4, "run_id": run,
            "created_at": T0 + dt.timedelta(hours=hours)}


def removed(results) -> dict[str, int]:
    return {r.table: r.rows_removed for r in results if r.rows_removed}


def generations(lake: Lake) -> dict[str, str]:
    rows = lake.read("generations", table("generations").schema).to_pylist()
    assert len(rows) == len({r["cell_key"] for r in rows}), "a cell is stored twice"
    return {r["cell_key"]: r["run_id"] for r in rows}


def overlapping_runs(lake: Lake) -> None:
    """Run 1 and run 2 both computed k1..k3 (run 2's k2 first, at 0h); run 2 alone k4."""
    gens = table("generations")
    gens.write(lake, [gen("k1", 1, "r1"), gen("k2", 1, "r1"), gen("k3", 1, "r1")])
    gens.write(lake, [gen("k1", 2, "r2"), gen("k2", 0, "r2"), gen("k3", 2, "r2"), gen("k4", 2, "r2")])


def test_each_cell_keeps_its_earliest_copy(tmp_path):
    lake = open_lake(tmp_path / "lake")
    overlapping_runs(lake)
    assert data_tests(lake) == {"unique_generation_cells": 3}
    assert removed(repair(lake, dry_run=True)) == {"generations": 3} and len(lake.files("generations")) == 2
    assert removed(repair(lake)) == {"generations": 3}
    assert generations(lake) == {"k1": "r1", "k2": "r2", "k3": "r1", "k4": "r2"}
    assert data_tests(lake) == {} and removed(repair(lake)) == {}  # a second repair finds nothing
    assert verify(lake) == []  # every rewritten file is committed with its record


def test_equal_times_keep_the_first_file_by_path(tmp_path):
    lake = open_lake(tmp_path / "lake")
    gens = table("generations")
    gens.write(lake, [gen("k1", 1, "first")])
    gens.write(lake, [gen("k1", 1, "second")])
    by_path = {p: pq.read_table(p).column("run_id")[0].as_py() for p in lake.files("generations")}
    repair(lake)
    assert generations(lake) == {"k1": by_path[min(by_path)]}
    assert lake.files("generations") == [min(by_path)]  # the kept copy's file is untouched


def test_a_cell_of_many_rows_keeps_one_whole_copy(tmp_path):
    """utterance_lengths holds a row per utterance of a generation: one copy of a cell is all its rows of a file."""
    lake = open_lake(tmp_path / "lake")
    lengths = table("utterance_lengths")
    for hours in (1, 0):
        lengths.write(lake, [{"generation_key": "g1", "utterance": u, "tokens": 10 * hours + u,
                              "created_at": T0 + dt.timedelta(hours=hours)} for u in (3, 4)])
    assert removed(repair(lake)) == {"utterance_lengths": 2}
    assert sorted(lake.read("utterance_lengths").column("tokens").to_pylist()) == [3, 4]


def test_rows_that_are_not_computed_cells_stay(tmp_path):
    """A game that ended in backend errors is history (the failures view reads it), not a copy of the cell."""
    lake = open_lake(tmp_path / "lake")
    games = table("gameeval_games")
    for hours, reason in ((0, "backend_error"), (1, "finished"), (2, "finished")):
        games.write(lake, [{"cell_key": "g", "game": "askguess", "end_reason": reason,
                            "created_at": T0 + dt.timedelta(hours=hours)}])
    assert removed(repair(lake)) == {"gameeval_games": 1}
    kept = lake.read("gameeval_games").to_pylist()
    assert sorted((r["end_reason"], r["created_at"].hour) for r in kept) == [("backend_error", 0), ("finished", 1)]


@pytest.mark.parametrize("kill_at", [1, 2])
def test_a_repair_killed_midway_converges_when_rerun(tmp_path, monkeypatch, kill_at):
    """Killed after a rewrite is committed, before the old file goes: reads already leave the old file out
    (the rewrite supersedes it), every cell keeps its kept copy, and a rerun finishes: no cell lost or kept twice."""
    lake = open_lake(tmp_path / "lake")
    overlapping_runs(lake)
    table("generations").write(lake, [gen("k1", 3, "r3"), gen("k4", 3, "r3")])  # three files hold duplicates
    real, calls = manifest.remove, []

    def killed(path):
        calls.append(path)
        if len(calls) == kill_at:
            raise KeyboardInterrupt("killed")
        return real(path)

    monkeypatch.setattr(manifest, "remove", killed)
    with pytest.raises(KeyboardInterrupt):
        repair(lake)
    monkeypatch.undo()
    expected = {"k1": "r1", "k2": "r2", "k3": "r1", "k4": "r2"}
    # mid-repair: every kept copy is there; a file a committed rewrite supersedes is not read (which file is
    # rewritten first follows the files' random names: a file all of whose rows go is removed without a rewrite)
    mid = lake.read("generations").to_pylist()
    assert {(r["cell_key"], r["run_id"]) for r in mid} >= set(expected.items())
    superseded = {s for p in lake.files("generations") for s in manifest.of(p).supersedes}
    assert len(mid) == sum(pq.read_metadata(p).num_rows for p in lake.files("generations") if p.name not in superseded)
    repair(lake)
    assert generations(lake) == expected and data_tests(lake) == {} and verify(lake) == []
    assert not any(manifest.of(p).supersedes and (p.parent / manifest.of(p).supersedes[0]).exists()
                   for p in lake.files("generations"))
