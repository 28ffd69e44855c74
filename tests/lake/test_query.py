"""The ad-hoc query path (``dialogbench query`` / ``export``) can never write, never hang, never crash on a race:

- its connection has no file access at all (the views read files opened beforehand), so no statement, whatever it
  nests, writes a byte anywhere or reads a file outside the lake; and one statement that only reads is all it runs
  (and it runs in a child process that may write no file: ``test_query_confined.py``);
- a reader racing the lake's own rewrites (``repair``, a quarantine) reads the old files or the new ones, never fails;
- a query has a time and a memory limit, and its result streams;
- control characters in the lake's text are printed escaped, and kept raw in exports;
- a folder that is not a lake is refused.
Each attack is tried in process and through the CLI, whose answer is exit 2 with one ``error:`` line.

What is shared, and why (the suite is CPU-bound): the tests that only read a lake of seeds read one lake, made once for
this module (``shared_lake``: seed extraction and a catalog, ~1.5 s a test before); each still checks that the lake's
files are as they were where it did, and the one test that adds a folder to it removes it again. The CLI's answers
come from ``dialogbench.cli.main`` run in this process (``in_process``: the same parser, command, confined child and
error handling, the child forked from here, what both write read from the file descriptors) instead of a Python
start and imports per call (~1 s of CPU each); a real ``python -m dialogbench.cli`` process (``cli``) is kept where
only a process of its own shows it: the forgery's refusals (exit code and stderr of the real console path, no log
line or warning added), the table a terminal is shown, a large result's peak memory, and the commands that race the
readers. ``lake`` stays a fresh lake per test for ``test_query_confined``, which plants links around it."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import datetime as dt
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

import duckdb
import psutil
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from dialogbench.run.registry import load_config, open_lake
from dialogbench.run import registry
from dialogbench.cli import main
from dialogbench.lake import Lake, manifest
from dialogbench.lake.catalog import build_catalog, connect, models
from dialogbench.lake.limits import LimitExceeded, Limits
from dialogbench.lake.quarantine import notes
from dialogbench.lake.query import QueryRefused, export, query, read_only_connection, run
from dialogbench.lake.statements import check_reads_only
from dialogbench.lake.version import ensure_current
from tests import stage_runner as stages
from tests.conftest import REPO_ROOT, config_dict

REPO = Path(__file__).resolve().parents[2]
T0 = dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc)


def seeds_lake(config) -> Lake:
    """The lake of ``config`` with seeds (one real Parquet file to attack) and a saved catalog."""
    stages.extract_seeds(config)
    lake = open_lake(config.lake)
    build_catalog(lake)
    return lake


@pytest.fixture
def lake(make_config) -> Lake:
    """A fresh ``seeds_lake`` for each test (``test_query_confined`` plants links to its files)."""
    return seeds_lake(make_config(limit=2, n=[4]))


@pytest.fixture(scope="module")
def shared_lake(tmp_path_factory) -> Lake:
    """``lake``'s lake (the same config, as ``make_config`` writes it), made once for this module's tests, which only
    read it: building it for each cost ~1.5 s and checked nothing more."""
    folder = tmp_path_factory.mktemp("query-lake")
    path = folder / "config" / "config.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(config_dict(folder / "lake", limit=2, n=[4]), sort_keys=False))
    return seeds_lake(load_config(path, None, root=REPO_ROOT))


@pytest.fixture
def workdir(tmp_path, monkeypatch) -> Path:
    """The working directory of the query (DuckDB's default temp folder is under it), in process and for the CLI."""
    path = tmp_path / "workdir"
    path.mkdir()
    monkeypatch.chdir(path)
    return path


def cli(args: list[str], cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess:
    """``python -m dialogbench.cli`` of this checkout, run in ``cwd``."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "dialogbench.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def in_process(args: list[str], capfd) -> subprocess.CompletedProcess:
    """``dialogbench.cli.main(args)`` run in this process, answered as ``cli`` answers: the exit code it returns, and
    what it and the query's child (forked from here, confined as the CLI's is) wrote to stdout and stderr, read from
    the file descriptors (``capfd``: the text a terminal would get, so the query's child writes there too). The
    parsing, the command and its error handling are the CLI's; a Python start and its imports (~1 s of CPU) are
    saved. Run in the test's working directory (``workdir``), as ``cli`` runs there."""
    capfd.readouterr()
    code = main(args)
    out, err = capfd.readouterr()
    return subprocess.CompletedProcess(["dialogbench", *args], code, out, err)


def refused_in_one_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, (done.returncode, done.stdout[-500:], done.stderr[-2000:])
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr


def tree(*roots: Path) -> dict[str, tuple]:
    """Every file and folder under ``roots`` (the roots too): kind, size, mtime, and a file's sha256. A folder's
    mtime moves when an entry is created or removed in it, so even a file written and removed again shows."""
    found = {}
    for root in roots:
        for path in [root, *sorted(root.rglob("*"))]:
            st = path.lstat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
            found[str(path)] = (path.is_dir(), st.st_size, st.st_mtime_ns, digest)
    return found


# --- Nothing is written: the statements that tried, one per kind -------------------------------------------------

def inner_statements(lake: Lake, outside: Path) -> dict[str, str]:
    """One statement of every kind DuckDB parses, aimed at a file (in the lake, or ``outside`` it) where it can be."""
    seeds = lake.files("seeds")[0]
    return {
        "SELECT": f"SELECT * FROM read_text('{outside / 'secret.txt'}')",
        "SELECT read_csv": f"SELECT * FROM read_csv('{outside / 'secret.txt'}')",
        "SELECT read_parquet of a lake file": f"SELECT * FROM read_parquet('{seeds}')",
        "COPY": f"COPY (SELECT 'x' AS x) TO '{outside / 'out.csv'}'",
        "COPY over a lake file": f"COPY (SELECT 1 AS seed_id) TO '{seeds}' (FORMAT parquet)",
        "COPY a forged file": f"COPY (SELECT 1 AS x) TO '{seeds.parent / 'part-forged.parquet'}' (FORMAT parquet)",
        "COPY its forged record": (f"COPY (SELECT '{{\"file\": \"part-forged.parquet\"}}' AS r) TO "
                                   f"'{seeds.parent / '.part-forged.parquet.json'}' (FORMAT csv, HEADER false, QUOTE '')"),
        "CREATE": "CREATE TABLE t AS SELECT 1 AS a",
        "CREATE persistent": f"CREATE TABLE x.t AS SELECT 1",
        "INSERT": "INSERT INTO t VALUES (1)",
        "UPDATE": "UPDATE t SET a = 2",
        "DELETE": "DELETE FROM t",
        "ALTER": "ALTER TABLE t ADD COLUMN b INTEGER",
        "DROP": "DROP VIEW seeds",
        "ATTACH": f"ATTACH '{outside / 'attached.duckdb'}' AS x",
        "ATTACH the catalog": f"ATTACH '{lake.root / 'catalog.duckdb'}' AS cat",
        "DETACH": "DETACH x",
        "EXPORT": f"EXPORT DATABASE '{outside / 'exported'}'",
        "IMPORT (a PRAGMA)": f"IMPORT DATABASE '{outside}'",
        "COPY FROM DATABASE (a PRAGMA)": "COPY FROM DATABASE memory TO x",
        "PRAGMA that writes": "PRAGMA enable_profiling",
        "PRAGMA setting": f"PRAGMA profiling_output = '{outside / 'profile.json'}'",
        "SET": f"SET temp_directory = '{outside / 'spill'}'",
        "SET access": "SET enable_external_access = true",
        "SET VARIABLE": "SET VARIABLE board = 'other'",
        "RESET": "RESET VARIABLE board",
        "LOAD": "LOAD httpfs",
        "INSTALL": "INSTALL httpfs",
        "CALL": "CALL checkpoint()",
        "CHECKPOINT": "CHECKPOINT",
        "VACUUM": "VACUUM",
        "ANALYZE": "ANALYZE",
        "TRANSACTION": "BEGIN TRANSACTION",
        "PREPARE": "PREPARE p AS SELECT 1",
        "EXECUTE": "EXECUTE p",
        "CREATE_FUNC": "CREATE MACRO m() AS 1",
        "CREATE SECRET": "CREATE SECRET (TYPE s3, KEY_ID 'k', SECRET 's')",
        "MERGE_INTO": "MERGE INTO t USING t AS s ON true WHEN MATCHED THEN DELETE",
        "MULTI (PIVOT)": "PIVOT seeds ON n_utterances",
    }


def attempts(lake: Lake, outside: Path) -> dict[str, str]:
    """Every inner statement as it is, under EXPLAIN and under EXPLAIN ANALYZE (where DuckDB parses that), and
    behind a read in a string of several statements."""
    found = {}
    for name, sql in inner_statements(lake, outside).items():
        found[name] = sql
        for prefix in ("EXPLAIN", "EXPLAIN ANALYZE"):
            try:
                parsed = duckdb.extract_statements(f"{prefix} {sql}")
            except duckdb.Error:
                continue  # DuckDB does not parse this one under EXPLAIN (ATTACH, EXPORT, …): as it is above
            assert parsed[0].type in (duckdb.StatementType.EXPLAIN, duckdb.StatementType.MULTI), sql
            found[f"{prefix} {name}"] = f"{prefix} {sql}"
        found[f"SELECT 1; {name}"] = f"SELECT 1; {sql}"
    return found


def test_every_statement_kind_duckdb_parses_is_tried(shared_lake, tmp_path):
    """The list above covers every statement type DuckDB's parser makes (a new DuckDB's new one fails here)."""
    seen = {duckdb.extract_statements(sql)[0].type for sql in inner_statements(shared_lake, tmp_path).values()}
    seen |= {duckdb.StatementType.EXPLAIN}
    not_from_sql = {duckdb.StatementType.INVALID, duckdb.StatementType.RELATION, duckdb.StatementType.LOGICAL_PLAN,
                    duckdb.StatementType.EXTENSION, duckdb.StatementType.ANALYZE, duckdb.StatementType.VARIABLE_SET,
                    duckdb.StatementType.CREATE_FUNC, duckdb.StatementType.COPY_DATABASE}
    parsed_as = {"ANALYZE": "VACUUM", "SET VARIABLE x = 1": "SET", "CREATE FUNCTION f() AS 1": "CREATE",
                 "COPY FROM DATABASE a TO b": "PRAGMA"}  # the SQL of the four the parser never makes
    assert {sql: duckdb.extract_statements(sql)[0].type.name for sql in parsed_as} == parsed_as
    assert set(duckdb.StatementType.__members__.values()) - not_from_sql - seen == set()


def test_every_statement_but_one_read_is_refused_before_it_runs(shared_lake, tmp_path):
    """The second wall alone: every attempt but a plain read (a SELECT of read_text or read_parquet, which the
    connection's lack of file access stops) is refused by the statement check."""
    reads = 0
    for name, sql in attempts(shared_lake, tmp_path / "outside").items():
        if name.removeprefix("EXPLAIN ").startswith("SELECT") and ";" not in sql:
            check_reads_only(sql)
            reads += 1
            continue
        with pytest.raises(QueryRefused):
            check_reads_only(sql)
    assert reads == 6
    for sql in ("SELECT 1", "FROM seeds", "WITH s AS (SELECT 1) SELECT * FROM s", "DESCRIBE seeds", "SHOW TABLES",
                "SUMMARIZE seeds", "VALUES (1)", "EXPLAIN SELECT * FROM seeds", "-- a comment\nPRAGMA show_tables;",
                "PRAGMA table_info('seeds')"):
        check_reads_only(sql)


def test_the_connection_itself_cannot_write_a_file(shared_lake, tmp_path, workdir):
    """The first wall alone (no statement check): every statement run straight on the query path's connection,
    EXPLAIN ANALYZE included, fails or writes nothing, in the lake, the working directory or a folder outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("not for the query path\n")
    before = tree(shared_lake.root, workdir, outside)
    read = []
    with read_only_connection(shared_lake) as con:
        for name, sql in attempts(shared_lake, outside).items():
            try:
                result = con.execute(sql).fetchall()
            except duckdb.Error:
                continue
            read.append((name, result))
    assert tree(shared_lake.root, workdir, outside) == before
    assert not any("not for the query path" in repr(result) for _, result in read), read


FORGERY = ["EXPLAIN ANALYZE COPY a forged file", "EXPLAIN ANALYZE COPY its forged record", "SELECT 1; COPY", "SELECT"]
CLI_ATTEMPTS = ["EXPLAIN COPY", "EXPLAIN ANALYZE COPY", "EXPLAIN ANALYZE COPY a forged file",
                "EXPLAIN ANALYZE COPY its forged record", "EXPLAIN ANALYZE CREATE", "EXPLAIN ANALYZE INSERT", "ATTACH",
                "EXPLAIN ANALYZE SELECT", "EXPORT", "EXPLAIN ANALYZE SELECT read_csv", "SELECT", "SELECT read_csv",
                "SELECT 1; COPY", "COPY over a lake file", "ATTACH the catalog", "SET", "SET VARIABLE",
                "PRAGMA setting", "IMPORT (a PRAGMA)", "LOAD", "CALL"]


def test_the_cli_refuses_the_forgery_in_one_line_and_writes_nothing(shared_lake, tmp_path, workdir):
    """The review's forgery (a verdict file and its record, by EXPLAIN ANALYZE COPY) through the real command, each
    attempt a process of its own (refused by the statement check, and by the child's lack of file access): exit 2,
    one ``error:`` line and nothing else on stderr, not a byte written in the lake, the working directory or the folder
    outside."""
    def processes(commands: list[list[str]]) -> list[subprocess.CompletedProcess]:
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            return list(pool.map(lambda args: cli(args, workdir), commands))

    cli_attempts(shared_lake, tmp_path, workdir, FORGERY, processes)


def test_the_cli_refuses_each_attempt_in_one_line_and_writes_nothing(shared_lake, tmp_path, workdir, capfd):
    """Every kind of attempt through the CLI's ``main`` in this process (``in_process``), as the forgery above through
    processes of their own: exit 2, one ``error:`` line, nothing written."""
    cli_attempts(shared_lake, tmp_path, workdir, CLI_ATTEMPTS,
                 lambda commands: [in_process(args, capfd) for args in commands])


def cli_attempts(lake: Lake, tmp_path: Path, workdir: Path, names: list[str],
                 answer: Callable[[list[list[str]]], list[subprocess.CompletedProcess]]) -> None:
    """``answer`` (a CLI, each command line's answer) asked to ``query`` each of the attempts ``names``: each refused
    in one line, none printing the secret outside, none writing a byte anywhere."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("not for the query path\n")
    before = tree(lake.root, workdir, outside)
    sql = attempts(lake, outside)
    done = dict(zip(names, answer([["query", sql[name], "--lake", str(lake.root)] for name in names])))
    for name, reply in done.items():
        error = refused_in_one_line(reply)
        assert "only reads the lake" in error or "no file access" in error, (name, error)
        assert "not for the query path" not in reply.stdout + error
    assert tree(lake.root, workdir, outside) == before


def test_reads_of_every_kind_still_work(shared_lake):
    with read_only_connection(shared_lake) as con:
        assert query(con, "SELECT count(*) FROM seeds").fetchall()[0] == (547,)
        assert query(con, "FROM seeds SELECT count(*)").fetchall()[0] == (547,)
        assert query(con, "WITH s AS (SELECT * FROM seeds) SELECT count(*) FROM s").fetchall()[0] == (547,)
        for sql in ("DESCRIBE seeds", "SHOW TABLES", "SUMMARIZE seeds", "EXPLAIN SELECT * FROM seeds",
                    "PRAGMA show_tables", "SELECT count(*) FROM seeds WHERE seed_id = 'MT-4'"):
            assert query(con, sql).fetchall(), sql
        with pytest.raises(duckdb.PermissionException):  # the views are the way in: a path is not
            query(con, f"SELECT count(*) FROM read_parquet('{shared_lake.files('seeds')[0]}')").fetchall()


def test_the_query_path_reads_what_the_catalog_reads(make_config, pipeline):
    """Every view, read through open files on a connection without file access, has the types and rows that the
    catalog's views (read_parquet of the same files) have."""
    config = make_config(limit=2, n=[4])
    pipeline(config)
    lake = open_lake(config.lake)
    with connect(lake) as catalog, read_only_connection(lake) as con:
        for view in (m.name for m in models(registry.layout().sql)):
            sql = f'SELECT * FROM "{view}"'
            assert con.sql(f'DESCRIBE "{view}"').fetchall() == catalog.sql(f'DESCRIBE "{view}"').fetchall(), view
            assert sorted(map(repr, con.sql(sql).fetchall())) == sorted(map(repr, catalog.sql(sql).fetchall())), view


# --- Readers racing the lake's own rewrites -----------------------------------------------------------------------

def gen(key: str, hours: float) -> dict:
    return {"cell_key": key, "protocol": "botchat", "model": "a", "item_id": key, "n_target": 4, "run_id": "r",
            "created_at": T0 + dt.timedelta(hours=hours)}


def duplicated_lake(root: Path, files: int) -> Lake:
    """File i holds cells c_i and c_(i+1), written at hour i: every cell but the first two is stored twice and
    ``repair`` rewrites every file but the first (keeping c_(i+1)). Cells: ``files + 1``."""
    lake = open_lake(root)
    ensure_current(lake, tables="files")  # repair and quarantine are the folder lake's
    generations = next(t for t in registry.tables() if t.name == "generations")
    for i in range(files):
        generations.write(lake, [gen(f"c{i:04d}", i), gen(f"c{i + 1:04d}", i)])
    return lake


def race(tmp_path: Path, make_lake, command, check, *, exit_code: int = 0, tries: int = 3) -> Lake:
    """Run ``command(lake_root)`` (an argv) in the background on a fresh ``make_lake(root)`` while this process
    queries the lake in a loop: every read must succeed, and ``check(rows, cells)`` says whether it saw the lake
    between the command's first and last change (asserting what it must hold). Tried again, on a new lake, until at
    least one read did (``tries`` times), so the test shows reads that raced the command, not ones before or after
    it. Returns the last lake."""
    sql = "SELECT count(*), count(DISTINCT cell_key) FROM generations"
    for attempt in range(tries):
        lake = make_lake(tmp_path / f"lake-{attempt}")
        log = tmp_path / f"background-{attempt}.log"  # a file, not a pipe: its many warnings never block it
        with open(log, "w") as stderr:
            process = subprocess.Popen(command(lake.root), cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)},
                                       stdout=subprocess.DEVNULL, stderr=stderr)
        raced = 0
        while process.poll() is None:
            rows, cells = run(lake, sql, lambda con, sql: con.execute(sql).fetchone())
            raced += check(rows, cells)
        assert process.wait() == exit_code, log.read_text()[-3000:]
        if raced:
            return lake
    raise AssertionError(f"no read raced {command(Path('LAKE'))} in {tries} tries")


REPAIR_SLOWLY = """if True:
    import sys, time
    from dialogbench.lake import repair
    from dialogbench.run.registry import open_lake
    rewrite = repair._rewrite
    def rewrite_then_wait(*args):
        rewrite(*args)
        time.sleep(0.03)  # a slow disk: the repair lasts long enough for reads (0.4-3 s each) to overlap it
    repair._rewrite = rewrite_then_wait
    repair.repair(open_lake(sys.argv[1]))
"""


def test_readers_never_fail_while_repair_rewrites_the_files(tmp_path):
    """``dialogbench repair`` (its ``repair`` function, 30 ms between files) rewrites 300 files (writes the new one,
    removes the old one) while queries run in a loop: every one succeeds and sees every cell (the old file or the
    new one), none in both its copies."""
    files = 300

    def check(rows: int, cells: int) -> bool:
        assert cells == files + 1 and files + 1 <= rows <= 2 * files, (rows, cells)
        return files + 1 < rows < 2 * files

    lake = race(tmp_path, lambda root: duplicated_lake(root, files),
                lambda root: [sys.executable, "-c", REPAIR_SLOWLY, str(root)], check)
    assert run(lake, "SELECT count(*) FROM generations", lambda con, sql: con.execute(sql).fetchone()) == (files + 1,)


QUARANTINE_ONE_BY_ONE = """if True:
    import sys, time
    from dialogbench.lake.quarantine import quarantine
    from dialogbench.run.registry import open_lake
    from dialogbench.lake.verify import scan
    lake = open_lake(sys.argv[1])
    for damaged in scan(lake, "full")["generations"].damaged:
        quarantine(lake, [damaged])  # what a run's start and verify do, a file at a time so that reads overlap
        time.sleep(0.005)
"""


def test_readers_never_fail_while_files_are_quarantined(tmp_path):
    """Damaged files (their records claim more rows than their footers hold: a read's cheap check passes them, the
    full one does not) are moved into quarantine by ``lake.quarantine``, as a run's start and ``dialogbench verify``
    do (one at a time, so that reads overlap the moves), while queries run in a loop: every one succeeds, reading
    each file whole or not at all."""
    def damaged_lake(root: Path) -> Lake:
        lake = duplicated_lake(root, 300)
        for path in lake.files("generations"):
            manifest.write(path, dataclasses.replace(manifest.of(path), rows=3))
        return lake

    def check(rows: int, cells: int) -> bool:
        assert rows % 2 == 0 and rows <= 600, rows  # two rows a file: no file read in part
        return 0 < rows < 600

    lake = race(tmp_path, damaged_lake, lambda root: [sys.executable, "-c", QUARANTINE_ONE_BY_ONE, str(root)], check)
    assert run(lake, "SELECT count(*) FROM generations", lambda con, sql: con.execute(sql).fetchone()) == (0,)
    assert len(notes(lake)) == 300


def test_a_file_removed_before_it_is_opened_makes_its_table_be_listed_again(tmp_path, monkeypatch):
    """The race the open handles cannot cover (a file listed, then removed before it is opened): the table is listed
    again, its files already open kept, and the rewrite's new file is read instead."""
    from dialogbench.lake import pinned
    from dialogbench.lake.repair import _rewrite as rewrite

    lake = duplicated_lake(tmp_path / "lake", 3)
    old = lake.files("generations")[1]
    opened = []
    real_open = pinned.pa.OSFile

    def open_after_a_rewrite(path, mode):
        opened.append(Path(path).name)
        if Path(path) == old and old.exists():  # repair's rewrite lands between the listing and the opening
            rewrite(lake, "generations", old, drop=set())
        return real_open(path, mode)

    monkeypatch.setattr(pinned.pa, "OSFile", open_after_a_rewrite)
    with read_only_connection(lake) as con:  # in this process (a query's child could not write the rewrite)
        assert con.execute("SELECT count(*) FROM generations").fetchone() == (6,)
    first, _, third = lake.files("generations")[0].name, old.name, lake.files("generations")[2].name
    assert opened[:2] == [first, old.name] and sorted(opened[2:]) == sorted([f"{old.stem}-dedup.parquet", third])


# --- Limits and streaming -----------------------------------------------------------------------------------------

def test_a_query_over_its_time_limit_is_stopped(shared_lake, workdir, capfd):
    """By ``run``, and by the CLI's ``--timeout`` (``in_process``): one line naming the limit and the flag."""
    start = time.perf_counter()
    with pytest.raises(LimitExceeded, match=r"time limit of 0.5 s.*--timeout"):
        run(shared_lake, "SELECT count(*) FROM range(1000000000000)", lambda con, sql: con.execute(sql).fetchall(),
            limits=Limits(timeout_s=0.5))
    assert time.perf_counter() - start < 10
    done = in_process(["query", "SELECT count(*) FROM range(1000000000000)", "--lake", str(shared_lake.root),
                       "--timeout", "1"], capfd)
    assert "time limit of 1 s" in refused_in_one_line(done) and "--timeout SECONDS" in done.stderr


def test_a_query_over_its_memory_limit_is_stopped_without_spilling(shared_lake, workdir, capfd):
    """The CLI's ``--memory-limit`` (``in_process``: the limits are the query's child's, forked from here alike)."""
    before = tree(workdir)
    sql = "SELECT i % 40000000 AS k, count(*) FROM range(40000000) t(i) GROUP BY k ORDER BY 2 DESC LIMIT 1"
    start = time.perf_counter()
    done = in_process(["query", sql, "--lake", str(shared_lake.root), "--memory-limit", "64MB"], capfd)
    error = refused_in_one_line(done)
    assert "memory than its limit of 64MB" in error and "--memory-limit SIZE" in error
    assert time.perf_counter() - start < 60
    assert tree(workdir) == before  # nothing spilled to a temp folder


def test_bad_limit_flags_are_usage_errors(shared_lake, capsys):
    for flags in (["--timeout", "-1"], ["--timeout", "soon"], ["--memory-limit", "lots"], ["--memory-limit", "0GB"]):
        with pytest.raises(SystemExit) as info:
            main(["query", "SELECT 1", "--lake", str(shared_lake.root), *flags])
        assert info.value.code == 2
        assert flags[0] in capsys.readouterr().err


def peak_rss(args: list[str], cwd: Path) -> tuple[int, int, int]:
    """Run the CLI reading its stdout as it comes; returns (exit code, bytes printed, the peak RSS of the CLI and of
    the query's child process it forks: ``wait4`` counts the descendants a process has waited for)."""
    process = psutil.Popen([sys.executable, "-m", "dialogbench.cli", *args], cwd=cwd, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(REPO)})
    peak, done = [0], threading.Event()

    def watch() -> None:
        while not done.is_set():
            try:
                status = Path(f"/proc/{process.pid}/status").read_text()
                peak[0] = max(peak[0], process.memory_info().rss,
                              int(status.split("VmHWM:")[1].split()[0]) * 1024)
            except (psutil.Error, OSError, IndexError):
                pass
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    printed = 0
    while chunk := process.stdout.read(1 << 20):
        printed += len(chunk)
    _, status, usage = os.wait4(process.pid, 0)
    done.set()
    watcher.join()
    return os.waitstatus_to_exitcode(status), printed, max(peak[0], usage.ru_maxrss * 1024)


@pytest.mark.slow
def test_a_large_result_streams(shared_lake, workdir, tmp_path):
    """1M rows of 300 characters (300 MB of csv, more as json, 1M rows exported to Parquet): the process's peak
    memory grows well under the result's size above the same process's `select 1`, as the rows are written while
    they are fetched (growth seen at 2M rows: 24 MiB for csv, 32 MiB for json, 66 MiB for the export, and 81 MiB
    once for csv in CI; a result held whole grew 1.5 GiB for 600 MB of csv)."""
    sql = "SELECT i, repeat('x', 290) || i AS s FROM range(1000000) t(i)"
    code, _, base = peak_rss(["query", "SELECT 1", "--lake", str(shared_lake.root), "--format", "csv"], workdir)
    assert code == 0
    for fmt in ("csv", "json"):  # measured above the same process's `select 1`, which varies with the machine
        code, printed, peak = peak_rss(["query", sql, "--lake", str(shared_lake.root), "--format", fmt], workdir)
        assert code == 0 and printed > 300_000_000, (fmt, code, printed)
        assert peak - base < printed / 3, \
            f"{fmt}: peak RSS {peak / 2**20:.0f} MiB ({base / 2**20:.0f} for select 1) for {printed / 2**20:.0f} MiB"
    out = tmp_path / "big.parquet"
    code, _, peak = peak_rss(["export", sql, "--out", str(out), "--lake", str(shared_lake.root)], workdir)
    assert code == 0 and pq.read_metadata(out).num_rows == 1_000_000
    assert peak - base < 300_000_000 / 2, f"export: peak RSS {peak / 2**20:.0f} MiB for 300 MB of values"


def test_json_streams_the_same_array_it_always_printed(shared_lake, capsys):
    sql = "SELECT seed_id, n_utterances, seed FROM seeds WHERE seed_id IN ('MT-1', 'MT-4') ORDER BY line"
    assert main(["query", sql, "--lake", str(shared_lake.root), "--format", "json"]) == 0
    with read_only_connection(shared_lake) as con:
        cursor = con.execute(sql)
        rows = [dict(zip([d[0] for d in cursor.description], r)) for r in cursor.fetchall()]
    assert capsys.readouterr().out == json.dumps(rows, indent=2, default=str) + "\n"
    assert main(["query", "SELECT * FROM seeds WHERE false", "--lake", str(shared_lake.root), "--format", "json"]) == 0
    assert capsys.readouterr().out == "[]\n"


# --- Control characters -------------------------------------------------------------------------------------------

NASTY = "\x1b]52;c;cm0gLXJmIH4=\x07 hi \x1b[2J\x00 csi\x9b31m del\x7f cr\r end"
SAFE = {"\n", "\t"}


def test_control_characters_are_printed_escaped_and_exported_raw(tmp_path, workdir, capfd):
    """An utterance holding an OSC 52 clipboard write, ESC sequences, BEL, NUL, C1 CSI, DEL and CR: no format of
    ``query`` prints one of them raw (csv may print newline and tab inside a quoted value, and ends its lines
    with CRLF); ``export`` writes the text as it is in the lake. The table, what a terminal is shown by default,
    comes from a real CLI process (``cli``); csv, json and the exports from ``main`` in this process."""
    lake = open_lake(tmp_path / "lake")
    ensure_current(lake)
    generations = next(t for t in registry.tables() if t.name == "generations")
    generations.write(lake, [{**gen("c1", 0), "utterances": [NASTY, "fine\nline\ttab"], "model": NASTY}])
    sql = "SELECT model, utterances, utterances[1] AS first, {'u': utterances[1]} AS nested FROM generations"
    for fmt in ("table", "csv", "json"):
        args = ["query", sql, "--lake", str(lake.root), "--format", fmt]
        done = cli(args, workdir) if fmt == "table" else in_process(args, capfd)
        assert done.returncode == 0, done.stderr
        out = done.stdout.replace("\r\n", "\n") if fmt == "csv" else done.stdout
        raw = {c for c in out if ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0} - (SAFE if fmt == "csv" else {"\n"})
        assert not raw, (fmt, raw)
        assert "]52;c;cm0gLXJmIH4=" in out and " end" in out, fmt
        assert ("\\u001b" if fmt == "json" else "\\x1b" if fmt == "csv" else "\\e") in out, fmt
        if fmt == "json":
            assert json.loads(out)[0]["first"] == NASTY  # escaped for the terminal, the same text for a parser
    sql = "SELECT model, utterances[1] AS first FROM generations"  # csv holds no list or struct column
    for suffix in ("parquet", "csv", "json"):
        out = tmp_path / f"out.{suffix}"
        assert in_process(["export", sql, "--out", str(out), "--lake", str(lake.root)], capfd).returncode == 0
        if suffix == "parquet":
            assert pq.read_table(out).column("first").to_pylist() == [NASTY]
        elif suffix == "csv":
            assert NASTY.replace("\r", "") in out.read_bytes().decode().replace("\r", "")
        else:
            assert json.loads(out.read_text().splitlines()[0])["first"] == NASTY


def test_an_error_quoting_the_lake_prints_no_control_character(tmp_path, workdir, capfd):
    """DuckDB's error, raised in the query's child and quoting the lake's text, is one escaped line from the CLI."""
    lake = open_lake(tmp_path / "lake")
    ensure_current(lake)
    generations = next(t for t in registry.tables() if t.name == "generations")
    generations.write(lake, [{**gen("c1", 0), "model": NASTY}])
    error = refused_in_one_line(in_process(["query", "SELECT CAST(model AS INTEGER) FROM generations", "--lake",
                                            str(lake.root)], capfd))
    assert "\\x1b]52" in error and not {c for c in error[:-1] if ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0}


# --- A folder that is not a lake ----------------------------------------------------------------------------------

def test_a_folder_that_is_not_a_lake_is_refused_naming_it(shared_lake, workdir, capfd):
    """The checkout, and a lake's reports folder (made in the shared lake for this test, removed after it)."""
    reports = shared_lake.root / "reports"
    reports.mkdir()
    try:
        (reports / "report.html").write_text("<html></html>")
        for folder in (REPO, reports):
            error = refused_in_one_line(in_process(["query", "SELECT 1", "--lake", str(folder)], capfd))
            assert f"{folder}: not a dialogbench lake (no lake.json" in error
    finally:
        shutil.rmtree(reports)
    error = refused_in_one_line(in_process(["export", "SELECT 1", "--out", "x.csv", "--lake", str(REPO)], capfd))
    assert f"{REPO}: not a dialogbench lake" in error and not (workdir / "x.csv").exists()


def test_an_empty_lake_answers_empty_views(tmp_path, capsys):
    """A lake no run has written yet: an empty folder, or a checkout's data_lake holding only its raw datasets."""
    for name, content in (("empty", None), ("checkout", "raw")):
        folder = tmp_path / name
        folder.mkdir()
        if content:
            (folder / content).mkdir()
        assert main(["query", "SELECT count(*) AS n FROM generations", "--lake", str(folder), "--format", "json"]) == 0
        assert json.loads(capsys.readouterr().out) == [{"n": 0}]


# --- export -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("suffix", ["parquet", "csv", "json"])
def test_export_writes_the_result_where_it_is_told(shared_lake, tmp_path, suffix, capsys):
    out = tmp_path / "exports" / f"seeds.{suffix}"
    sql = "SELECT seed_id, n_utterances FROM seeds WHERE seed_id IN ('MT-1', 'MT-4') ORDER BY line"
    assert main(["export", sql, "--out", str(out), "--lake", str(shared_lake.root)]) == 0
    assert "2 row(s) written" in capsys.readouterr().out
    if suffix == "parquet":
        assert pq.read_table(out).to_pylist() == [{"seed_id": "MT-1", "n_utterances": 4},
                                                  {"seed_id": "MT-4", "n_utterances": 7}]
    elif suffix == "csv":
        assert out.read_text().splitlines() == ['"seed_id","n_utterances"', '"MT-1",4', '"MT-4",7']
    else:
        assert [json.loads(line) for line in out.read_text().splitlines()][1] == {"seed_id": "MT-4", "n_utterances": 7}
    assert not list(out.parent.glob(".*.tmp"))


def test_export_refuses_the_lake_and_writing_sql(shared_lake, tmp_path):
    before = tree(shared_lake.root)
    with pytest.raises(QueryRefused, match="inside the lake"):
        export(shared_lake, "SELECT 1", shared_lake.root / "seeds" / "x.parquet")
    with pytest.raises(QueryRefused, match="is COPY"):
        export(shared_lake, f"COPY (SELECT 1) TO '{tmp_path / 'y.csv'}'", tmp_path / "z.csv")
    with pytest.raises(QueryRefused, match="--format"):
        export(shared_lake, "SELECT 1", tmp_path / "z.txt")
    with pytest.raises(QueryRefused, match=r"csv cannot hold the nested column\(s\) seed \(list<l: string>\)"):
        export(shared_lake, "SELECT seed FROM seeds", tmp_path / "nested.csv")
    with pytest.raises(LimitExceeded, match="time limit"):
        export(shared_lake, "SELECT count(*) FROM range(1000000000000)", tmp_path / "slow.csv",
               limits=Limits(timeout_s=0.3))
    assert tree(shared_lake.root) == before and not (tmp_path / "y.csv").exists()
    assert not (tmp_path / "slow.csv").exists() and not list(tmp_path.glob(".*.tmp"))


def test_export_of_a_table_with_no_rows_writes_its_columns(shared_lake, tmp_path):
    out = tmp_path / "none.parquet"
    assert export(shared_lake, "SELECT seed_id FROM seeds WHERE false", out) == 0
    assert pq.read_table(out).schema.names == ["seed_id"]


def test_parallel_readers_share_nothing(shared_lake):
    """Queries on several threads at once, each on its own connection and its own open files."""
    sql = "SELECT count(*) FROM seeds"
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: run(shared_lake, sql, lambda con, sql: con.execute(sql).fetchone()),
                                range(8)))
    assert answers == [(547,)] * 8


def test_open_files_are_closed_with_the_connection(shared_lake):
    me = psutil.Process()
    before = len(me.open_files())
    with read_only_connection(shared_lake) as con:
        con.execute("SELECT count(*) FROM seeds").fetchall()
        assert len(me.open_files()) > before
    assert len(me.open_files()) == before


def test_a_schema_change_reads_as_before(tmp_path):
    """A file written before a column was added reads with that column null (as read_parquet's union did)."""
    lake = open_lake(tmp_path / "lake")
    ensure_current(lake)
    lake.write("generations", pa.table({"cell_key": ["old"], "model": ["a"]}))
    generations = next(t for t in registry.tables() if t.name == "generations")
    generations.write(lake, [gen("new", 1)])
    sql = "SELECT cell_key, model, n_target FROM generations ORDER BY cell_key"
    got = run(lake, sql, lambda con, sql: con.execute(sql).fetchall())
    assert got == [("new", "a", 4), ("old", "a", None)]
