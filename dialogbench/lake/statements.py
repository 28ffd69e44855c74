"""Which SQL the ad-hoc query path runs: one statement that only reads. The second wall behind a connection that has
no file access (``lake.query``): even so, a statement that runs another (EXPLAIN ANALYZE), creates, attaches,
imports or changes a setting is refused before anything runs.

Accepted: SELECT (and what parses to it: FROM-first, WITH, VALUES, DESCRIBE, SHOW, SUMMARIZE), ``EXPLAIN <one of
those>`` (not EXPLAIN ANALYZE, which runs the statement it explains) and ``PRAGMA <name>`` / ``PRAGMA <name>(…)``
for the pragmas in ``READ_PRAGMAS`` (DuckDB parses IMPORT DATABASE and COPY FROM DATABASE as PRAGMA too). Every other
statement type DuckDB parses (``duckdb.StatementType``) is refused, and so is a string of several statements."""

from __future__ import annotations

import re

import duckdb

READ_PRAGMAS = frozenset({"show_tables", "show_tables_expanded", "table_info", "show", "database_list",
                          "database_size", "functions", "collations", "version", "platform", "user_agent",
                          "storage_info", "metadata_info", "show_databases"})
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
    statements = _parse(sql)
    if len(statements) != 1:
        raise QueryRefused(f"the SQL holds {len(statements)} statements; " + HOW)
    statement = statements[0]
    text = _LEADING.sub("", statement.query, count=1).rstrip().rstrip(";").rstrip()
    kind = statement.type
    if kind == duckdb.StatementType.SELECT:
        return
    if kind == duckdb.StatementType.EXPLAIN:
        explain = _EXPLAIN.fullmatch(text)
        inner = _parse(explain["inner"], quiet=True) if explain else []
        if len(inner) == 1 and inner[0].type == duckdb.StatementType.SELECT:
            return
        raise QueryRefused("the statement is an EXPLAIN of something other than one SELECT (EXPLAIN ANALYZE runs "
                           "the statement it explains); " + HOW)
    if kind == duckdb.StatementType.PRAGMA:
        pragma = _PRAGMA.fullmatch(text)
        if pragma and pragma["name"].lower() in READ_PRAGMAS:
            return
        raise QueryRefused(f"the statement ({' '.join(text.split()[:2])} …) is a PRAGMA that does not only read; " + HOW)
    raise QueryRefused(f"the statement is {kind.name}; " + HOW)


def _parse(sql: str, *, quiet: bool = False) -> list:
    try:
        return duckdb.extract_statements(sql)
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
