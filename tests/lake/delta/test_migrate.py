"""A folder lake copied into the Delta store: the counts match, a second run (or one after a partial copy) adds
nothing, the partitioning follows the folders, a doubled cell in the source is an error naming its table, and the
source's files keep every byte and mtime."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pyarrow as pa
import pytest

from dialogbench.lake.delta import DeltaCellStore
from dialogbench.lake.delta.migrate import MigrationMismatch, migrate, partition_columns, source_tables
from dialogbench.lake.store import Lake

KEYS = {"generations": ["model", "seed_id", "n"], "verdicts": ["judge", "seed_id"]}


def generations(model: str, seeds: range) -> pa.Table:
    return pa.table({"model": [model] * len(seeds) * 2, "seed_id": [f"s{i}" for i in seeds for _ in (1, 2)],
                     "n": pa.array([n for _ in seeds for n in (1, 2)], pa.int64()),
                     "text": [f"{model} says {i}/{n}" for i in seeds for n in (1, 2)]})


def folder_lake(root: Path) -> Lake:
    """Two tables: ``generations`` partitioned by model (three files), ``verdicts`` unpartitioned, and the folders
    a lake has beside its tables (``_state``, ``raw``, ``reports``)."""
    lake = Lake(root)
    lake.write("generations", generations("m", range(0, 5)), partition={"model": "m"})
    lake.write("generations", generations("m", range(5, 8)), partition={"model": "m"})
    lake.write("generations", generations("other", range(0, 4)), partition={"model": "other"})
    lake.write("verdicts", pa.table({"judge": ["j"] * 3, "seed_id": ["s0", "s1", "s2"],
                                     "score": pa.array([1.0, 0.5, 0.0])}))
    for folder in ("_state", "raw", "reports"):
        (root / folder).mkdir()
    (root / "raw" / "seeds.jsonl").write_text("{}\n")
    return lake


def fingerprint(root: Path) -> dict[str, tuple[str, int, int]]:
    """Every file under ``root``: sha256, size and mtime."""
    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            st = path.stat()
            found[str(path.relative_to(root))] = (hashlib.sha256(path.read_bytes()).hexdigest(), st.st_size,
                                                  st.st_mtime_ns)
    return found


def test_migrate_copies_each_table_once_and_leaves_the_source_as_it_was(tmp_path, location):
    source = folder_lake(tmp_path / "folder")
    assert source_tables(source) == ["generations", "verdicts"]
    assert partition_columns(source, "generations") == ["model"] and partition_columns(source, "verdicts") == []
    before = fingerprint(source.root)
    target = DeltaCellStore(location)

    assert migrate(source, target, keys=KEYS) == {"generations": (24, 24), "verdicts": (3, 3)}
    versions = target.snapshot()
    assert migrate(source, target, keys=KEYS) == {"generations": (24, 24), "verdicts": (3, 3)}
    assert target.snapshot() == versions  # the second run committed nothing
    assert fingerprint(source.root) == before
    copied = target.read("generations")
    assert sorted(copied.to_pylist(), key=str) == sorted(source.read("generations").to_pylist(), key=str)
    assert all("/model=" in f for f in target.files("generations"))  # partitioned as the folders were


def test_migrate_after_a_partial_copy_adds_only_the_rest(tmp_path):
    source = folder_lake(tmp_path / "folder")
    target = DeltaCellStore(tmp_path / "delta")
    target.insert_missing("generations", source.read("generations").slice(0, 11), keys=KEYS["generations"],
                          partition_by=["model"])
    assert migrate(source, target, keys=KEYS) == {"generations": (24, 24), "verdicts": (3, 3)}
    inserted = [c["operationMetrics"]["num_target_rows_inserted"] for c in target.history("generations")
                if c["operation"] == "MERGE"]
    assert sorted(inserted) == [11, 13]


def test_a_doubled_cell_in_the_source_is_an_error_naming_the_table(tmp_path):
    source = folder_lake(tmp_path / "folder")
    source.write("verdicts", pa.table({"judge": ["j"], "seed_id": ["s1"], "score": pa.array([0.25])}))
    before = fingerprint(source.root)
    with pytest.raises(MigrationMismatch, match=r"/verdicts: 3 rows after the copy, the source .*verdicts has 4"):
        migrate(source, DeltaCellStore(tmp_path / "delta"), keys=KEYS)
    assert fingerprint(source.root) == before


def test_every_table_needs_its_key_before_anything_is_copied(tmp_path):
    source = folder_lake(tmp_path / "folder")
    target = DeltaCellStore(tmp_path / "delta")
    with pytest.raises(ValueError, match="no cell key given for verdicts"):
        migrate(source, target, keys={"generations": KEYS["generations"]})
    with pytest.raises(ValueError, match="no such table in .*: typo"):
        migrate(source, target, keys={**KEYS, "typo": ["x"]})
    assert target.tables() == [] and not os.path.exists(tmp_path / "delta")
