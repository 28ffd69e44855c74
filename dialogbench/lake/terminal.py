"""What ``dialogbench query`` prints, streamed and safe for a terminal.

Results stream: csv and json fetch ``BATCH`` rows at a time and write them before fetching more, so memory does not
grow with the result (json is still one array, written element by element, formatted as ``json.dumps(rows,
indent=2)`` would). The table format renders at most ``--max-rows`` rows (DuckDB's box renderer).

The lake holds model output, and model output can hold terminal control sequences: ESC sequences, an OSC 52 write
to the user's clipboard, BEL, NUL. Printed raw, the terminal would run them. So every control character (C0, DEL,
C1) in what ``query`` prints is written as an escape, the text ``\\x1b`` for ESC (``\\t``, ``\\n``, ``\\r`` by
name): in csv values and headers (newline and tab stay, csv quoting carries them), in the table (DuckDB escapes C0
itself, not DEL or C1; line breaks between rows stay) and in json (``json.dumps`` already writes every one as
``\\u001b``). A text that held the four characters ``\\x1b`` prints the same as one that held ESC: the lake and
``dialogbench export`` files keep the raw text (they are data, not terminal output)."""

from __future__ import annotations

import contextlib
import csv
import io
import json
from typing import TextIO

import duckdb

BATCH = 10_000
CONTROLS = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]
NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escapes(keep: str) -> dict[int, str]:
    return {c: NAMED.get(chr(c), f"\\x{c:02x}") for c in CONTROLS if chr(c) not in keep}


LINES = _escapes("\n")        # rendered text: its line breaks stay
CSV_VALUE = _escapes("\n\t")  # a csv value: a newline or tab in it is quoted data
ONE_LINE = _escapes("")       # an error message: one line


def escape(text: str, table: dict[int, str] = LINES) -> str:
    """``text`` with its control characters written as escapes (all but those ``table`` leaves)."""
    return text.translate(table)


def print_csv(con: duckdb.DuckDBPyConnection, sql: str, out: TextIO, *, raw: bool = False) -> int:
    """Run ``sql`` and write its result as csv (header first), ``BATCH`` rows at a time; returns the row count. A
    text cell or column name a spreadsheet would run as a formula gets a leading apostrophe (``csvsafe``) unless
    ``raw``; control characters are escaped either way (it is terminal output)."""
    cursor = con.execute(sql)
    writer = csv.writer(out)
    writer.writerow([_csv_text(d[0], raw=raw) for d in cursor.description])
    rows = 0
    while batch := cursor.fetchmany(BATCH):
        writer.writerows([_csv_cell(v, raw=raw) for v in row] for row in batch)
        rows += len(batch)
    return rows


def _csv_cell(value, *, raw: bool):
    if value is None or isinstance(value, (int, float)):
        return value  # what csv.writer writes for them, unchanged
    return _csv_text(str(value), raw=raw)


def _csv_text(text: str, *, raw: bool) -> str:
    from dialogbench.text.csvsafe import guard

    return escape(text if raw else guard(text), CSV_VALUE)


def print_json(con: duckdb.DuckDBPyConnection, sql: str, out: TextIO) -> int:
    """Run ``sql`` and write its result as one JSON array of objects (column -> value; text for other types),
    element by element; returns the row count."""
    cursor = con.execute(sql)
    columns = [d[0] for d in cursor.description]
    rows = 0
    out.write("[")
    while batch := cursor.fetchmany(BATCH):
        for row in batch:
            text = json.dumps(dict(zip(columns, row)), indent=2, default=str).replace("\n", "\n  ")
            out.write(("\n  " if rows == 0 else ",\n  ") + escape(text))
            rows += 1
    out.write("\n]\n" if rows else "]\n")
    return rows


def print_table(relation: duckdb.DuckDBPyRelation, out: TextIO, *, max_rows: int) -> None:
    """DuckDB's box rendering of ``relation`` (at most ``max_rows`` rows), escaped."""
    rendered = io.StringIO()
    with contextlib.redirect_stdout(rendered):
        relation.show(max_rows=max_rows, max_width=10_000)
    out.write(escape(rendered.getvalue()))
