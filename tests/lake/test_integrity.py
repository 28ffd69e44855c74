"""Damage is detected, named and healed: every committed file has a record (checksum, size, rows); reads leave
out a damaged file (naming it) instead of failing; the run-start ``quick_check`` and ``verify`` quarantine damaged
files; a writer killed between its two renames is rolled forward; an older lake's files are adopted."""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dialogbench.run.registry import open_lake
from dialogbench.cells.tables import Table
from dialogbench.lake import Lake, manifest
from dialogbench.lake.layout import Layout
from dialogbench.lake.catalog import connect
from dialogbench.lake.quarantine import NOTE, notes
from dialogbench.lake.verify import quick_check, verify
from dialogbench.lake.version import FORMAT, LakeFormatError, ensure_current, lake_format, refuse_older
from tests.damage import flip_keeping_readable, killed_before_the_data_rename, same_mtime, truncate


def small(values: list[int], label: str = "x") -> pa.Table:
    return pa.table({"value": pa.array(values, pa.int64()), "label": [label * 40] * len(values)})


def values(lake: Lake) -> list[int]:
    return sorted(lake.read("things").column("value").to_pylist())


def three_files(tmp_path) -> tuple[Lake, list]:
    lake = open_lake(tmp_path / "lake")
    return lake, [lake.write("things", small([i * 10 + 1, i * 10 + 2]), partition={"p": str(i)}) for i in range(3)]


def test_every_write_records_checksum_size_and_rows(tmp_path):
    lake = open_lake(tmp_path / "lake")
    path = lake.write("things", small([1, 2, 3]), name="fixed.parquet")
    record = manifest.of(path)
    assert record.file == "fixed.parquet" and record.table == "things" and record.rows == 3
    assert record.size == path.stat().st_size and record.mtime_ns == path.stat().st_mtime_ns
    assert record.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    lake.write("things", small([9]), name="fixed.parquet")  # a replaced file's record is replaced with it
    assert manifest.of(path).rows == 1 and manifest.of(path).sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert quick_check(lake) == [] and verify(lake) == []


def test_a_writer_killed_between_its_two_renames_is_rolled_forward(tmp_path, monkeypatch):
    lake = Lake(tmp_path / "lake", layout=Layout(tables={"things": Table("things", small([]).schema)}))  # swept
    lake.write("things", small([1]))
    with killed_before_the_data_rename(monkeypatch, "killed after the record, before the data's rename"):
        lake.write("things", small([2, 3]))
    assert values(lake) == [1]  # in flight: left out, not damage
    assert quick_check(lake) == [] and not (lake.root / "_quarantine").exists()
    assert lake.clean_temp_files() == 1  # the run's start finishes the rename: the record says it was committed
    assert values(lake) == [1, 2, 3] and verify(lake) == []


def test_reads_leave_out_a_damaged_file_and_name_it(tmp_path, caplog):
    lake, paths = three_files(tmp_path)
    truncate(paths[0])
    flip_keeping_readable(paths[1])
    with caplog.at_level(logging.WARNING, logger="dialogbench.lake"):
        assert values(lake) == [21, 22]
    assert str(paths[0].relative_to(lake.root)) in caplog.text and "truncated" in caplog.text
    assert str(paths[1].relative_to(lake.root)) in caplog.text and "altered" in caplog.text
    with connect(lake) as con:  # every view is created: one bad file blocks no query
        assert con.sql("select 1").fetchall() == [(1,)]


def test_quick_check_quarantines_missing_truncated_and_altered_files(tmp_path):
    lake, paths = three_files(tmp_path)
    extra = lake.write("things", small([99]))
    truncate(paths[0], 0.1)
    flip_keeping_readable(paths[1])
    extra.unlink()
    found = {d.path: d.problem for d in quick_check(lake)}
    assert found == {paths[0]: "truncated", paths[1]: "altered", extra: "missing"}
    assert values(lake) == [21, 22]
    (folder,) = (lake.root / "_quarantine").iterdir()
    for path in paths[:2]:
        moved = folder / path.relative_to(lake.root)
        assert moved.exists() and manifest.of(moved) is not None and not path.exists()
    assert not manifest.record_path(extra).exists()
    assert {n["path"]: n["problem"] for n in json.loads((folder / NOTE).read_text())} == {
        str(p.relative_to(lake.root)): problem for p, problem in found.items()}
    assert len(notes(lake)) == 3 and quick_check(lake) == []  # healed: nothing left to find


def test_only_verify_sees_a_flip_that_kept_size_and_mtime(tmp_path):
    lake, paths = three_files(tmp_path)
    st = paths[2].stat()
    flip_keeping_readable(paths[2])
    same_mtime(paths[2], st)  # bit rot: nothing says the file was written
    assert values(lake) != [1, 2, 11, 12, 21, 22]  # silently other values
    assert quick_check(lake) == []
    (damage,) = verify(lake)
    assert (damage.path, damage.problem) == (paths[2], "altered") and "sha256" in damage.detail
    assert values(lake) == [1, 2, 11, 12]


def test_a_touched_file_is_rehashed_once_then_its_record_follows(tmp_path):
    lake, paths = three_files(tmp_path)
    os.utime(paths[0], ns=(1, 1))
    assert quick_check(lake) == [] and manifest.of(paths[0]).mtime_ns == 1
    assert values(lake) == [1, 2, 11, 12, 21, 22]


def test_a_file_without_a_record_is_left_out_until_adopted(tmp_path):
    lake, paths = three_files(tmp_path)
    stray = paths[0].with_name("part-copied.parquet")
    shutil.copy(paths[0], stray)
    broken = paths[0].with_name("part-broken.parquet")
    broken.write_bytes(b"PAR1 not really")
    assert values(lake) == [1, 2, 11, 12, 21, 22]  # not the lake's: left out
    assert {d.path: d.problem for d in verify(lake)} == {stray: "unrecorded", broken: "unrecorded"}
    assert stray.exists() and broken.exists()  # named, not moved
    assert {d.path: d.problem for d in verify(lake, adopt=True)} == {broken: "unreadable"}
    assert values(lake) == [1, 1, 2, 2, 11, 12, 21, 22] and not broken.exists()


def test_a_format_3_lake_is_recorded_in_place(tmp_path):
    lake, paths = three_files(tmp_path)
    for path in paths:
        manifest.record_path(path).unlink()
    with open(paths[1], "r+b") as handle:
        handle.truncate(50)
    (lake.root / "lake.json").write_text(json.dumps({"format": 3}))
    with pytest.raises(LakeFormatError, match="dialogbench migrate"):  # a reader (query) never writes
        refuse_older(lake)
    assert not manifest.record_path(paths[0]).exists() and paths[1].exists() and lake_format(lake) == 3
    ensure_current(lake)  # a run, under the lease
    assert lake_format(lake) == FORMAT == 5
    assert manifest.of(paths[0]).rows == 2 and manifest.of(paths[2]).rows == 2
    assert not paths[1].exists() and [n["problem"] for n in notes(lake)] == ["unreadable"]
    assert values(lake) == [1, 2, 21, 22] and verify(lake) == []


def test_a_lake_file_replaced_under_a_read_keeps_the_table_readable(tmp_path):
    """A record whose file is replaced by another valid Parquet file of another size: left out, not an error."""
    lake, paths = three_files(tmp_path)
    pq.write_table(small([7, 7, 7]), paths[0])
    assert values(lake) == [11, 12, 21, 22]


def rewrite_steps(lake: Lake, old) -> tuple[object, list]:
    """``repair``'s rewrite of ``old`` as its five file-system steps (``Lake.write`` with ``supersedes``, then
    ``manifest.remove``), to run one at a time between a reader's looks."""
    new = old.with_name(f"{old.stem}-dedup.parquet")
    tmp = old.with_name(f".{new.stem}-0123abcd.parquet.tmp")
    data = small([1, 2, 3])
    return new, [lambda: pq.write_table(data, tmp),
                 lambda: manifest.write(new, manifest.describe(tmp, table="things", rows=3, tmp=tmp, name=new.name,
                                                               supersedes=(old.name,))),
                 lambda: os.replace(tmp, new),
                 lambda: old.unlink(),
                 lambda: manifest.record_path(old).unlink()]


def test_a_snapshot_taken_during_a_rewrite_holds_the_old_file_or_the_new_one(tmp_path, monkeypatch):
    """Every interleaving of a repair rewriting six files, one after the other (one step at the k-th file-system look
    of the snapshot, then one every ``stride`` looks), with a reader's snapshot: of each old file and its new one
    exactly one is read, and nothing is named damaged. Looking at an old and a new file in the wrong order, or
    twice, reads both or neither; a listing taken before a rewrite began misses its new file."""
    real_stat, real_scandir = os.stat, os.scandir
    looks = {"n": 0, "stepping": False}  # the reader's file-system looks: stat, scandir, open

    def counting(real):
        def look(*args, **kwargs):
            if not looks["stepping"]:  # a step's own looks are not the reader's
                looks["n"] += 1
                if looks["n"] in at and steps:
                    looks["stepping"] = True
                    try:
                        steps.pop(0)()
                    finally:
                        looks["stepping"] = False
            return real(*args, **kwargs)
        return look

    at, steps = set(), []
    monkeypatch.setattr(os, "stat", counting(real_stat))
    monkeypatch.setattr(os, "scandir", counting(real_scandir))
    monkeypatch.setattr(io, "open", counting(io.open))  # pathlib's open: reading a record
    tried = 0
    for stride in (1, 2, 3, 5, 8):
        for k in range(1, 80):
            lake = open_lake(tmp_path / f"lake-{stride}-{k}")
            olds = [lake.write("things", small([7, i])) for i in range(6)]
            other = lake.write("things", small([9]))
            rewrites = [rewrite_steps(lake, old) for old in olds]
            steps[:] = [step for _, some in rewrites for step in some]
            at.clear()
            at.update(range(k, k + len(steps) * stride, stride))
            looks["n"] = 0
            snap = lake.snapshot("things")
            assert not snap.damaged, (stride, k, snap.damaged)
            for old, (new, _) in zip(olds, rewrites):
                assert len({old, new} & set(snap.good)) == 1, (stride, k, snap.good)
            assert other in snap.good
            tried += 1
    assert tried == 5 * 79
