"""No record can brick or subvert the lake: a record is input, checked field by field (``manifest.load``). A bad one
(a ``supersedes`` or ``tmp`` reaching out of its folder, wrong types, a ``file`` or ``table`` that is not its own,
not JSON, a link) is damage: reads leave its file out and keep working, ``verify`` and the run's start name it
(the field and why) and quarantine it with its file, and nothing outside the record's folder is touched."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pyarrow as pa
import pytest

from dialogbench.run.registry import open_lake
from dialogbench.lake import Lake, manifest
from dialogbench.lake.catalog import connect
from dialogbench.lake.manifest import BadRecord
from dialogbench.lake.quarantine import notes
from dialogbench.lake.repair import repair
from dialogbench.lake.verify import quick_check, verify


def small(values: list[int]) -> pa.Table:
    return pa.table({"value": pa.array(values, pa.int64())})


def edit(record: dict, **changes) -> dict:
    return {**record, **changes}


# Each: a change to a good record, and the field its damage line names.
BAD = {
    "supersedes a path up and out": (lambda r: edit(r, supersedes=["../../runs/x.parquet"]), "supersedes"),
    "supersedes a folder's file": (lambda r: edit(r, supersedes=["p=0/part-a.parquet"]), "supersedes"),
    "supersedes '..'": (lambda r: edit(r, supersedes=[".."]), "supersedes"),
    "supersedes with a backslash": (lambda r: edit(r, supersedes=["..\\..\\x.parquet"]), "supersedes"),
    "supersedes with a NUL": (lambda r: edit(r, supersedes=["x.parquet\x00.txt"]), "supersedes"),
    "supersedes a hidden name": (lambda r: edit(r, supersedes=[".x.parquet.json"]), "supersedes"),
    "supersedes a non-parquet name": (lambda r: edit(r, supersedes=["lake.json"]), "supersedes"),
    "supersedes itself": (lambda r: edit(r, supersedes=[r["file"]]), "supersedes"),
    "supersedes not a list": (lambda r: edit(r, supersedes="x.parquet"), "supersedes"),
    "supersedes a number": (lambda r: edit(r, supersedes=[3]), "supersedes"),
    "tmp out of the folder": (lambda r: edit(r, tmp="../../lake.json"), "tmp"),
    "tmp another file's": (lambda r: edit(r, tmp=".part-other-0123abcd.parquet.tmp"), "tmp"),
    "rows a string": (lambda r: edit(r, rows="3"), "rows"),
    "rows a bool": (lambda r: edit(r, rows=True), "rows"),
    "size negative": (lambda r: edit(r, size=-1), "size"),
    "size a float": (lambda r: edit(r, size=1.5), "size"),
    "mtime_ns null": (lambda r: edit(r, mtime_ns=None), "mtime_ns"),
    "sha256 short": (lambda r: edit(r, sha256="abc"), "sha256"),
    "sha256 not hex": (lambda r: edit(r, sha256="z" * 64), "sha256"),
    "file naming another file": (lambda r: edit(r, file="part-other.parquet"), "file"),
    "file a path": (lambda r: edit(r, file="../" + r["file"]), "file"),
    "table another table": (lambda r: edit(r, table="runs"), "table"),
    "a missing field": (lambda r: {k: v for k, v in r.items() if k != "sha256"}, "sha256"),
    "an unknown field": (lambda r: edit(r, extra=1), "extra"),
    "a JSON list": (lambda r: [r], "record"),
    "not JSON": (lambda r: "{not json", "record"),
    "JSON nested too deep": (lambda r: "[" * 30000 + "]" * 30000, "record"),
    "larger than a record is": (lambda r: edit(r, file="x" * 70000), "record"),
}


def plant(record_path: Path, change) -> None:
    good = json.loads(record_path.read_text())
    bad = change(good)
    record_path.write_text(bad if isinstance(bad, str) else json.dumps(bad))


@pytest.fixture
def lake(tmp_path) -> Lake:
    """Two files of table ``things`` (one per partition) and a sentinel file outside the table's folder."""
    lake = open_lake(tmp_path / "lake")
    lake.write("things", small([1, 2]), partition={"p": "0"})
    lake.write("things", small([3]), partition={"p": "1"})
    (tmp_path / "lake" / "runs").mkdir()
    (tmp_path / "lake" / "runs" / "x.parquet").write_bytes(b"not the record's to remove")
    return lake


def damaged(found: list) -> list:
    """What verify quarantined (the sentinel has no record: named as not the lake's, never moved)."""
    return [d for d in found if d.problem != "unrecorded"]


def _outside(tmp_path: Path) -> dict[Path, bytes]:
    """Every file outside ``things`` (the sentinel, the lake's other files), by content."""
    return {p: p.read_bytes() for p in tmp_path.rglob("*")
            if p.is_file() and "things" not in p.parts and "_quarantine" not in p.parts}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_a_bad_record_is_damage_named_and_quarantined_touching_nothing_outside(lake, tmp_path, kind, caplog):
    change, field = BAD[kind]
    target = lake.files("things")[0]
    plant(manifest.record_path(target), change)
    before = _outside(tmp_path)

    with caplog.at_level(logging.WARNING, logger="dialogbench.lake"):
        assert sorted(lake.read("things").column("value").to_pylist()) == [3]  # its file is left out; no error
    assert f"{target.relative_to(lake.root)}: bad record" in caplog.text
    with connect(lake) as con:  # every view is created over a lake holding it
        assert con.sql("select count(*) from generations").fetchall() == [(0,)]
    assert repair(lake, dry_run=False) is not None  # repair neither fails nor follows it

    (damage,) = damaged(verify(lake))
    assert (damage.path, damage.problem) == (target, "bad record")
    assert damage.detail.startswith(f"{manifest.record_path(target).name}: {field}: "), damage.detail
    assert not target.exists() and not manifest.record_path(target).exists()
    (moved,) = (lake.root / "_quarantine").glob(f"*/{target.relative_to(lake.root)}")
    assert manifest.record_path(moved).exists()  # the record went with its file
    assert [n["problem"] for n in notes(lake)] == ["bad record"]
    assert _outside(tmp_path) == before  # nothing outside the record's folder was touched (or removed)
    assert damaged(verify(lake)) == [] and sorted(lake.read("things").column("value").to_pylist()) == [3]


def test_the_run_start_check_quarantines_a_bad_record_too(lake, tmp_path):
    target = lake.files("things")[1]
    plant(manifest.record_path(target), BAD["supersedes a path up and out"][0])
    (damage,) = quick_check(lake)
    assert damage.problem == "bad record" and "supersedes: '../../runs/x.parquet'" in damage.detail
    assert "it holds '/'" in damage.detail
    assert (tmp_path / "lake" / "runs" / "x.parquet").exists()


def test_a_record_that_is_a_link_is_damage_and_its_target_untouched(lake, tmp_path):
    target = lake.files("things")[0]
    record = manifest.record_path(target)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(record.read_text())  # a record that would pass, but reached through a link
    record.unlink()
    record.symlink_to(elsewhere)
    content = elsewhere.read_bytes()
    (damage,) = damaged(verify(lake))
    assert (damage.path, damage.problem) == (target, "bad record") and "symbolic link" in damage.detail
    assert elsewhere.read_bytes() == content
    (moved,) = (lake.root / "_quarantine").glob(f"*/{record.relative_to(lake.root)}")
    assert moved.is_symlink()  # the link was moved, not what it points at


def test_a_data_file_that_is_a_link_is_damage_never_read(lake, tmp_path):
    target = lake.files("things")[0]
    outside = tmp_path / "outside.parquet"
    os.replace(target, outside)
    target.symlink_to(outside)  # its record still matches the bytes behind the link
    content = outside.read_bytes()
    assert sorted(lake.read("things").column("value").to_pylist()) == [3]
    (damage,) = quick_check(lake)
    assert (damage.path, damage.problem) == (target, "link")
    assert outside.read_bytes() == content and not target.is_symlink()


def test_the_lake_never_writes_a_record_it_would_refuse(lake):
    with pytest.raises(BadRecord, match="supersedes"):
        lake.write("things", small([9]), supersedes=("../x.parquet",))
    assert not list(lake.root.rglob("*.tmp"))


@pytest.mark.parametrize("name", ["../x.parquet", "a/b.parquet", "..", ".hidden.parquet", "x.json", "x\\y.parquet",
                                  "x\x00.parquet", "", 7, "x" * 300 + ".parquet"])
def test_sibling_accepts_only_a_plain_parquet_name(tmp_path, name):
    with pytest.raises(BadRecord):
        manifest.sibling(tmp_path / "part-a.parquet", name)


def test_sibling_and_the_writers_temp_name(tmp_path):
    data = tmp_path / "t" / "part-a.parquet"
    assert manifest.sibling(data, "part-b.parquet") == tmp_path / "t" / "part-b.parquet"
    temp = manifest.temp_name(data.name)
    assert manifest.sibling(data, temp, "tmp") == data.parent / temp
    assert manifest.final_name(temp) == "part-a.parquet" and manifest.final_name(".x.parquet.tmp") is None
