"""The catalog is built whole into a temp file and renamed into place: a garbage or truncated ``catalog.duckdb`` (even
with a stale write-ahead log beside it) is simply replaced, by a run and by ``dialogbench catalog``; one held open by a
reader is replaced too (the reader keeps reading the old one); no temp file stays, also when the disk is full (the
old catalog is kept); and the file is written in the
storage format DuckDB 1.4 reads (``STORAGE_VERSION``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from dialogbench.run.registry import open_lake
from dialogbench.lake import Lake
from dialogbench.lake.catalog import CATALOG, STORAGE_VERSION, build_catalog
from dialogbench.lake.space import DiskFull
from tests.conftest import chatbot
from tests.damage import truncate
from tests.disk import fill, small_disk
from tests.e2e.conftest import run_cli


@pytest.fixture
def lake(make_config, pipeline) -> Lake:
    config = make_config(limit=2, n=[4], models=[chatbot("bot-a"), chatbot("bot-b")])
    pipeline(config, "run-1", record=True)
    return open_lake(Path(config.lake).resolve())


def generations(catalog: Path) -> int:
    """Opened as an analyst opens it: a fresh process with plain DuckDB, from the lake's folder."""
    script = "import duckdb; print(duckdb.connect('catalog.duckdb', read_only=True).sql('from generations').shape[0])"
    done = subprocess.run([sys.executable, "-I", "-c", script], cwd=catalog.parent, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


def leftovers(lake: Lake) -> list[str]:
    return sorted(p.name for p in lake.root.iterdir() if p.name.startswith(f".{CATALOG}") or p.suffix == ".wal")


@pytest.mark.parametrize("damage", ["garbage", "truncated", "stale wal"])
def test_a_damaged_catalog_is_replaced(lake, damage):
    catalog = build_catalog(lake)
    rows = generations(catalog)
    if damage == "garbage":
        catalog.write_bytes(b"this is not a DuckDB file\n" * 100)
    elif damage == "truncated":
        truncate(catalog, 0.3)
    else:  # a write-ahead log of another database beside it: DuckDB would refuse the new file with it
        other = lake.root / "other.duckdb"
        with duckdb.connect(str(other)) as con:
            con.execute("PRAGMA disable_checkpoint_on_shutdown")
            con.execute("CREATE TABLE t AS SELECT 1")
        Path(f"{other}.wal").rename(f"{catalog}.wal")
        other.unlink()
    with pytest.raises(duckdb.Error):
        duckdb.connect(str(catalog), read_only=True).sql("from generations").fetchall()
    assert build_catalog(lake) == catalog
    assert generations(catalog) == rows and leftovers(lake) == []


def test_the_cli_rebuilds_a_garbage_catalog(lake, tmp_path):
    catalog = build_catalog(lake)
    rows = generations(catalog)
    catalog.write_bytes(b"\0garbage")
    done = run_cli(["catalog", "--lake", str(lake.root)], tmp_path, timeout=180)
    assert done.returncode == 0 and done.stdout.strip() == str(catalog), done.stderr[-2000:]
    assert generations(catalog) == rows


def test_a_catalog_held_open_by_a_reader_is_replaced(lake, make_config, pipeline):
    catalog = build_catalog(lake)
    before = generations(catalog)
    reader = subprocess.Popen([sys.executable, "-I", "-c", (
        "import duckdb, sys\n"
        "con = duckdb.connect('catalog.duckdb', read_only=True)\n"
        "print(con.sql('from generations').shape[0], flush=True)\n"
        "sys.stdin.readline()\n"
        "print(con.sql('from generations').shape[0], flush=True)\n")],
        cwd=lake.root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert int(reader.stdout.readline()) == before  # it holds the catalog open (DuckDB locks the file)
        pipeline(make_config(limit=3, n=[4], models=[chatbot("bot-a"), chatbot("bot-b")]), "run-2", record=True)
        assert build_catalog(lake) == catalog  # not blocked by the reader
        after = generations(catalog)
        assert after > before  # the new catalog reads the new files
        reader.stdin.write("\n")
        reader.stdin.flush()
        assert int(reader.stdout.readline()) >= before  # the reader still reads through the file it opened
    finally:
        reader.kill()
        reader.wait()
    assert leftovers(lake) == []


def test_the_catalog_is_written_for_duckdb_1_4_readers(lake):
    catalog = build_catalog(lake)
    with duckdb.connect(str(catalog), read_only=True) as con:
        (tags,) = con.execute("select tags from duckdb_databases() where database_name = 'catalog'").fetchone()
    assert tags["storage_version"] == f"{STORAGE_VERSION}+"
    with open(catalog, "rb") as handle:  # DuckDB's header: magic, then the storage version number: 1.4's is 67
        header = handle.read(20)  # (2.0 by default writes one that no 1.x reads)
    assert header[8:12] == b"DUCK" and int.from_bytes(header[12:20], "little") == 67


def test_an_unchanged_catalog_is_kept_and_a_changed_one_built_again(lake):
    """A catalog built from what the lake holds now is not written again (a rerun that adds files to tables that had
    some rebuilds nothing); a table's first files, or a catalog that does not open, make a new one."""
    catalog = build_catalog(lake)
    built = catalog.stat().st_ino
    assert build_catalog(lake) == catalog and catalog.stat().st_ino == built  # the same file, untouched
    lake.write("gameeval_games", pa.table({"cell_key": ["k"], "end_reason": ["win"]}))  # the table had no file
    assert build_catalog(lake) == catalog and catalog.stat().st_ino != built
    rebuilt = catalog.stat().st_ino
    with duckdb.connect(str(catalog)) as con:  # a view replaced by hand
        con.execute("create or replace view runs as select 1 as run_id")
    assert build_catalog(lake) == catalog and catalog.stat().st_ino != rebuilt
    with duckdb.connect(str(catalog), read_only=True) as con:
        assert con.execute("select count(distinct run_id) from runs").fetchone() == (1,)
        assert con.execute("select count(*) from runs where run_id = '1'").fetchone() == (0,)
    rebuilt = catalog.stat().st_ino
    catalog.write_bytes(catalog.read_bytes()[:4096])  # damaged: it does not open
    assert build_catalog(lake) == catalog and catalog.stat().st_ino != rebuilt
    assert generations(catalog) > 0


def test_the_catalog_on_a_full_disk_says_so_and_keeps_the_old_one(tmp_path):
    with small_disk(tmp_path / "disk", "4m") as disk:
        lake = open_lake(disk / "lake")
        lake.write("generations", pa.table({"value": [1]}))
        old = build_catalog(lake).read_bytes()
        lake.write("seeds", pa.table({"value": [1]}))  # a table's first files: the catalog is built again
        fill(disk, 16)
        with pytest.raises(DiskFull, match=rf"^disk full: could not write {CATALOG} in the lake"):
            build_catalog(lake)
        assert (lake.root / CATALOG).read_bytes() == old and leftovers(lake) == []
