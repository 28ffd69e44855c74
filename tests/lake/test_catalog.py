"""``dialogbench.lake.catalog``: views created in the order of their declared refs (every view reads other views
only through ``{{ ref() }}``), clear errors for unknown tags, refs, sources and cycles, reference tables inlined
so a persistent catalog works in plain DuckDB, the shared current_cells model, ``failures`` resolved by
every registered cell table, and the tags that read a view and declare its ref (``source_with_board('table')``: a
row's board, else its run's; ``current_cells('stage')``)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from dialogbench.run.registry import open_lake
from dialogbench.run import registry
from dialogbench.lake import Lake
from dialogbench.lake.catalog import (CatalogError, Context, build_catalog, connect, create_macros, create_views,
                                      data_tests, models, ordered, parse, render, values_sql,
                                      views_database)
from dialogbench.lake.schemas import BACKEND_CALLS, FAILURES, PLANS, RUNS

T0 = dt.datetime(2026, 3, 1, 3, 0, tzinfo=dt.timezone.utc)


def at(hours: float) -> dt.datetime:
    return T0 + dt.timedelta(hours=hours)


def rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict]:
    return con.sql(sql).to_arrow_table().to_pylist()


def table(name: str):
    return next(t for t in registry.tables() if t.name == name)


# --- dependencies ---------------------------------------------------------------------------------------------

def test_every_view_declares_the_views_it_reads(tmp_path):
    """Each view is created alone with only what it refs (transitively) and the macros: a view that read another
    one without ref() would fail here even though the full catalog, in some order, happens to work."""
    lake, views = open_lake(tmp_path / "lake"), ordered(models(registry.layout().sql))
    by_name, context = {v.name: v for v in views}, Context.load(open_lake(tmp_path / "lake"))

    def closure(name: str, seen: dict) -> dict:
        for ref in by_name[name].refs:
            closure(ref, seen)
        seen.setdefault(name, by_name[name])
        return seen

    for view in views:
        with duckdb.connect() as con:
            create_macros(con, registry.layout().sql)
            for needed in closure(view.name, {}).values():
                try:
                    con.execute(f'CREATE VIEW "{needed.name}" AS {render(needed.sql, lake, context, path=needed.path)}')
                except duckdb.Error as exc:
                    pytest.fail(f"{needed.path} reads something it does not ref: {exc}")


def test_views_come_after_their_refs_and_every_view_is_created(tmp_path):
    created = create_views(duckdb.connect(), open_lake(tmp_path / "lake"))
    views = models(registry.layout().sql)
    assert sorted(created) == sorted(v.name for v in views)
    position = {name: i for i, name in enumerate(created)}
    assert all(position[ref] < position[v.name] for v in views for ref in v.refs)
    assert "current_cells" in created and "report_latest_run" in created


def write_sql(root: Path, files: dict[str, str]) -> Path:
    for name, sql in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(sql)
    return root


@pytest.mark.parametrize(("files", "message"), [
    ({"metrics/b.sql": "select * from {{ ref('nope') }}"}, r"metrics/b\.sql: ref\('nope'\) names no view"),
    ({"views/a.sql": "select * from {{ ref('b') }}", "metrics/b.sql": "select * from {{ ref('c') }}",
      "metrics/c.sql": "select * from {{ ref('a') }}"}, r"dependency cycle a -> b -> c -> a"),
    ({"views/a.sql": "select * from {{ ref('a') }}"}, r"views/a\.sql: dependency cycle a -> a"),
    ({"views/a.sql": "select * from {{ source('nope') }}"}, r"views/a\.sql: source\('nope'\) names no lake table"),
    ({"views/a.sql": "select * from {{ reference('nope') }}"},
     r"views/a\.sql: reference\('nope'\) names no reference table"),
    ({"views/a.sql": "select * from {{ source }}"}, r"views/a\.sql: unknown tag"),
    ({"views/a.sql": "select * from {{ computed_cells('x') }}"}, r"views/a\.sql: unknown tag"),
    ({"views/a.sql": "select 1", "report/a.sql": "select 2"}, r"report/a\.sql: a view 'a' is already defined"),
    ({"views/a.sql": "select * from {{ ref('b') }} where", "views/b.sql": "select 1 as x"}, r"views/a\.sql: .*"),
])
def test_broken_files_are_named(tmp_path, files, message):
    sql_dir = write_sql(tmp_path / "sql", files)
    with pytest.raises(CatalogError, match=message):
        create_views(duckdb.connect(), open_lake(tmp_path / "lake"), sql_dir)


def test_order_does_not_depend_on_file_names(tmp_path):
    sql_dir = write_sql(tmp_path / "sql", {"views/a_top.sql": "select x + 1 as y from {{ ref('z_base') }}",
                                           "views/z_base.sql": "select 41 as x",
                                           "tests/a_test.sql": "select * from {{ ref('a_top') }} where y <> 42"})
    con = duckdb.connect()
    assert create_views(con, open_lake(tmp_path / "lake"), sql_dir) == ["z_base", "a_top"]
    assert con.sql("select y from a_top").fetchall() == [(42,)]


def test_data_tests_are_rendered_and_checked(tmp_path):
    sql_dir = write_sql(tmp_path / "sql", {"views/v.sql": "select 1 as x",
                                           "tests/ok.sql": "select * from {{ ref('v') }} where x <> 1",
                                           "tests/fails.sql": "select * from {{ ref('v') }}"})
    assert data_tests(open_lake(tmp_path / "lake"), sql_dir) == {"fails": 1}
    write_sql(sql_dir, {"tests/bad.sql": "select * from {{ ref('gone') }}"})
    with pytest.raises(CatalogError, match=r"tests/bad\.sql: ref\('gone'\)"):
        data_tests(open_lake(tmp_path / "lake"), sql_dir)


def test_the_shipped_data_tests_pass_on_an_empty_lake(tmp_path):
    assert data_tests(open_lake(tmp_path / "lake")) == {}


# --- reference tables -------------------------------------------------------------------------------------------

def test_reference_tables_are_inline_so_plain_duckdb_reads_the_catalog(tmp_path):
    from dialogbench.mtbench101.reference import taxonomy_table

    assert "mtbench101_taxonomy" in registry.references()
    path = build_catalog(open_lake(tmp_path / "lake"))
    with duckdb.connect(str(path), read_only=True) as con:  # no registered Python object: the SQL holds the rows
        got = con.sql("select * from mtbench101_taxonomy order by position").to_arrow_table()
        types = dict(con.sql("select column_name, column_type from (describe mtbench101_taxonomy)").fetchall())
    assert got.to_pylist() == taxonomy_table().to_pylist()
    assert types == {"position": "INTEGER", "task": "VARCHAR", "name": "VARCHAR", "ability": "VARCHAR",
                     "tier": "VARCHAR"}


def test_build_catalog_drops_views_whose_file_is_gone(tmp_path):
    lake = open_lake(tmp_path / "lake")
    path = build_catalog(lake)
    with duckdb.connect(str(path)) as con:
        con.execute("create view leftover as select 1")
    build_catalog(lake)
    with duckdb.connect(str(path), read_only=True) as con:
        names = {r[0] for r in con.execute("select view_name from duckdb_views() where not internal").fetchall()}
    assert "leftover" not in names and "failures" in names


def test_values_sql_types_and_escapes():
    data = pa.table({"i": pa.array([1, None], pa.int32()), "s": ["it's", None], "b": [True, False],
                     "f": [0.5, float("inf")], "l": pa.array([["a"], []], pa.list_(pa.string()))})
    with duckdb.connect() as con:
        got = con.sql(f"select * from {values_sql(data)}")
        assert got.fetchall() == [(1, "it's", True, 0.5, ["a"]), (None, None, False, float("inf"), [])]
        assert [str(t) for t in got.types] == ["INTEGER", "VARCHAR", "BOOLEAN", "DOUBLE", "VARCHAR[]"]
        empty = con.sql(f"select * from {values_sql(data.slice(0, 0))}")
        assert empty.fetchall() == [] and [str(t) for t in empty.types][:2] == ["INTEGER", "VARCHAR"]


# --- current_cells --------------------------------------------------------------------------------------------

def plan(run: str, stage: str, key: str, roles: dict, *, hours: float, judge: str | None = "judge",
         scope: list[str] | None = None) -> dict:
    models = sorted(set(roles.values()))
    return {"run_id": run, "stage": stage, "cell_key": key, "item_id": key.split("|")[-1],
            "model": models[0] if len(models) == 1 else None, "judge": judge, "created_at": at(hours), "task": None,
            "roles": list(roles.items()), "scope": models if scope is None else scope}


def test_current_cells_are_each_scopes_latest_plan(tmp_path):
    lake = open_lake(tmp_path / "lake")
    plans = [
        # UniEval: a's plan of run 2 replaces run 1's; run 3 planned only b, so a's run-2 cells stay current
        plan("r1", "botchat_unieval", "u|a|1", {"model": "a"}, hours=1),
        plan("r2", "botchat_unieval", "u|a|2", {"model": "a"}, hours=2),
        plan("r3", "botchat_unieval", "u|b|1", {"model": "b"}, hours=3),
        # another judge of a: its own latest plan
        plan("r1", "botchat_unieval", "u|a|1j", {"model": "a"}, hours=1, judge="other"),
        # Arena: per unordered pair; both orders of a run are one plan
        plan("r1", "botchat_arena", "a|ab|1", {"first": "a", "second": "b"}, hours=1),
        plan("r2", "botchat_arena", "a|ab|2", {"first": "a", "second": "b"}, hours=2),
        plan("r2", "botchat_arena", "a|ba|2", {"first": "b", "second": "a"}, hours=2),
        plan("r3", "botchat_arena", "a|ac|3", {"first": "a", "second": "c"}, hours=3),
        # GameEval: per stage (scope []), no judge: run 3's plan replaces every cell of run 2's
        plan("r2", "gameeval_spyfall", "g|ab|2", {"spy": "a", "villager": "b"}, hours=2, judge=None, scope=[]),
        plan("r3", "gameeval_spyfall", "g|cd|3", {"spy": "c", "villager": "d"}, hours=3, judge=None, scope=[]),
        plan("r2", "gameeval_askguess", "g|aa|2", {"questioner": "a", "answerer": "a"}, hours=2, judge=None,
             scope=[]),
    ]
    lake.write("plans", pa.Table.from_pylist(plans, schema=PLANS))
    with connect(lake) as con:
        current = rows(con, "select stage, cell_key, run_id, roles from current_cells order by stage, cell_key")
    assert [(r["stage"], r["cell_key"]) for r in current] == [
        ("botchat_arena", "a|ab|2"), ("botchat_arena", "a|ac|3"), ("botchat_arena", "a|ba|2"),
        ("botchat_unieval", "u|a|1j"), ("botchat_unieval", "u|a|2"), ("botchat_unieval", "u|b|1"),
        ("gameeval_askguess", "g|aa|2"), ("gameeval_spyfall", "g|cd|3")]
    assert dict(current[-1]["roles"]) == {"spy": "c", "villager": "d"}


# --- failures -------------------------------------------------------------------------------------------------

def failure(key: str, stage: str, hours: float = 1) -> dict:
    return {"cell_key": key, "stage": stage, "item_id": key, "model": "m", "judge": None, "error": "boom",
            "run_id": "r1", "created_at": at(hours)}


def failing(lake: Lake) -> set[str]:
    with connect(lake) as con:
        return {r["cell_key"] for r in rows(con, "select cell_key from failures")}


def test_failures_resolve_on_mtbench101_answers_and_finished_games(tmp_path):
    lake = open_lake(tmp_path / "lake")
    lake.write("failures", pa.Table.from_pylist([failure("answer", "mtbench101_answers"),
                                                 failure("game", "gameeval_spyfall"),
                                                 failure("game-error", "gameeval_spyfall")], schema=FAILURES))
    assert failing(lake) == {"answer", "game", "game-error"}
    table("mtbench101_answers").write(lake, [{"cell_key": "answer", "context": "golden", "model": "m", "turn": 0,
                                              "created_at": at(2)}])
    games = table("gameeval_games")
    games.write(lake, [{"cell_key": "game", "game": "spyfall", "end_reason": "rules", "finished": True,
                        "created_at": at(2)},
                       {"cell_key": "game-error", "game": "spyfall", "end_reason": "backend_error", "finished": False,
                        "created_at": at(2)}])
    assert failing(lake) == {"game-error"}  # a game abandoned on backend errors is no computed cell
    games.write(lake, [{"cell_key": "game-error", "game": "spyfall", "end_reason": "round_limit", "finished": False,
                        "created_at": at(3)}])
    assert failing(lake) == set()


def test_failures_resolve_on_every_registered_cell_table(tmp_path):
    """A computed row of any table that holds cells resolves a failure of its key (a new family's table too)."""
    lake = open_lake(tmp_path / "lake")
    cell_tables = [t for t in registry.tables() if t.done is not None]
    assert {"generations", "unieval_judgments", "arena_judgments", "gteval_judgments", "mtbench101_judgments",
            "mtbench101_answers", "gameeval_games"} <= {t.name for t in cell_tables}
    lake.write("failures", pa.Table.from_pylist([failure(f"k-{t.name}", t.name) for t in cell_tables] +
                                                [failure("never", "x")], schema=FAILURES))
    for t in cell_tables:
        t.write(lake, [{t.key: f"k-{t.name}", **{c: "p" for c in t.partition}}])
    assert failing(lake) == {"never"}


def test_failures_keep_the_latest_attempt_of_a_cell(tmp_path):
    lake = open_lake(tmp_path / "lake")
    lake.write("failures", pa.Table.from_pylist([failure("x", "s", 1), {**failure("x", "s", 2), "error": "late"}],
                                                schema=FAILURES))
    with connect(lake) as con:
        assert [r["error"] for r in rows(con, "select error from failures")] == ["late"]


def test_arena_mirror_data_test_reads_the_plans_roles(tmp_path):
    from tests.verdicts import write_verdicts

    lake = open_lake(tmp_path / "lake")
    orders = [("a", "b"), ("b", "a"), ("a", "c")]  # (a, c) has no mirror planned
    lake.write("plans", pa.Table.from_pylist([plan("r1", "botchat_arena", f"k|{x}{y}|s1", {"first": x, "second": y},
                                                   hours=1) for x, y in orders], schema=PLANS))
    write_verdicts(lake, [
        {"cell_key": f"k|{x}{y}|s1", "protocol": "botchat_arena", "item_id": "s1", "model": x, "opponent": y,
         "position": 1, "judge": "judge", "n_judged": 8, "parsed": True, "verdict": "both", "winner": "tie",
         "created_at": at(1)} for x, y in orders], judge="judge")
    failing_tests = data_tests(lake)
    assert failing_tests.get("arena_mirror_planned") == 1


def test_judgments_unions_every_registered_verdict_table(tmp_path):
    """Each protocol's verdicts are its own table; the `judgments` view is the shared columns of all of them, a
    new family's verdict table included, with no SQL edit."""
    from dialogbench.cells.shared_tables import verdict_table
    from dialogbench.run.family_spec import Family
    from tests.verdicts import write_verdicts

    lake = open_lake(tmp_path / "lake")
    write_verdicts(lake, [{"cell_key": "u", "protocol": "botchat_unieval", "judge": "j", "parsed": True,
                           "choice": "No"},
                          {"cell_key": "m", "protocol": "mtbench101_judge", "judge": "j", "parsed": False}], judge="j")
    ratings = verdict_table("toy_ratings", [("stars", pa.int32())], answer=("stars",))
    ratings.write(lake, [{"cell_key": "t", "protocol": "toy", "judge": "j", "parsed": True, "stars": 4}])
    registry.register(Family(name="toyjudge", title="Toy", section=object, stages=lambda c: [], tables=(ratings,)))
    try:
        with connect(open_lake(lake.root)) as con:  # opened now: the toy family's table is in its layout
            assert con.sql("select protocol, cell_key from judgments order by 1").fetchall() == [
                ("botchat_unieval", "u"), ("mtbench101_judge", "m"), ("toy", "t")]
            assert "stars" not in [d[0] for d in con.sql("select * from judgments").description]
            assert failing(lake) == set()
    finally:
        registry.unregister("toyjudge")
    with pytest.raises(ValueError, match="shared verdict columns"):
        verdict_table("bad", [("parsed", pa.bool_())], answer=("parsed",))


def test_the_wilson_macros_match_the_formula_and_persist_in_the_catalog_file(tmp_path):
    """wilson_low / wilson_high against the formula written out (z = 1.959964), and in catalog.duckdb too, so
    plain `duckdb` can use them."""
    import math

    z = 1.959963984540054
    with duckdb.connect() as con:
        create_macros(con, registry.layout().sql)
        for k, n in ((0, 4), (2, 4), (4, 4), (7, 50), (0, 0)):
            low, high = con.execute("select wilson_low(?, ?), wilson_high(?, ?)", [k, n, k, n]).fetchone()
            if n == 0:
                assert low is None and high is None
                continue
            spread = z * math.sqrt(k * (n - k) / n + z * z / 4)
            assert low == round(max(0.0, (k + z * z / 2 - spread) / (n + z * z)), 4)
            assert high == round(min(1.0, (k + z * z / 2 + spread) / (n + z * z)), 4)
        assert con.execute("select wilson_low(2, 4), wilson_high(2, 4)").fetchone() == (0.15, 0.85)
    path = build_catalog(open_lake(tmp_path / "lake"))
    with duckdb.connect(str(path), read_only=True) as con:
        assert con.execute("select wilson_low(2, 4)").fetchone() == (0.15,)


def test_the_clustered_wilson_counts_a_seeds_two_agreeing_orders_once():
    """Two orders per seed: when they always agree, 40 comparisons are 20 seeds' worth (the design effect is 2: Wilson's
    interval on 20); when no seed's orders are more alike than two seeds are, and when every seed gave one comparison,
    it is Wilson's own."""
    def sums(per_seed):  # (y, m) per seed -> k, n, syy, sym, smm, c
        return (sum(y for y, _ in per_seed), sum(m for _, m in per_seed), sum(y * y for y, _ in per_seed),
                sum(y * m for y, m in per_seed), sum(m * m for _, m in per_seed), len(per_seed))

    agreeing = sums([(2, 2)] * 12 + [(0, 2)] * 8)   # 24 of 40, every seed both or neither
    mixed = sums([(1, 2)] * 20)                      # 20 of 40, every seed one of two: no more alike than seeds
    single = sums([(1, 1)] * 7 + [(0, 1)] * 43)      # one comparison per seed: independent trials
    with duckdb.connect() as con:
        create_macros(con, registry.layout().sql)
        clustered = con.execute("select clustered_wilson_low(?, ?, ?, ?, ?, ?), clustered_wilson_high(?, ?, ?, ?, ?, ?)",
                                [*agreeing, *agreeing]).fetchone()
        assert clustered == con.execute("select wilson_low(12, 20), wilson_high(12, 20)").fetchone()
        assert clustered != con.execute("select wilson_low(24, 40), wilson_high(24, 40)").fetchone()
        assert con.execute("select clustered_wilson_low(?, ?, ?, ?, ?, ?), clustered_wilson_high(?, ?, ?, ?, ?, ?)",
                           [*mixed, *mixed]).fetchone() == con.execute(
            "select wilson_low(20, 40), wilson_high(20, 40)").fetchone()
        assert con.execute("select clustered_wilson_low(?, ?, ?, ?, ?, ?), clustered_wilson_high(?, ?, ?, ?, ?, ?)",
                           [*single, *single]).fetchone() == con.execute(
            "select wilson_low(7, 50), wilson_high(7, 50)").fetchone()


# --- tags that read a view: source_with_board('table'), current_cells('stage') ---------------------------------

def stage_row(run: str, stage: str, *, board: str | None, config: str = "configs/nightly.yaml") -> dict:
    return {"run_id": run, "stage": stage, "planned": 1, "cached": 0, "computed": 1, "failed": 0, "seconds": 1.0,
            "started_at": at(1), "finished_at": at(1), "config": config, "board": board}


def call(run: str, model: str, tokens: int) -> dict:
    return {"run_id": run, "stage": "generate", "role": "chatbot", "model": model, "backend": "scripted",
            "conversations": 2, "failed": 0, "prompt_tokens": tokens, "completion_tokens": tokens, "seconds": 0.5,
            "cost": None, "started_at": at(1)}


def test_source_with_board_fills_a_rows_board_from_its_run(tmp_path):
    """A row that records its board keeps it; an older one (null board) gets its run's (run_boards: here the
    config file's stem); a table with no board column gets its run's board as a last column."""
    lake = open_lake(tmp_path / "lake")
    lake.write("runs", pa.Table.from_pylist([stage_row("new", "generate", board="demo+limit=4"),
                                             stage_row("old", "generate", board=None, config="configs/weekly.yaml")],
                                            schema=RUNS))
    lake.write("backend_calls", pa.Table.from_pylist([call("new", "a", 3), call("old", "a", 5)],
                                                     schema=BACKEND_CALLS))
    with connect(lake) as con:
        assert con.sql("select run_id, board from runs order by run_id").fetchall() == [
            ("new", "demo+limit=4"), ("old", "weekly")]
        assert [d[0] for d in con.sql("select * from runs").description] == RUNS.names  # columns and order kept
        calls = render("{{ source_with_board('backend_calls') }}", lake)
        with_board = con.sql(f"select * from {calls} order by run_id")
        assert [d[0] for d in with_board.description] == [*BACKEND_CALLS.names, "board"]
        assert [(r[0], r[-1]) for r in with_board.fetchall()] == [("new", "demo+limit=4"), ("old", "weekly")]
        assert con.sql("select run_id, prompt_tokens, board from usage order by run_id").fetchall() == [
            ("new", 3, "demo+limit=4"), ("old", 5, "weekly")]


def test_source_with_board_declares_run_boards(tmp_path):
    """The tag reads run_boards, so a file that uses it refs run_boards: created after it, and an error where
    there is no such view."""
    shipped = {m.name: m for m in models(registry.layout().sql)}
    assert {"runs", "plans", "elo", "usage"} <= {name for name, m in shipped.items() if "run_boards" in m.refs}
    assert "source_with_board" not in render("select * from {{ source_with_board('runs') }}",
                                             open_lake(tmp_path / "lake"))

    sql_dir = write_sql(tmp_path / "sql", {"views/a.sql": "select * from {{ source_with_board('runs') }}"})
    assert parse(sql_dir / "views" / "a.sql").refs == ("run_boards",)
    with pytest.raises(CatalogError, match=r"views/a\.sql: ref\('run_boards'\) names no view"):
        create_views(duckdb.connect(), open_lake(tmp_path / "lake"), sql_dir)
    write_sql(sql_dir, {"views/run_boards.sql": "select 'r' as run_id, 'b' as board"})
    assert create_views(duckdb.connect(), open_lake(tmp_path / "lake"), sql_dir) == ["run_boards", "a"]


@pytest.mark.parametrize(("sql", "message"), [
    ("select * from {{ source_with_board('nope') }}", r"views/a\.sql: source_with_board\('nope'\) names no lake table"),
    ("select * from {{ source_with_board('seeds') }}", r"views/a\.sql: lake table 'seeds' has no run_id column"),
    ("select * from {{ source_with_board() }}", r"views/a\.sql: unknown tag"),
    ("select * from {{ current_cells() }}", r"views/a\.sql: unknown tag"),
])
def test_broken_tags_are_named(tmp_path, sql, message):
    sql_dir = write_sql(tmp_path / "sql", {"views/a.sql": sql, "views/run_boards.sql": "select 1 as run_id",
                                           "views/current_cells.sql": "select 1 as stage"})
    with pytest.raises(CatalogError, match=message):
        create_views(duckdb.connect(), open_lake(tmp_path / "lake"), sql_dir)


def test_current_cells_tag_is_one_stages_current_cells(tmp_path):
    lake = open_lake(tmp_path / "lake")
    lake.write("plans", pa.Table.from_pylist([plan("r1", stage, key, {"model": "m"}, hours=1) for stage, key in (
        ("botchat_arena", "a1"), ("botchat_unieval", "u1"), ("mtbench101_judge", "m1"))], schema=PLANS))
    with connect(lake) as con:
        for stage, keys in (("botchat_arena", ["a1"]), ("botchat_unieval", ["u1"]), ("gameeval_spyfall", [])):
            sql = render(f"select cell_key from {{{{ current_cells('{stage}') }}}} order by 1", lake)
            assert [r[0] for r in con.sql(sql).fetchall()] == keys
            assert sql.count('"current_cells"') == 1
    shipped = {m.name: m for m in models(registry.layout().sql)}
    for name in ("botchat_unieval_current", "botchat_arena", "botchat_gteval_comparisons", "mtbench101_turns"):
        assert "current_cells" in shipped[name].refs
    sql_dir = write_sql(tmp_path / "sql", {"metrics/b.sql": "select * from {{ current_cells('botchat_arena') }}"})
    with pytest.raises(CatalogError, match=r"metrics/b\.sql: ref\('current_cells'\) names no view"):
        create_views(duckdb.connect(), open_lake(tmp_path / "lake"), sql_dir)


# --- one build of the views per rendering (views_database) --------------------------------------------------------

def test_connect_builds_the_views_once_per_rendering_and_each_caller_gets_its_own_board(tmp_path, monkeypatch):
    """(``connect(snapshot=False)``, views computed at each query.) A second connect on an unchanged lake creates no view (the first build's database, a new cursor); each
    cursor reads its own board; a table's first file, or a changed SQL file, renders differently and is built
    anew, so nothing reads a stale view."""
    from dialogbench.lake import catalog

    built = []
    execute = catalog.execute
    monkeypatch.setattr(catalog, "execute", lambda con, found: (built.append(len(found)), execute(con, found)))
    lake = open_lake(tmp_path / "lake")
    with connect(lake, board="demo", snapshot=False) as first, \
            connect(lake, board="nightly", snapshot=False) as second:
        assert len(built) == 1
        assert first.execute("select getvariable('board')").fetchone() == ("demo",)
        assert second.execute("select getvariable('board')").fetchone() == ("nightly",)
        assert first.execute("select count(*) from runs").fetchone() == (0,)
    lake.write("runs", pa.Table.from_pylist([stage_row("r1", "generate", board="demo")], schema=RUNS))
    with connect(lake, snapshot=False) as con:  # runs had no file: its view was a typed empty relation, now its files
        assert len(built) == 2 and con.execute("select run_id from runs").fetchall() == [("r1",)]
    lake.write("runs", pa.Table.from_pylist([stage_row("r2", "generate", board="demo")], schema=RUNS))
    with connect(lake, snapshot=False) as con:  # a file more under the same glob: the views read it when queried
        assert len(built) == 2 and con.execute("select count(*) from runs").fetchone() == (2,)
    sql_dir = write_sql(tmp_path / "sql", {"views/v.sql": "select 1 as x", "tests/t.sql": "select 1 from {{ ref('v') }} where x <> 1"})
    with views_database(lake, sql_dir) as con:
        assert len(built) == 3 and con.execute("select x from v").fetchall() == [(1,)]
    write_sql(sql_dir, {"views/v.sql": "select 2 as x"})
    with views_database(lake, sql_dir) as con:
        assert len(built) == 4 and con.execute("select x from v").fetchall() == [(2,)]
    assert data_tests(lake, sql_dir) == {"t": 1} and built[4:] == [0]  # a Snapshot: the macros (none here), no view


def test_a_cursor_outlives_its_database_leaving_the_cache(tmp_path):
    """Built databases beyond the few kept are dropped, not closed: a connection still open keeps working."""
    from dialogbench.lake import catalog

    held = connect(open_lake(tmp_path / "held"))
    for i in range(catalog._BUILT_KEEP + 1):
        with connect(open_lake(tmp_path / f"lake{i}")):
            pass
    assert held.execute("select count(*) from runs").fetchone() == (0,)
    held.close()
