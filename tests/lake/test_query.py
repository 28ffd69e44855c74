"""The ad-hoc query path is read-only: each attack that once worked through ``dialogbench query`` (write a file
anywhere, replace a lake file, attach the catalog and drop a view, read /etc) is refused, in process and
through the real CLI; reads of every kind still work; ``dialogbench export`` writes only where it is told."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from dialogbench.cli import main
from dialogbench.lake import Lake
from dialogbench.lake.catalog import build_catalog
from dialogbench.lake.query import QueryRefused, export, query, read_only_connection
from tests import stage_runner as stages

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def lake(make_config) -> Lake:
    """A lake with seeds (one real Parquet file to attack) and a saved catalog."""
    config = make_config(limit=2, n=[4])
    stages.extract_seeds(config)
    lake = Lake(config.lake)
    build_catalog(lake)
    return lake


def attacks(lake: Lake, outside: Path) -> dict[str, str]:
    seeds_file = lake.files("seeds")[0]
    return {
        "write a file anywhere": f"COPY (SELECT 'x') TO '{outside / 'out.csv'}'",
        "replace a lake file": f"COPY (SELECT 1 AS seed_id) TO '{seeds_file}' (FORMAT parquet)",
        "attach the catalog and drop a view": f"ATTACH '{lake.root / 'catalog.duckdb'}' AS cat; DROP VIEW cat.seeds",
        "read a file outside the lake": "SELECT * FROM read_text('/etc/hostname')",
        "unlock the settings": "SET enable_external_access = true",
        "load an extension": "LOAD httpfs",
        "hide a write behind a read": "SELECT 1; CREATE TABLE t AS SELECT 1",
    }


def lake_state(lake: Lake) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(lake.root.rglob("*")) if p.is_file()}


def test_every_attack_is_refused_and_nothing_changes(lake, tmp_path):
    before = lake_state(lake)
    with read_only_connection(lake) as con:
        for name, sql in attacks(lake, tmp_path).items():
            with pytest.raises((QueryRefused, duckdb.Error)):
                query(con, sql)
    assert lake_state(lake) == before, "the lake changed"
    assert not (tmp_path / "out.csv").exists()
    with duckdb.connect(str(lake.root / "catalog.duckdb"), read_only=True) as plain:  # still usable by plain DuckDB
        assert plain.sql("SELECT count(*) FROM seeds").fetchall()[0] == (547,)


def test_reads_of_every_kind_still_work(lake):
    with read_only_connection(lake) as con:
        assert query(con, "SELECT count(*) FROM seeds").fetchall()[0] == (547,)
        assert query(con, "FROM seeds SELECT count(*)").fetchall()[0] == (547,)
        assert query(con, "WITH s AS (SELECT * FROM seeds) SELECT count(*) FROM s").fetchall()[0] == (547,)
        for sql in ("DESCRIBE seeds", "SHOW TABLES", "SUMMARIZE seeds", "EXPLAIN SELECT * FROM seeds",
                    "PRAGMA show_tables"):
            assert query(con, sql).fetchall(), sql
        assert query(con, f"SELECT count(*) FROM read_parquet('{lake.files('seeds')[0]}')").fetchall()[0][0] == 547


@pytest.mark.parametrize("name", ["write a file anywhere", "replace a lake file", "attach the catalog and drop a view",
                                  "read a file outside the lake"])
def test_the_cli_refuses_each_attack_with_a_clear_error(lake, tmp_path, name):
    """Through the real command, as the issue's repro ran it: exit 2, one line naming why, no traceback."""
    before = lake_state(lake)
    done = subprocess.run([sys.executable, "-m", "dialogbench.cli", "query", attacks(lake, tmp_path)[name],
                           "--lake", str(lake.root)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: ") and "Traceback" not in done.stderr
    assert ("only reads the lake" in done.stderr) or ("Permission Error" in done.stderr)
    assert lake_state(lake) == before and not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize("suffix", ["parquet", "csv", "json"])
def test_export_writes_the_result_where_it_is_told(lake, tmp_path, suffix, capsys):
    out = tmp_path / "exports" / f"seeds.{suffix}"
    sql = "SELECT seed_id, n_utterances FROM seeds WHERE seed_id IN ('MT-1', 'MT-4') ORDER BY line"
    assert main(["export", sql, "--out", str(out), "--lake", str(lake.root)]) == 0
    assert "2 row(s) written" in capsys.readouterr().out
    if suffix == "parquet":
        assert pq.read_table(out).to_pylist() == [{"seed_id": "MT-1", "n_utterances": 4},
                                                  {"seed_id": "MT-4", "n_utterances": 7}]
    elif suffix == "csv":
        assert out.read_text().splitlines() == ['"seed_id","n_utterances"', '"MT-1",4', '"MT-4",7']
    else:
        assert [json.loads(line) for line in out.read_text().splitlines()][1] == {"seed_id": "MT-4", "n_utterances": 7}
    assert not list(out.parent.glob(".*.tmp"))


def test_export_refuses_the_lake_and_writing_sql(lake, tmp_path):
    before = lake_state(lake)
    with pytest.raises(QueryRefused, match="inside the lake"):
        export(lake, "SELECT 1", lake.root / "seeds" / "x.parquet")
    with pytest.raises(QueryRefused, match="is COPY"):
        export(lake, f"COPY (SELECT 1) TO '{tmp_path / 'y.csv'}'", tmp_path / "z.csv")
    with pytest.raises(QueryRefused, match="--format"):
        export(lake, "SELECT 1", tmp_path / "z.txt")
    assert lake_state(lake) == before and not (tmp_path / "y.csv").exists()
