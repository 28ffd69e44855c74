"""A full disk is named, cleaned up after and not retried: a lake write that fails with ENOSPC (or EDQUOT) raises
``DiskFull`` saying "disk full", the file and the space left, with its partial temp files already removed and every
file committed before intact (the catalog's build: tests/lake/test_catalog_atomic.py); a chunk that failed so is not
retried by Prefect."""

from __future__ import annotations

import errno

import pyarrow as pa
import pytest
from prefect.states import Failed

import dialogbench.lake.store as store_module
from dialogbench.run.registry import open_lake
from dialogbench.lake.space import DiskFull, as_disk_full, is_disk_full
from dialogbench.lake.verify import verify
from tasks.stages import retry_unless_disk_full
from tests.disk import fill, small_disk


def small(values: list[int]) -> pa.Table:
    return pa.table({"value": pa.array(values, pa.int64())})


def noise(rows: int) -> pa.Table:
    """Incompressible rows: ``rows`` KiB or so of Parquet."""
    import os

    return pa.table({"blob": [os.urandom(1000).hex() for _ in range(rows)]})


def no_temp_files(root) -> bool:
    return not [p for p in root.rglob("*") if p.name.endswith(".tmp") or ".tmp." in p.name]


@pytest.mark.parametrize("code, why", [(errno.ENOSPC, "no space left on device"),
                                       (errno.EDQUOT, "disk quota exceeded")])
def test_a_write_on_a_full_disk_says_so_and_leaves_no_temp_file(tmp_path, monkeypatch, code, why):
    """Faked: the Parquet writer fails as a full disk makes it fail, after writing part of the file."""
    lake = open_lake(tmp_path / "lake")
    kept = lake.write("things", small([1, 2]), partition={"p": "0"})

    def full(table, where, **kwargs):
        where.write(b"PAR1 part of a file")
        raise OSError(code, "No space left on device" if code == errno.ENOSPC else "Disk quota exceeded")

    monkeypatch.setattr(store_module.pq, "write_table", full)
    with pytest.raises(DiskFull) as raised:
        lake.write("things", small([3]), partition={"p": "1"})
    monkeypatch.undo()
    message = str(raised.value)
    assert message.startswith("disk full: could not write things/p=1/part-") and ".parquet in the lake " in message
    assert f"({why}; " in message and " free of " in message and "on its file system" in message
    assert no_temp_files(lake.root)
    assert lake.read("things").column("value").to_pylist() == [1, 2] and kept.exists() and verify(lake) == []


def test_a_real_full_disk(tmp_path):
    with small_disk(tmp_path / "disk", "512k") as disk:
        lake = open_lake(disk / "lake")
        written = [lake.write("things", small([i]), partition={"p": str(i)}) for i in range(3)]
        with pytest.raises(DiskFull, match=r"^disk full: could not write things/p=big/part-\w+\.parquet in the lake"):
            lake.write("things", noise(2000), partition={"p": "big"})
        assert no_temp_files(lake.root)
        assert sorted(lake.read("things").column("value").to_pylist()) == [0, 1, 2]
        assert all(p.exists() for p in written) and verify(lake) == []
        filler = fill(disk, 8)
        with pytest.raises(DiskFull, match=r"\(no space left on device; \d+\.\d KiB free of 512\.0 KiB"):
            lake.write("things", noise(100), partition={"p": "big"})
        filler.unlink()
        assert lake.write("things", noise(100), partition={"p": "big"}).exists()  # room again: writes go on


def test_a_chunk_that_found_the_disk_full_is_not_retried():
    full = DiskFull("disk full: could not write x")
    assert retry_unless_disk_full(None, None, Failed(data=full)) is False
    wrapped = RuntimeError("the stage failed")
    wrapped.__cause__ = OSError(errno.ENOSPC, "No space left on device")
    assert retry_unless_disk_full(None, None, Failed(data=wrapped)) is False
    assert retry_unless_disk_full(None, None, Failed(data=ConnectionError("endpoint hiccup"))) is True
    assert is_disk_full(RuntimeError('Could not write file "x.wal": No space left on device'))
    assert not is_disk_full(OSError(errno.EACCES, "Permission denied"))


def test_a_full_disk_outside_a_lake_write_is_named_by_its_file(tmp_path):
    error = OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "lake" / "reports" / "report.html"))
    named = as_disk_full(error, tmp_path / "lake")
    assert str(named).startswith("disk full: could not write reports/report.html in the lake ")
    assert as_disk_full(ValueError("no"), tmp_path) is None
