"""Which SQL the ad-hoc query path runs: one statement that only reads. The second wall behind a connection that has
no file access (``lake.query``): even so, a statement that runs another (EXPLAIN ANALYZE), creates, attaches,
imports or changes a setting is refused before anything runs.

Accepted: SELECT (and what parses to it: FROM-first, WITH, VALUES, DESCRIBE, SHOW, SUMMARIZE), ``EXPLAIN <one of
those>`` (not EXPLAIN ANALYZE, which runs the statement it explains) and ``PRAGMA <name>`` / ``PRAGMA <name>(…)``
for the pragmas in ``READ_PRAGMAS`` (DuckDB parses IMPORT DATABASE and COPY FROM DATABASE as PRAGMA too). Every other
statement type DuckDB parses (``duckdb.StatementType``; one this DuckDB's Python API has no name for, such as UPDATE
EXTENSIONS, too) is refused, and so is a string of several statements.

A SELECT may nest another statement: ``WITH x AS (COPY … TO …) SELECT …`` parses as a SELECT (and so do INSERT,
UPDATE and DELETE in a WITH). So the parse tree of a SELECT (DuckDB's ``json_serialize_sql``) is walked, and every
query node in it must be one of ``READ_NODES``; one DuckDB cannot serialise is refused too. Statements are parsed on
a connection of their own with no worker thread, so the process that forks the query's child holds none of DuckDB's
threads (``lake.confined``)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading

import duckdb

READ_PRAGMAS = frozenset({"show_tables", "show_tables_expanded", "table_info", "show", "database_list",
                          "database_size", "functions", "collations", "version", "platform", "user_agent",
                          "storage_info", "metadata_info", "show_databases"})
READ_NODES = frozenset({"SELECT_NODE", "SET_OPERATION_NODE", "RECURSIVE_CTE_NODE", "CTE_NODE"})
_LEADING = re.compile(r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", re.S)  # whitespace and comments before a statement
_EXPLAIN = re.compile(r"EXPLAIN\s+(?P<inner>.+)", re.S | re.I)
_PRAGMA = re.compile(r"PRAGMA\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(?:\(.*\))?\s*;?\s*", re.S | re.I)
HOW = ("`dialogbench query` runs one statement that only reads the lake: SELECT (FROM-first, WITH, DESCRIBE, SHOW, "
       "SUMMARIZE), EXPLAIN of one, or a PRAGMA that reads (show_tables, table_info, …). To write a result to a file "
       "use `dialogbench export \"SELECT …\" --out FILE`; the lake's own files are written only by runs.")


class QueryRefused(ValueError):
    """SQL the query path does not run, or a query that failed (the message says which and why, on one line)."""


def check_reads_only(sql: str) -> None:
    """Raise ``QueryRefused`` unless ``sql`` is one statement that only reads."""
    with _parser() as con:
        statements = _parse(con, sql)
        if len(statements) != 1:
            raise QueryRefused(f"the SQL holds {len(statements)} statements; " + HOW)
        _check_one(con, statements[0])


def _check_one(con: duckdb.DuckDBPyConnection, statement) -> None:
    text = _LEADING.sub("", statement.query, count=1).rstrip().rstrip(";").rstrip()
    kind = _kind(statement, text)
    if kind == duckdb.StatementType.SELECT:
        _check_nodes(con, text)
        return
    if kind == duckdb.StatementType.EXPLAIN:
        explain = _EXPLAIN.fullmatch(text)
        inner = _parse(con, explain["inner"], quiet=True) if explain else []
        if len(inner) == 1 and _kind(inner[0], explain["inner"]) == duckdb.StatementType.SELECT:
            _check_nodes(con, explain["inner"])
            return
        raise QueryRefused("the statement is an EXPLAIN of something other than one SELECT (EXPLAIN ANALYZE runs "
                           "the statement it explains); " + HOW)
    if kind == duckdb.StatementType.PRAGMA:
        pragma = _PRAGMA.fullmatch(text)
        if pragma and pragma["name"].lower() in READ_PRAGMAS:
            return
        raise QueryRefused(f"the statement ({' '.join(text.split()[:2])} …) is a PRAGMA that does not only read; " + HOW)
    raise QueryRefused(f"the statement is {kind.name}; " + HOW)


def _kind(statement, text: str) -> duckdb.StatementType:
    try:
        return statement.type
    except ValueError:  # a statement type this DuckDB's Python API has no name for (UPDATE EXTENSIONS in 2.0)
        raise QueryRefused(f"the statement ({' '.join(text.split()[:2])} …) is of a kind this DuckDB's Python API "
                           "does not name; " + HOW) from None


def _check_nodes(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Refuse a SELECT whose parse tree nests anything but a read (a COPY, an INSERT in a WITH)."""
    try:
        tree = json.loads(con.execute("SELECT json_serialize_sql(?)", [sql]).fetchone()[0])
    except (duckdb.Error, TypeError, ValueError) as exc:
        raise QueryRefused(f"the query could not be checked ({one_line(str(exc))}); " + HOW) from None
    if tree.get("error"):
        raise QueryRefused(f"the query could not be checked ({one_line(str(tree.get('error_message')))}); " + HOW)
    nested = sorted(_nodes(tree) - READ_NODES)
    if nested:
        names = ", ".join(node.removesuffix("_NODE").removesuffix("_QUERY").replace("_", " ") for node in nested)
        raise QueryRefused(f"the statement nests {names}, which does not only read; " + HOW)


def _nodes(tree) -> set[str]:
    """The types of the query nodes anywhere in a serialised parse tree."""
    found, stack = set(), [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            kind = item.get("type")
            if isinstance(kind, str) and kind.endswith("_NODE"):
                found.add(kind)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


_PARSERS: dict[int, tuple[threading.Lock, duckdb.DuckDBPyConnection]] = {}


@contextlib.contextmanager
def _parser():
    """This process's connection that only parses (in memory, one thread: no worker thread, no file access), one
    caller at a time; a forked child makes its own rather than use a copy another thread may have been using."""
    pid = os.getpid()
    if pid not in _PARSERS:
        con = duckdb.connect(config={"threads": 1, "enable_external_access": False,
                                     "autoload_known_extensions": False, "autoinstall_known_extensions": False})
        entry = (threading.Lock(), con)
        if _PARSERS.setdefault(pid, entry) is not entry:  # another thread made one meanwhile
            con.close()
    lock, con = _PARSERS[pid]
    with lock:
        yield con


def _parse(con: duckdb.DuckDBPyConnection, sql: str, *, quiet: bool = False) -> list:
    try:
        return con.extract_statements(sql)
    except duckdb.Error as exc:
        if quiet:
            return []
        raise QueryRefused(f"the query does not parse: {one_line(str(exc))}") from None


def one_line(message: str) -> str:
    """DuckDB's message on one line: its first paragraph (the error, and a "Did you mean" hint), without the
    LINE n: / caret lines that point into the SQL."""
    lines = []
    for line in message.splitlines():
        if not line.strip():
            if lines:
                break
            continue
        if line.startswith("LINE ") or not line.strip().strip("^"):
            break
        lines.append(line.strip())
    return " ".join(lines) or message.strip()
