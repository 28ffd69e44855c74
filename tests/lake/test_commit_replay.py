"""A commit is two renames (``Lake.write``: the record, then the file). A dispatched unit killed between them, sent
again, and the next run's roll-forward must leave each cell stored once (``dialogbench/dispatch/units.py``, ``settle``);
so must a data rename that fails in a process that goes on. Duplicates are what the data tests count
(``sql/botchat/tests/unique_generation_cells.sql``)."""

from __future__ import annotations

import datetime as dt
import json
import multiprocessing
import os
import signal

import pytest

from dialogbench.dispatch import units as dispatch
from dialogbench.lake.lease import lake_lease
from dialogbench.run import registry
from dialogbench.lake import manifest
from dialogbench.lake.catalog import data_tests
from dialogbench.lake.store import Lake, guard_commits
from dialogbench.run.registry import open_lake

KEYS = ("k1", "k2", "k3")
UNIT = "bot-a"


@pytest.fixture(autouse=True)
def dispatching_run(tmp_path):
    """Run r1, which grants the attempts here, holds the lake's lease, as a dispatching run does while its units run
    (an attempt commits only then: ``dispatch.check``)."""
    with lake_lease(tmp_path / "lake", run_id="r1"):
        yield


def generations():
    return next(t for t in registry.tables() if t.name == "generations")


def gen(key: str) -> dict:
    return {"cell_key": key, "protocol": "botchat", "model": "a", "item_id": key, "n_target": 4, "run_id": "r1",
            "created_at": dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc)}


def stored(lake: Lake) -> list[str]:
    """Every stored generation's key, sorted: a cell stored twice is there twice."""
    return sorted(r["cell_key"] for r in lake.read("generations", generations().schema).to_pylist())


def killed_between_the_renames(lake: Lake, token: str, *, at: str = manifest.TMP_SUFFIX) -> None:
    """An attempt of ``UNIT`` writing ``KEYS`` under its guard (a process of its own), SIGKILLed at the rename of the
    file whose name ends with ``at`` (the data file's: after its record's rename; the record's: before it)."""

    def attempt() -> None:
        real = os.replace

        def replace(src, dst):
            if str(src).endswith(at):
                os.kill(os.getpid(), signal.SIGKILL)
            return real(src, dst)

        os.replace = replace
        with guard_commits(dispatch.commit_guard(lake.root, UNIT, token)):
            generations().write(lake, [gen(k) for k in KEYS])

    process = multiprocessing.get_context("fork").Process(target=attempt)
    process.start()
    process.join(60)
    assert process.exitcode == -signal.SIGKILL


def retry(lake: Lake, token: str) -> int:
    """The unit sent again: it computes (writes) the cells the lake lacks, as a stage does (its cached cells)."""
    missing = [gen(k) for k in KEYS if k not in stored(lake)]
    with guard_commits(dispatch.commit_guard(lake.root, UNIT, token)):
        return generations().write(lake, missing) if missing else 0


def test_a_unit_killed_between_its_renames_then_sent_again_stores_each_cell_once(tmp_path):
    lake = open_lake(tmp_path / "lake")
    killed_between_the_renames(lake, dispatch.grant(lake.root, UNIT, "r1"))
    folder = lake.table_dir("generations")
    assert [p.name for p in folder.rglob("*") if p.name.endswith(manifest.TMP_SUFFIX)]  # its file still a temp
    assert stored(lake) == []  # in flight: read by nobody

    assert retry(lake, dispatch.grant(lake.root, UNIT, "r1")) == 0  # the killed commit finished first: all cached
    lake.clean_temp_files()  # the next run's start: nothing of it left to replay
    assert stored(lake) == list(KEYS)
    assert data_tests(lake) == {}


def test_an_attempt_that_ends_killed_mid_commit_is_settled_before_the_run_computes_its_cells(tmp_path):
    """The judging unit is never sent again: the dispatching run settles it when it ends, then judges the rest."""
    lake = open_lake(tmp_path / "lake")
    killed_between_the_renames(lake, dispatch.grant(lake.root, UNIT, "r1"))
    assert dispatch.settle(lake.root, UNIT).startswith("finished ")
    assert stored(lake) == list(KEYS) and dispatch.settle(lake.root, UNIT) is None  # once
    lake.clean_temp_files()
    assert stored(lake) == list(KEYS)


def test_an_attempt_killed_before_its_record_leaves_nothing_committed_and_no_temp_file(tmp_path):
    lake = open_lake(tmp_path / "lake")
    killed_between_the_renames(lake, dispatch.grant(lake.root, UNIT, "r1"), at=manifest.RECORD_TMP_SUFFIX)
    assert retry(lake, dispatch.grant(lake.root, UNIT, "r1")) == len(KEYS)  # never committed: computed again
    assert not [p for p in lake.table_dir("generations").rglob("*") if p.name.endswith(manifest.TMP_SUFFIX)]
    lake.clean_temp_files()
    assert stored(lake) == list(KEYS)


def test_a_data_rename_that_fails_is_undone_so_the_retried_chunk_is_stored_once(tmp_path, monkeypatch):
    lake = open_lake(tmp_path / "lake")
    real = os.replace

    def failing(src, dst):
        if str(src).endswith(manifest.TMP_SUFFIX):
            raise OSError(5, "Input/output error")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(OSError, match="Input/output"):
        generations().write(lake, [gen(k) for k in KEYS])
    monkeypatch.setattr(os, "replace", real)
    assert not [p for p in lake.table_dir("generations").rglob("*") if p.is_file()]  # no record, no temp file
    generations().write(lake, [gen(k) for k in KEYS])  # the chunk retried
    lake.clean_temp_files()
    assert stored(lake) == list(KEYS)


@pytest.mark.parametrize("note", [
    {"folder": "../outside", "tmp": ".part-x-0123abcd.parquet.tmp"},
    {"folder": "/tmp", "tmp": ".part-x-0123abcd.parquet.tmp"},
    {"folder": "_state/attempts", "tmp": ".part-x-0123abcd.parquet.tmp"},
    {"folder": "linked", "tmp": ".part-x-0123abcd.parquet.tmp"},
    {"folder": "generations", "tmp": "../../outside/.part-x-0123abcd.parquet.tmp"},
    {"folder": "generations", "tmp": "notes.txt"},
    "not json",
])
def test_a_commit_note_moves_or_removes_nothing_outside_the_lake_s_tables(tmp_path, note, caplog):
    """A note is input like any file on disk: it names a temp file of a table's folder, reached without a link."""
    lake = open_lake(tmp_path / "lake")
    dispatch.grant(lake.root, UNIT, "r1")
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / ".part-x-0123abcd.parquet.tmp"
    victim.write_text("the user's")
    (lake.root / "linked").symlink_to(outside)
    (lake.root / "generations").mkdir()
    path = lake.root / "_state" / "attempts" / f"{UNIT}.commit"
    path.write_text(note if isinstance(note, str) else json.dumps(note))
    assert dispatch.settle(lake.root, UNIT) is None
    assert victim.read_text() == "the user's" and sorted(p.name for p in outside.iterdir()) == [victim.name]
    assert path.read_text() == ""  # read once: the next settle finds nothing
    assert "left for the next run's start" in caplog.text
