"""``<lake>/catalog.duckdb`` is portable: plain DuckDB (a separate Python process with only ``duckdb``; the installed
package has no ``python -m duckdb``) opens it from the lake's folder, the repository root or anywhere else, after the
lake is copied or moved, and gets the rows the in-memory ``connect(lake)`` gets; a copied catalog reads the files
beside it, never the original lake's, also when a damaged file makes a view name its files one by one."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from dialogbench.run.registry import open_lake
from dialogbench.cli import main
from dialogbench.lake import Lake
from dialogbench.lake.catalog import build_catalog, connect
from tests.conftest import REPO_ROOT, chatbot
from tests.damage import truncate

# what an analyst reads: lake tables, the verdict union, a metric, and failures (which reads computed_cells())
VIEWS = ("seeds", "generations", "judgments", "unieval_judgments", "botchat_unieval", "failures", "runs")

# The query every side runs: a view's rows in a fixed order, as JSON-safe text (plain DuckDB and the in-memory
# connection then compare value for value).
DUMP = """
import duckdb, json, sys

def dump(con, views):
    return {v: [[str(x) for x in row] for row in con.sql(f'select * from "{v}" order by all').fetchall()]
            for v in views}
"""
exec(DUMP)  # defines dump() here too: the in-memory side runs the same query


def plain_duckdb(catalog: str, *, cwd: Path, setup: str = "", views=VIEWS) -> dict:
    """``catalog`` opened by plain DuckDB in a fresh process started in ``cwd`` (no dialogbench on its path)."""
    script = DUMP + f"""
con = duckdb.connect(sys.argv[1], read_only=True)
for statement in {setup!r}.split(';'):
    if statement.strip():
        con.execute(statement)
print(json.dumps(dump(con, sys.argv[2:])))
"""
    done = subprocess.run([sys.executable, "-I", "-c", script, catalog, *views], cwd=cwd, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def in_memory(lake: Lake, views=VIEWS) -> dict:
    with connect(lake) as con:
        return dump(con, views)


@pytest.fixture
def lake_dir(tmp_path: Path) -> Path:
    """Named as the CLI's default, so ``dialogbench catalog`` without --lake builds it from ``tmp_path``."""
    return tmp_path / "data_lake"


@pytest.fixture
def lake(make_config, pipeline) -> Lake:
    """A run on two seeds: bot-b's backend fails every other reply, so there are failures beside the
    generations and verdicts; its catalog built as a run builds it (the lake's absolute path)."""
    config = make_config(limit=2, n=[4], models=[chatbot("bot-a"), chatbot("bot-b", ["b speaks", "!error:down"])])
    pipeline(config, "run-1", record=True)
    lake = open_lake(Path(config.lake).resolve())
    assert build_catalog(lake)
    return lake


def test_the_small_lake_has_rows_in_every_view_checked(lake):
    counts = {v: len(rows) for v, rows in in_memory(lake).items()}
    assert all(counts.values()), counts


@pytest.mark.parametrize("built_by", ["run", "cli"])
def test_the_catalog_reads_the_lakes_rows_from_any_directory(lake, tmp_path, monkeypatch, built_by):
    """Built by a run (the lake's absolute path) or by ``dialogbench catalog`` run in the lake's parent."""
    if built_by == "cli":
        monkeypatch.chdir(tmp_path)
        assert main(["catalog"]) == 0
    expected = in_memory(lake)
    catalog = lake.root / "catalog.duckdb"
    assert plain_duckdb("catalog.duckdb", cwd=lake.root) == expected                        # cd data_lake
    assert plain_duckdb(os.path.relpath(catalog, REPO_ROOT), cwd=REPO_ROOT) == expected     # the repository root
    assert plain_duckdb("data_lake/catalog.duckdb", cwd=tmp_path) == expected               # the lake's parent
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert plain_duckdb(str(catalog), cwd=elsewhere) == expected                             # any directory


def test_a_relative_temp_directory_still_finds_the_lake(lake, tmp_path):
    """The DuckDB CLI (1.5.6 at least) leaves ``temp_directory`` relative when the catalog's path is relative."""
    expected = in_memory(lake, ("generations",))
    assert plain_duckdb("catalog.duckdb", cwd=lake.root, setup="SET temp_directory = 'catalog.duckdb.tmp'",
                        views=("generations",)) == expected
    assert plain_duckdb("data_lake/catalog.duckdb", cwd=tmp_path, views=("generations",),
                        setup="SET temp_directory = 'data_lake/catalog.duckdb.tmp'") == expected


def test_a_moved_lake_reads_its_own_files(lake, tmp_path):
    expected = in_memory(lake)
    moved = tmp_path / "moved" / "lake-copy"
    shutil.copytree(lake.root, moved)
    shutil.rmtree(lake.root)
    assert plain_duckdb("catalog.duckdb", cwd=moved) == expected
    assert plain_duckdb(str(moved / "catalog.duckdb"), cwd=REPO_ROOT) == expected


def test_a_copied_catalog_never_reads_the_original_lake(lake, tmp_path, make_config, pipeline):
    """Copy lake A to A2, then a second run adds files to A and one of A's generations files goes: A2's catalog
    still reads exactly A2's files (a catalog holding A's paths would see the change)."""
    views = ("generations", "judgments", "runs")  # (seeds: every run extracts all 547)
    before = in_memory(lake, views)
    copy = tmp_path / "a2"
    shutil.copytree(lake.root, copy)
    pipeline(make_config(limit=3, n=[4]), "run-2", record=True)
    gone = lake.files("generations")[0]
    gone.unlink()
    build_catalog(lake)
    changed = in_memory(lake, views)
    assert all(changed[v] != before[v] for v in views)  # the change is visible in A...
    assert plain_duckdb("catalog.duckdb", cwd=lake.root, views=views) == changed
    assert plain_duckdb("catalog.duckdb", cwd=copy, views=views) == before  # ...and not in A2's copied catalog
    assert in_memory(open_lake(copy), views) == before


def test_a_catalog_over_damaged_files_is_portable(lake, tmp_path, caplog):
    """A damaged file makes the views name the good files one by one (not a glob): those names are relative too."""
    damaged = lake.files("generations")[0]
    truncate(damaged)
    build_catalog(lake)
    expected = in_memory(lake)
    assert str(damaged.relative_to(lake.root)) in caplog.text  # left out, and named
    with duckdb.connect(str(lake.root / "catalog.duckdb"), read_only=True) as con:
        (sql,) = con.execute("select sql from duckdb_views() where view_name = 'generations'").fetchone()
    assert "read_parquet(list_value((lake_root() || 'generations/" in sql  # DuckDB stores [a, b] so
    moved = tmp_path / "moved"
    shutil.copytree(lake.root, moved)
    shutil.rmtree(lake.root)
    assert plain_duckdb("catalog.duckdb", cwd=moved) == expected
    assert plain_duckdb(str(moved / "catalog.duckdb"), cwd=REPO_ROOT) == expected


def catalog_sql(path: Path) -> dict[str, str]:
    with duckdb.connect(str(path), read_only=True) as con:
        views = con.sql("select view_name, sql from duckdb_views() where not internal").fetchall()
        macros = con.sql("select function_name, macro_definition from duckdb_functions() "
                         "where function_type = 'macro' and not internal").fetchall()
    return dict(views + macros)


def test_the_cli_and_a_run_write_the_same_portable_file(lake, tmp_path, monkeypatch, capsys):
    """A run gives the lake's absolute path, ``dialogbench catalog`` the cwd-relative default: same views, and none
    names a path of this machine (every file reference starts at lake_root())."""
    by_run = catalog_sql(lake.root / "catalog.duckdb")
    monkeypatch.chdir(tmp_path)
    assert main(["catalog"]) == 0
    assert capsys.readouterr().out.strip() == "data_lake/catalog.duckdb"
    by_cli = catalog_sql(lake.root / "catalog.duckdb")
    assert by_cli == by_run
    text = "\n".join(by_cli.values())
    assert str(tmp_path) not in text and "'data_lake/" not in text
    references = re.findall(r"read_parquet\((?:list_value\()?(\S+ \S+ \S+)", text)
    assert references and all(ref.startswith("(lake_root() || '") for ref in references), references


def test_attached_from_another_session_it_says_how_to_set_the_root(lake):
    """An in-memory session that ATTACHes the catalog has no catalog file of its own to start from: it is told
    to open the catalog itself or set the lake_root variable, and reads the lake once it is set."""
    catalog = str(lake.root / "catalog.duckdb")
    with duckdb.connect() as con:
        con.execute("ATTACH ? AS cat (READ_ONLY)", [catalog])
        with pytest.raises(duckdb.Error, match=r"open <lake>/catalog\.duckdb itself, or SET VARIABLE lake_root"):
            con.sql("select count(*) from cat.generations").fetchall()
        con.execute("SET VARIABLE lake_root = ?", [str(lake.root)])  # without the trailing slash
        assert con.sql("select count(*) from cat.generations").fetchall() == [(len(in_memory(lake)["generations"]),)]


def test_the_lake_root_variable_overrides_a_changed_temp_directory(lake, tmp_path):
    expected = in_memory(lake, ("generations",))
    setup = f"SET temp_directory = '{tmp_path / 'spill'}'; SET VARIABLE lake_root = '{lake.root}/'"
    assert plain_duckdb(str(lake.root / "catalog.duckdb"), cwd=tmp_path, setup=setup,
                        views=("generations",)) == expected


def test_in_memory_connections_keep_literal_paths(lake):
    """The CLI query path, the report and the stages read the files by their paths, with no lake_root() macro."""
    with connect(lake, snapshot=False) as con:
        (sql,) = con.execute("select sql from duckdb_views() where view_name = 'generations'").fetchone()
    if lake.tables_kind() == "delta":  # each file of the table's version, by its path
        assert f"read_parquet(list_value('{lake.root}/generations/" in sql and "lake_root" not in sql
    else:
        assert f"read_parquet('{lake.root}/generations/**/*.parquet'" in sql and "lake_root" not in sql


def test_path_sql_quotes_and_writes_relative_to_the_root_expression(tmp_path):
    lake = open_lake(tmp_path / "o'brien")
    file = lake.root / "generations" / "model=a" / "part-1.parquet"
    assert lake.path_sql(file) == "'" + str(file).replace("'", "''") + "'"
    portable = lake.rooted("lake_root()")
    assert portable.path_sql(file) == "lake_root() || 'generations/model=a/part-1.parquet'"
    assert portable.pinned().path_sql(portable.glob("seeds")) == "lake_root() || 'seeds/**/*.parquet'"
