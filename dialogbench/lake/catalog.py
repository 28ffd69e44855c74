"""DuckDB views over the lake, defined by the files in ``sql/`` (see ``sql/README.md``): one view per file,
created in the order their declared dependencies give (``{{ ref('view') }}``), reading lake tables through
``{{ source('table') }}`` and generated reference tables through ``{{ reference('name') }}``;
``{{ computed_cells() }}``, ``{{ verdicts() }}`` and ``{{ answers() }}`` stand for every registered table that holds
cells / judge verdicts / named answers. Two tags read a view and declare the ref for it:
``{{ source_with_board('table') }}`` (a lake table with ``board`` the board each row's run published to, from
``run_boards``) and ``{{ current_cells('stage') }}`` (one stage's rows of ``current_cells``)."""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
import shutil
import stat
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence, Union

import duckdb
import pyarrow as pa

from dialogbench.lake import links, space
from dialogbench.lake.schemas import VERDICTS
from dialogbench.lake.store import Lake, _duck_type, fsync_path

log = logging.getLogger("dialogbench.catalog")
SQL_DIR = Path(os.environ.get("DIALOGBENCH_SQL_DIR", Path(__file__).resolve().parents[2] / "sql")).absolute()  # the query's child changes folder
VIEW_DIRS = ("views", "metrics", "report")  # every file of these is a view named after the file
MACROS_DIR = "macros"                       # SQL macros (CREATE MACRO statements), created before the views
TESTS_DIR = "tests"                         # data tests: each must return zero rows

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_TAG = re.compile(r"\{\{\s*(?P<tag>[a-z_]+)\(\s*(?:'(?P<arg>" + _NAME + r")')?\s*\)\s*\}\}")
_ANY_TAG = re.compile(r"\{\{.*?\}\}", re.S)
TAGS = {"ref": True, "source": True, "reference": True, "computed_cells": False, "verdicts": False,
        "answers": False, "source_with_board": True, "current_cells": True}  # -> takes a name
READS = {"source_with_board": "run_boards", "current_cells": "current_cells"}  # tag -> the view it reads (a ref)
TAG_LIST = ("{{ ref('view') }}, {{ source('table') }}, {{ reference('name') }}, {{ computed_cells() }}, "
            "{{ verdicts() }}, {{ answers() }}, {{ source_with_board('table') }} or {{ current_cells('stage') }}")


class CatalogError(RuntimeError):
    """A view file that cannot be created: an unknown tag, ref, source or reference, a cycle, broken SQL."""


@dataclass(frozen=True)
class Model:
    """One SQL file: the view (or data test) ``name`` and the views it reads (``refs``, in file order)."""

    name: str
    path: Path
    sql: str
    refs: tuple[str, ...]


def parse(path: Path) -> Model:
    """The file's model: its refs are the views its ``ref('x')`` tags name and those its ``source_with_board('x')``
    / ``current_cells('x')`` tags read (``READS``); raises naming the file for a tag not in ``TAG_LIST``."""
    sql = path.read_text()
    refs: list[str] = []
    for m in _ANY_TAG.finditer(sql):
        tag = _TAG.fullmatch(m.group(0))
        if tag is None or tag["tag"] not in TAGS or TAGS[tag["tag"]] != (tag["arg"] is not None):
            raise CatalogError(f"{path}: unknown tag {m.group(0)!r} (expected {TAG_LIST})")
        ref = tag["arg"] if tag["tag"] == "ref" else READS.get(tag["tag"])
        if ref is not None and ref not in refs:
            refs.append(ref)
    return Model(path.stem, path, sql, tuple(refs))


SqlFolders = Union[Path, Sequence[Path]]


def folders(sql: SqlFolders) -> tuple[Path, ...]:
    """The SQL folders ``sql`` names: one folder, or several (a lake's ``layout.sql``: the shared one, then each
    family's)."""
    return (Path(sql),) if isinstance(sql, (str, os.PathLike)) else tuple(Path(p) for p in sql)


def models(sql: SqlFolders) -> list[Model]:
    """Every view file of ``VIEW_DIRS`` of each SQL folder, by folder then name; two files of one name are an
    error."""
    found: dict[str, Model] = {}
    for folder in folders(sql):
        for d in VIEW_DIRS:
            for path in sorted((folder / d).glob("*.sql")):
                if path.stem in found:
                    raise CatalogError(f"{path}: a view {path.stem!r} is already defined by {found[path.stem].path}")
                found[path.stem] = parse(path)
    return list(found.values())


def ordered(views: list[Model]) -> list[Model]:
    """``views`` with every view after the views it refs (otherwise in the given order); raises naming the file
    for a ref to no view, and the views of a cycle."""
    by_name = {v.name: v for v in views}
    done: dict[str, Model] = {}
    visiting: list[str] = []

    def visit(view: Model) -> None:
        if view.name in done:
            return
        if view.name in visiting:
            cycle = visiting[visiting.index(view.name):] + [view.name]
            raise CatalogError(f"{view.path}: dependency cycle {' -> '.join(cycle)}")
        visiting.append(view.name)
        for ref in view.refs:
            if ref not in by_name:
                raise CatalogError(f"{view.path}: ref('{ref}') names no view (no <sql folder>/{{{','.join(VIEW_DIRS)}}}/"
                                   f"{ref}.sql)")
            visit(by_name[ref])
        visiting.pop()
        done[view.name] = view

    for view in views:
        visit(view)
    return list(done.values())


@dataclass
class Context:
    """What tags resolve against: the lake's tables and reference tables (its ``layout``)."""

    lake: Lake
    tables: dict = field(default_factory=dict)                                  # name -> cells.Table
    references: dict[str, Callable[[], pa.Table]] = field(default_factory=dict)
    _built: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, lake: Lake) -> "Context":
        tables, references = dict(lake.layout.tables), dict(lake.layout.references)
        for name in references.keys() & tables.keys():
            raise CatalogError(f"{name!r} is both a lake table and a reference table")
        return cls(lake.pinned(), tables, references)

    def source(self, name: str) -> str:
        table = self.tables[name]
        return self.lake.relation_sql(table.name, table.schema)

    def source_with_board(self, name: str) -> str:
        """The lake table's rows with ``board`` the board each row's run published to: the row's own ``board`` where
        the table records one (null in files written before it did), else its run's (the ``run_boards`` view, by
        ``run_id``). A table with a ``board`` column keeps its columns and their order; one without gets ``board``
        last."""
        table = self.tables[name]
        if "run_id" not in table.schema.names:
            raise CatalogError(f"lake table {name!r} has no run_id column: source_with_board() reads its run's board")
        board = ("t.* REPLACE (coalesce(t.board, b.board) AS board)" if "board" in table.schema.names
                 else "t.*, b.board")
        return (f"(SELECT {board} FROM {self.source(name)} AS t "
                f'LEFT JOIN (SELECT run_id, board FROM "{READS["source_with_board"]}") AS b USING (run_id))')

    def reference(self, name: str) -> str:
        if name not in self._built:
            self._built[name] = values_sql(self.references[name]())
        return self._built[name]

    def computed_cells(self) -> str:
        """Every computed cell's key (``cell_key``) of every table that holds cells (``Table.done`` set)."""
        parts = []
        for table in self.tables.values():
            if table.done is None:
                continue
            if table.key not in table.schema.names:
                raise CatalogError(f"lake table {table.name!r} holds cells (done={table.done!r}) but its schema "
                                   f"has no key column {table.key!r}")
            parts.append(table.computed_keys_sql(self.lake))
        return f"({' UNION ALL '.join(parts)})" if parts else "(SELECT CAST(NULL AS VARCHAR) AS cell_key WHERE false)"

    def verdicts(self) -> str:
        """The shared verdict columns (``lake.schemas.VERDICTS``) of every judge verdict of every verdict table."""
        columns = ", ".join(f'"{name}"' for name in VERDICTS.names)
        parts = []
        for table in self.tables.values():
            if not table.verdicts:
                continue
            if table.schema.names[:len(VERDICTS)] != VERDICTS.names:
                raise CatalogError(f"lake table {table.name!r} holds verdicts but its schema does not start with the "
                                   "shared verdict columns (declare it with cells.shared_tables.verdict_table)")
            parts.append(f"SELECT {columns} FROM {self.lake.relation_sql(table.name, table.schema)}")
        return f"({' UNION ALL '.join(parts)})" if parts else values_sql(VERDICTS.empty_table())


    def answers(self) -> str:
        """Every verdict of every verdict table that names its answer (``Table.answer``), one row each: cell_key,
        protocol, judge, model, parsed, ``answer`` (the answer columns as text, joined by a space, nulls left out:
        'No', 'Yes 5', 'conversation_1', '7') and ``score`` (the answer as a number when it is one numeric column,
        a rating; else null)."""
        parts = []
        for table in self.tables.values():
            if not (table.verdicts and table.answer):
                continue
            text = ", ".join(f'CAST("{c}" AS VARCHAR)' for c in table.answer)
            numeric = (len(table.answer) == 1 and
                       (pa.types.is_integer(table.schema.field(table.answer[0]).type)
                        or pa.types.is_floating(table.schema.field(table.answer[0]).type)))
            score = f'CAST("{table.answer[0]}" AS DOUBLE)' if numeric else "CAST(NULL AS DOUBLE)"
            parts.append(f"SELECT cell_key, protocol, judge, model, parsed, concat_ws(' ', {text}) AS answer, "
                         f"{score} AS score FROM {self.lake.relation_sql(table.name, table.schema)}")
        empty = ("(SELECT CAST(NULL AS VARCHAR) AS cell_key, CAST(NULL AS VARCHAR) AS protocol, CAST(NULL AS VARCHAR) "
                 "AS judge, CAST(NULL AS VARCHAR) AS model, CAST(NULL AS BOOLEAN) AS parsed, CAST(NULL AS VARCHAR) AS "
                 "answer, CAST(NULL AS DOUBLE) AS score WHERE false)")
        return f"({' UNION ALL '.join(parts)})" if parts else empty


def render(sql: str, lake: Lake, context: Context | None = None, *, path: Path | str = "<sql>") -> str:
    """``sql`` with its tags filled in: a ref is the view's name, a source the table's Parquet files (typed,
    empty when it has none), source_with_board() that with each row's board filled from run_boards, a reference an
    inline typed VALUES relation, computed_cells() a union of keys, verdicts() a union of the verdict tables' shared
    columns, current_cells('stage') the stage's rows of current_cells."""
    context = context or Context.load(lake)

    def fill(m: re.Match) -> str:
        tag, name = m["tag"], m["arg"]
        if tag == "ref":
            return f'"{name}"'
        if tag == "current_cells":
            return f"(SELECT * FROM \"{READS[tag]}\" WHERE stage = '{name}')"
        if tag in ("source", "source_with_board"):
            if name not in context.tables:
                raise CatalogError(f"{path}: {tag}('{name}') names no lake table (registered: "
                                   f"{', '.join(sorted(context.tables))})")
            if tag == "source":
                return context.source(name)
            try:
                return context.source_with_board(name)
            except CatalogError as exc:
                raise CatalogError(f"{path}: {exc}") from exc
        if tag == "reference":
            if name not in context.references:
                raise CatalogError(f"{path}: reference('{name}') names no reference table (registered: "
                                   f"{', '.join(sorted(context.references)) or 'none'})")
            return context.reference(name)
        if tag == "answers":
            return context.answers()
        return context.verdicts() if tag == "verdicts" else context.computed_cells()

    return _TAG.sub(fill, sql)


def values_sql(table: pa.Table) -> str:
    """``table`` as a self-contained typed relation (no Python object behind it, so a persistent catalog
    file that holds it works in plain ``duckdb``)."""
    columns = [f'"{f.name}"' for f in table.schema]
    types = [_duck_type(f.type, exact=True) for f in table.schema]
    if table.num_rows == 0:
        return "(SELECT " + ", ".join(f"CAST(NULL AS {t}) AS {c}" for c, t in zip(columns, types)) + " WHERE false)"
    rows = zip(*(table.column(i).to_pylist() for i in range(table.num_columns)))
    values = ",\n    ".join("(" + ", ".join(_literal(v) for v in row) + ")" for row in rows)
    select = ", ".join(f"CAST(c{i} AS {t}) AS {c}" for i, (c, t) in enumerate(zip(columns, types)))
    names = ", ".join(f"c{i}" for i in range(len(columns)))
    return f"(SELECT {select} FROM (VALUES\n    {values}\n) AS v({names}))"


def _literal(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"'{value}'::DOUBLE"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    raise TypeError(f"no SQL literal for {type(value).__name__} in a reference table")


def macro_statements(sql: SqlFolders) -> list[tuple[Path, str]]:
    """Every ``<folder>/macros/*.sql`` of ``sql`` (``CREATE OR REPLACE MACRO`` statements: formulas several views
    share), with its file."""
    return [(path, path.read_text()) for folder in folders(sql) for path in sorted((folder / MACROS_DIR).glob("*.sql"))]


def create_macros(con: duckdb.DuckDBPyConnection, sql: SqlFolders) -> None:
    execute(con, macro_statements(sql))


CREATE_VIEW = "CREATE OR REPLACE VIEW"


def statements(lake: Lake, sql: SqlFolders | None = None) -> list[tuple[Path, str]]:
    """What ``create_views`` runs, each with the file it comes from: the macros, then a ``CREATE OR REPLACE VIEW``
    per view file, each after the views it refs. Raises ``CatalogError`` naming a file whose tags are broken."""
    sql = lake.layout.sql if sql is None else sql
    return [*macro_statements(sql),
            *((model.path, f'{CREATE_VIEW} "{model.name}" AS {view}') for model, view in rendered(lake, sql))]


def rendered(lake: Lake, sql: SqlFolders) -> list[tuple[Model, str]]:
    """Each view file of ``sql``, after the views it refs, with its SQL for ``lake`` (tags filled in)."""
    context = Context.load(lake)
    return [(model, render(model.sql, lake, context, path=model.path)) for model in ordered(models(sql))]


def execute(con: duckdb.DuckDBPyConnection, found: list[tuple[Path, str]]) -> None:
    """Run ``statements``' output on ``con``; raises ``CatalogError`` naming the file whose SQL DuckDB refuses."""
    for path, statement in found:
        try:
            con.execute(statement)
        except duckdb.Error as exc:
            raise CatalogError(f"{path}: {exc}") from exc


def create_views(con: duckdb.DuckDBPyConnection, lake: Lake, sql: SqlFolders | None = None) -> list[str]:
    """Create the macros, then every view, each after the views it refs; returns the views' names in creation
    order. Raises ``CatalogError`` naming the file whose tags or SQL are broken."""
    found = statements(lake, sql)
    execute(con, found)
    return [path.stem for path, statement in found if statement.startswith(CREATE_VIEW)]


# Databases whose views this process built, by the SQL that built them. DuckDB binds a view as it creates it, which
# for ~70 views takes most of a second, and a run opens the views about ten times (a stage, the checks, the report,
# the history...). A view's SQL names its files (the table's glob, or the list of its readable files) and is bound
# again at each query, so a database built from the same statements is what a new build would give: each caller
# gets its own cursor of it (its own board variable and temporary objects). The views of a lake whose files are
# listed differently, or whose SQL files changed, render differently and are built anew.
_BUILT: "OrderedDict[str, duckdb.DuckDBPyConnection]" = OrderedDict()
_BUILT_KEEP = 4
_BUILT_LOCK = threading.Lock()


def views_database(lake: Lake, sql: SqlFolders | None = None) -> duckdb.DuckDBPyConnection:
    """A new cursor of an in-memory database holding ``statements(lake, sql)``: built by the first call that renders
    them so, shared by the later ones."""
    found = statements(lake, sql)
    digest = hashlib.sha256("\0".join(f"{path}\0{statement}" for path, statement in found).encode()).hexdigest()
    with _BUILT_LOCK:
        database = _BUILT.get(digest)
        if database is None:
            database = duckdb.connect()
            try:
                execute(database, found)
            except BaseException:
                database.close()
                raise
            _BUILT[digest] = database
            while len(_BUILT) > _BUILT_KEEP:  # dropped, not closed: a cursor still open keeps its database
                _BUILT.popitem(last=False)
        _BUILT.move_to_end(digest)
        return database.cursor()


def connect(lake: Lake, *, board: str | None = None, snapshot: bool = True) -> "Snapshot | duckdb.DuckDBPyConnection":
    """An in-memory connection with every view: what a run's stages, checks and report read. ``board``: the board its
    board-scoped views read (current_board; None: the lake's default board, default_board). ``snapshot`` (the
    default): each view computed once for the connection, when a statement first reads it (``Snapshot``); False:
    the views of ``views_database``, computed again from the files at every query (a connection held while the lake
    changes)."""
    if snapshot:
        return Snapshot.of(lake, board=board)
    con = views_database(lake)
    read_board(con, board)
    return con


@dataclass(frozen=True)
class View:
    """A view as ``Snapshot`` computes it: its file, the views it reads and its SQL, tags filled in."""

    path: Path
    refs: tuple[str, ...]
    sql: str


_WORD = re.compile(_NAME)
_SETS = re.compile(r"^\s*(SET|RESET)\b", re.I)


class Snapshot:
    """A reading connection that computes each view once. DuckDB runs a view's whole SQL, the views it reads
    included, at every query: a report's ~50 queries computed the lake's base views (runs, boards, verdicts...)
    ~50 times, most of its time, and creating the ~90 views (DuckDB binds each as it is created) took a second
    before the first query. Here no view is created: before a statement runs, each view it names (any word of it
    that is a view's name) and every view those read is stored, parents first, as a temporary table of the view's
    name, computed from its SQL over the tables stored before it. So the connection reads the lake as it was when it
    first read each view (a report reads one state of the lake throughout), and a statement that sets a variable
    (the board) drops the tables first. A view that fails to compute is created as a view instead, so the statement
    fails as it would have (one that does not even bind, as a view whose reading fails naming its file). Everything
    else is the cursor's (``register``, ``close``...)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, views: dict[str, View]) -> None:
        self._con = con
        self._views = views
        self._stored: set[str] = set()
        self._failed: set[str] = set()

    @classmethod
    def of(cls, lake: Lake, sql: SqlFolders | None = None, *, board: str | None = None) -> "Snapshot":
        """A snapshot of ``lake``'s views (those of ``sql``; default: the lake's), its board-scoped views reading
        ``board``: a new in-memory database holding the macros only."""
        sql = lake.layout.sql if sql is None else sql
        views = {model.name: View(model.path, model.refs, view) for model, view in rendered(lake, sql)}
        con = duckdb.connect()
        try:
            execute(con, macro_statements(sql))
            read_board(con, board)
        except BaseException:
            con.close()
            raise
        return cls(con, views)

    def _needed(self, statement: str) -> list[str]:
        """The views ``statement`` names and those they read, parents first, not stored yet."""
        named = {w.lower() for w in _WORD.findall(statement)} & self._views.keys()
        wanted: set[str] = set()
        todo = list(named)
        while todo:
            name = todo.pop()
            if name not in wanted:
                wanted.add(name)
                todo.extend(self._views[name].refs)
        return [v for v in self._views if v in wanted and v not in self._stored and v not in self._failed]

    def _store(self, statement: object) -> None:
        if not isinstance(statement, str):
            return
        if _SETS.match(statement):
            self.forget()
            return
        for name in self._needed(statement):
            view = self._views[name]
            try:
                self._con.execute(f'CREATE TEMP TABLE "{name}" AS {view.sql}')
            except duckdb.Error as exc:
                self._failed.add(name)
                try:
                    self._con.execute(f'CREATE TEMP VIEW "{name}" AS {view.sql}')
                except duckdb.Error:  # it does not bind: reading it says why, naming its file
                    self._con.execute(f'CREATE TEMP VIEW "{name}" AS SELECT error({_literal(f"{view.path}: {exc}")})')
            else:
                self._stored.add(name)

    def forget(self) -> None:
        """Drop the stored views: the next statements compute them again."""
        for name in self._stored | self._failed:
            self._con.execute(f'DROP TABLE IF EXISTS temp."{name}"')
            self._con.execute(f'DROP VIEW IF EXISTS temp."{name}"')
        self._stored.clear()
        self._failed.clear()

    def execute(self, query: object, *args, **kwargs):
        self._store(query)
        return self._con.execute(query, *args, **kwargs)

    def sql(self, query: object, *args, **kwargs):
        self._store(query)
        return self._con.sql(query, *args, **kwargs)

    query = sql

    def __getattr__(self, name: str):
        return getattr(self._con, name)

    def __enter__(self) -> "Snapshot":
        return self

    def __exit__(self, *exc) -> None:
        self._con.close()


def read_board(con: duckdb.DuckDBPyConnection, board: str | None) -> None:
    """Make ``con``'s board-scoped views read ``board`` (None: the lake's default board)."""
    if board is not None:
        con.execute("SET VARIABLE board = ?", [board])
    else:
        con.execute("RESET VARIABLE board")


CATALOG = "catalog.duckdb"
# The saved catalog's views name their files relative to ``lake_root()``: the folder of the database file the
# session opened. DuckDB sets ``temp_directory`` to ``<that file>.tmp`` (absolute, or relative as the path was
# given), and a constant expression, unlike a subquery, may stand in a table function's arguments (a view binds
# when it is queried). So the catalog reads the files beside it from any working directory, after the lake is
# copied or moved, and never those of the lake it was built in. When the session's file is not a catalog.duckdb
# (an in-memory session that ATTACHes it, a changed temp_directory) it raises rather than guess;
# SET VARIABLE lake_root = '/path/to/lake/' overrides it.
LAKE_ROOT = "lake_root()"
LAKE_ROOT_MACRO = f"""CREATE OR REPLACE MACRO lake_root() AS CASE
    WHEN getvariable('lake_root') IS NOT NULL THEN rtrim(CAST(getvariable('lake_root') AS VARCHAR), '/') || '/'
    WHEN parse_filename(current_setting('temp_directory')) = '{CATALOG}.tmp'
        THEN left(current_setting('temp_directory'), -length('{CATALOG}.tmp'))
    ELSE error('the views read the files beside {CATALOG}, found from temp_directory (<catalog file>.tmp), but '
               || 'temp_directory is ' || current_setting('temp_directory') || ': open <lake>/{CATALOG} itself, '
               || 'or SET VARIABLE lake_root = ''/path/to/lake/''')
END"""


# What the saved catalog is written as: the oldest storage format that holds its views and that the DuckDB versions
# whose binder reads them can open (1.4 and newer; 1.3 and older cannot bind some of the views, and refuse the file
# with a clear "newer version" error instead). Checked with the DuckDB 1.5.6 CLI and the 1.4.3 and 1.5.6 Python
# packages.
STORAGE_VERSION = "v1.4.0"


def catalog_problem(root: Path) -> "links.LakeLinkError | None":
    """Why ``<root>/catalog.duckdb`` (or its write-ahead log) cannot be replaced by a new catalog: something in its
    place that is not a file (a folder: the rename over it would fail, after the whole run computed), or a link (the
    lake follows none); None when it is a file or absent. A run's preflight and ``build_catalog`` ask before any
    work."""
    for path in (root / CATALOG, root / f"{CATALOG}.wal"):
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            continue
        except OSError:  # unreadable folder, a name too long...: the build says what is wrong
            continue
        if stat.S_ISLNK(mode):
            return links.linked(path)
        if not stat.S_ISREG(mode):
            return links.not_plain(path, mode)
    return None


def catalog_digest(found: list[tuple[Path, str]]) -> str:
    """What a saved catalog is built from, as one string: its statements (``statements`` of the lake rooted at
    ``LAKE_ROOT``: the SQL files, the tables' files and schemas), the lake_root macro, this DuckDB and the storage
    version it is written in."""
    text = "\0".join([duckdb.__version__, STORAGE_VERSION, LAKE_ROOT_MACRO,
                      *(f"{path}\0{statement}" for path, statement in found)])
    return "dialogbench catalog sha256:" + hashlib.sha256(text.encode()).hexdigest()


def built_from(path: Path) -> str | None:
    """The digest (``catalog_digest``) the saved catalog at ``path`` was built from, as recorded on its lake_root
    macro, provided its views and macros are still those it was built with (a view added or replaced since by hand:
    None); None also when a write-ahead log lies beside it or it does not open (no file, damaged, another format).
    Read from the file opened read-only."""
    if not path.is_file() or Path(f"{path}.wal").exists():
        return None
    try:
        with duckdb.connect(str(path), read_only=True) as con:
            row = con.execute("SELECT comment FROM duckdb_functions() WHERE function_name = 'lake_root' "
                              "AND database_name = current_database()").fetchone()
            stored = _stored(con)
    except duckdb.Error:
        return None
    digest, _, built = (row[0] if row and isinstance(row[0], str) else "").rpartition(" ")
    return digest if digest and built == stored else None


def _stored(con: duckdb.DuckDBPyConnection) -> str:
    """A digest of the views and macros the database holds: each one's kind, name and the words of its SQL as DuckDB
    stores it, sorted (DuckDB writes a column list such as EXCLUDE's in an order that differs from one load to the
    next)."""
    rows = con.execute("SELECT 'view', view_name, sql FROM duckdb_views() WHERE NOT internal "
                       "AND database_name = current_database() UNION ALL "
                       "SELECT 'macro', function_name, macro_definition FROM duckdb_functions() "
                       "WHERE function_type LIKE '%macro' AND NOT internal AND database_name = current_database() "
                       "ORDER BY ALL").fetchall()
    words = [(kind, name, sorted(_SQL_WORD.findall(sql or ""))) for kind, name, sql in rows]
    return hashlib.sha256(repr(words).encode()).hexdigest()


_SQL_WORD = re.compile(r"\w+|[^\w\s]")


def rebuild_existing_catalog(lake: Lake) -> None:
    """Build the lake's catalog again when it has one: its views may name files a command just moved, replaced or
    deleted (repair, verify's quarantine, a Delta lake's compact and vacuum)."""
    if (lake.root / CATALOG).exists():
        build_catalog(lake)


def build_catalog(lake: Lake) -> Path:
    """Write ``<lake>/catalog.duckdb`` so plain ``duckdb data_lake/catalog.duckdb`` sees the views. The views name the
    lake's files relative to the catalog file (``LAKE_ROOT_MACRO``), so the file is the same whatever path the lake
    was given, and stays right when the lake is copied or moved.

    It is built whole into a new temp file (``lake_root`` set for the build, since the temp file's name is not the
    catalog's) and renamed over the old one, so a reader never sees half a catalog, a damaged or unreadable catalog is
    simply replaced, and one held open by a reader is replaced too (the reader keeps the old file until it closes
    it). Any stale write-ahead log of the old file is removed first: DuckDB would refuse the new file with it. A
    catalog that opens and records the digest of what it would be built from now (``catalog_digest``: same SQL,
    same tables' schemas, their files read through the same globs) is kept as it is, and building it costs about
    a second of DuckDB binding every view, at the end of every run. Raises
    ``CatalogError`` for a broken view, ``links.LakeLinkError`` (before any work) when ``catalog.duckdb`` is a folder or
    anything but a file (``catalog_problem``) and ``space.DiskFull`` when the disk is full; the temp file never stays."""
    path = lake.root / CATALOG
    problem = catalog_problem(lake.root)
    if problem is not None:
        raise problem
    found = statements(lake.rooted(LAKE_ROOT))
    digest = catalog_digest(found)
    if built_from(path) == digest:
        return path
    lake.root.mkdir(parents=True, exist_ok=True)
    tmp = lake.root / f".{CATALOG}.{uuid.uuid4().hex[:8]}.tmp"
    leftovers = [tmp, Path(f"{tmp}.wal")]
    try:
        with duckdb.connect(str(tmp), config={"storage_compatibility_version": STORAGE_VERSION}) as con:
            con.execute("SET VARIABLE lake_root = ?", [str(lake.root.resolve()) + "/"])  # this session only
            con.execute(LAKE_ROOT_MACRO)
            execute(con, found)
        with duckdb.connect(str(tmp)) as con:  # the views as a reader loads them (DuckDB stores them normalised)
            con.execute(f"COMMENT ON MACRO lake_root IS '{digest} {_stored(con)}'")
        fsync_path(tmp)
        Path(f"{path}.wal").unlink(missing_ok=True)
        os.replace(tmp, path)  # replaces a link too, never writes through one (the CLI refuses a linked catalog)
        fsync_path(lake.root)
    except Exception as exc:
        if space.is_disk_full(exc):
            raise space.disk_full(path, lake.root, exc) from exc
        raise
    finally:
        for leftover in leftovers:
            leftover.unlink(missing_ok=True)
        shutil.rmtree(f"{tmp}.tmp", ignore_errors=True)  # DuckDB's spill folder for the temp file, if it made one
    return path


def data_tests(lake: Lake, sql: SqlFolders | None = None, *, board: str | None = None) -> dict[str, int]:
    """Run ``<folder>/tests/*.sql`` of each SQL folder (each must return zero rows; tags as in views) with the board-scoped views reading
    ``board`` (None: the default board); returns the failing ones with row counts."""
    failing = {}
    sql = lake.layout.sql if sql is None else sql
    views = {m.name for m in models(sql)}
    with Snapshot.of(lake, sql, board=board) as con:
        context = Context.load(lake)
        for path in [p for folder in folders(sql) for p in sorted((folder / TESTS_DIR).glob("*.sql"))]:
            test = parse(path)
            for ref in test.refs:
                if ref not in views:
                    raise CatalogError(f"{path}: ref('{ref}') names no view")
            rows = con.sql(render(test.sql, lake, context, path=path)).fetchall()
            if rows:
                failing[path.stem] = len(rows)
    return failing
