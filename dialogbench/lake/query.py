"""The ad-hoc query path, read-only: what ``dialogbench query`` and ``dialogbench export`` run SQL on.

The connection cannot touch a file. It is in-memory, opened with ``enable_external_access = false`` and no allowed
directory or path, no temp directory (nothing spills), no extension loading or Python replacement scans, and its
configuration is locked once the views exist. The views read the lake's Parquet files through Arrow datasets of
files opened beforehand (``lake.pinned``), so COPY, ATTACH, EXPORT, read_text or read_parquet, whatever statement
nests them, have no file system to read or write, and a rewrite of the lake while a query runs (``repair``, a run's
quarantine) changes nothing the query reads. A file that vanishes before it is opened makes its table be listed
again (``lake.pinned``); should that keep failing, the views are built again (``BUILD_TRIES`` times at most).

Those walls are DuckDB's to keep, and DuckDB 2.0 broke one: its connection may write ``<cwd>/:memory:`` and three
``.wal`` names next to it, whatever its settings. So ``run`` and ``export`` use the connection only in a child process
(``lake.confined``) whose working directory is a private empty folder and which cannot write a byte to any file: what
``query`` prints and the batches ``export`` writes come to this process through a pipe, as they are made. In front
of all that, ``lake.statements`` runs only one statement that reads, nesting nothing else. Each query has a time and
a memory limit that hold whatever DuckDB does (``lake.limits``: the child is killed at its deadline, and its memory
is capped)."""

from __future__ import annotations

import codecs
import contextlib
import io
import json
import os
import sys
import time
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, TypeVar

import duckdb

from dialogbench.lake import confined
from dialogbench.lake.catalog import create_views, read_board
from dialogbench.lake.limits import Limits, LimitExceeded, cap_memory, memory_errors, time_exceeded
from dialogbench.lake.pinned import LakeChanged, PinnedLake, TooManyFiles
from dialogbench.lake.statements import QueryRefused, check_reads_only, one_line
from dialogbench.lake.store import Lake
from dialogbench.lake.terminal import BATCH

__all__ = ["QueryRefused", "LimitExceeded", "Limits", "read_only_connection", "query", "run", "export"]
NO_FILES = {"enable_external_access": False, "temp_directory": "", "autoinstall_known_extensions": False,
            "autoload_known_extensions": False, "allow_community_extensions": False,
            "python_enable_replacements": False}
BUILD_TRIES = 5
T = TypeVar("T")


@contextlib.contextmanager
def read_only_connection(lake: Lake, *, board: str | None = None,
                         memory_limit: str | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """An in-memory connection with the lake's views (their board-scoped ones reading ``board``; None: the lake's
    default board) that cannot read or write any file (DuckDB 2.0 aside: see the module's docstring, and use it for
    the user's SQL only in ``lake.confined``'s child, as ``run`` does); its files are closed when the block ends."""
    config = {**NO_FILES, **({"memory_limit": memory_limit} if memory_limit else {})}
    for attempt in range(1, BUILD_TRIES + 1):
        con = duckdb.connect(config=config)
        pinned = PinnedLake(lake, con)
        try:
            create_views(con, pinned)
            read_board(con, board)
            con.execute("SET lock_configuration = true")
            break
        except (LakeChanged, FileNotFoundError) as exc:  # a rewrite between the listing and the opening
            con.close()
            pinned.close()
            if attempt == BUILD_TRIES:
                raise QueryRefused(f"the lake changed under every one of {BUILD_TRIES} tries to open its files "
                                   f"(last: {exc}); is `dialogbench repair` running? Query again") from None
            time.sleep(0.05 * attempt)
        except TooManyFiles as exc:
            con.close()
            pinned.close()
            raise QueryRefused(str(exc)) from None
        except BaseException:
            con.close()
            pinned.close()
            raise
    try:
        yield con
    finally:
        con.close()
        pinned.close()


def query(con: duckdb.DuckDBPyConnection, sql: str) -> duckdb.DuckDBPyRelation | None:
    """``sql`` as a relation on ``con``, once ``lake.statements`` accepts it (else ``QueryRefused``)."""
    check_reads_only(sql)
    return con.sql(sql)


def run(lake: Lake, sql: str, consume: Callable[[duckdb.DuckDBPyConnection, str], T], *, board: str | None = None,
        limits: Limits | None = None) -> T:
    """Check ``sql``, then ``consume(con, sql)`` on a read-only connection, in a confined child (``lake.confined``)
    within ``limits``; what it prints to ``sys.stdout`` there is printed here as it comes, and what it returns is
    returned (pickled). Every failure of the user's SQL leaves as ``QueryRefused`` with one line saying why
    (``LimitExceeded`` for a limit)."""
    def printing(con: duckdb.DuckDBPyConnection, sql: str, out: BinaryIO) -> T:
        sys.stdout = io.TextIOWrapper(out, encoding="utf-8")  # the child's: its text reaches this process's stdout
        try:
            return consume(con, sql)
        finally:
            sys.stdout.flush()

    return _confined(lake, sql, printing, _relay, board=board, limits=limits or Limits())


def _relay(data: BinaryIO) -> None:
    """Print what the child prints, as it comes."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    while chunk := data.read1(1 << 16):
        sys.stdout.write(decoder.decode(chunk))
    sys.stdout.write(decoder.decode(b"", final=True))


def _confined(lake: Lake, sql: str, consume: Callable[[duckdb.DuckDBPyConnection, str, BinaryIO], T],
              drain: Callable[[BinaryIO], None], *, board: str | None, limits: Limits) -> T:
    """``consume(con, sql, out)`` in the confined child, ``drain`` reading ``out`` here; the limits' failures and
    DuckDB's as one line."""
    check_reads_only(sql)
    lake = pin_delta_tables(lake.absolute())  # the child works in a private empty folder: a relative root would read nothing there

    def work(out: BinaryIO) -> T:
        try:
            with read_only_connection(lake, board=board, memory_limit=limits.memory) as con, memory_errors(limits):
                cap_memory(limits)  # what the views hold now, plus the limit
                return consume(con, sql, out)
        except duckdb.PermissionException as exc:
            raise QueryRefused(f"{one_line(str(exc))}: the query path has no file access; it reads the lake's "
                               "tables and views, nothing else") from None
        except duckdb.Error as exc:
            raise QueryRefused(f"{type(exc).__name__}: {one_line(str(exc))}") from None
        except OSError as exc:  # a write the child may not make (EFBIG), or its pipe gone with the parent
            raise QueryRefused(f"the query's process could not go on: {one_line(str(exc))}") from None

    try:
        return confined.call(work, drain, timeout_s=limits.timeout_s)
    except confined.Deadline:
        raise time_exceeded(limits) from None
    except confined.Died as exc:
        raise QueryRefused(f"the query's process ended ({exc}) before it answered; if it ran out of memory, its "
                           f"limit is {limits.memory}: raise it with --memory-limit SIZE, or narrow the query") from None


def pin_delta_tables(lake: Lake) -> Lake:
    """``lake``, and for a Delta lake a copy of it with every table's latest file list taken here (fetched into the
    local folder first for a lake on an object store), before the confined child is forked: there delta-rs cannot
    run (its runtime does not survive a fork) and no file may be written. ``lake`` itself is not pinned."""
    tables = list(lake.layout.tables)
    if lake.tables_kind() != "delta" or not tables:
        return lake
    pinned = lake.rooted(lake.root_sql)
    pinned._delta = lake.delta(tables[0]).pinned(tables)
    return pinned


def export(lake: Lake, sql: str, out: Path, *, fmt: str | None = None, board: str | None = None,
           limits: Limits | None = None, raw: bool = False) -> int:
    """Write the result of a read-only ``sql`` to ``out`` (parquet, csv or json lines, by ``fmt`` or the suffix),
    streamed in batches to a temp file renamed into place; ``out`` must be outside the lake. The query runs in the
    confined child (``run``), which sends its result here as Arrow batches; this process writes the file. The values
    are written as they are (no escaping: an export is data, not terminal output), except that a csv's text cells and
    column names that a spreadsheet would run as a formula get a leading apostrophe (``csvsafe``) unless ``raw``.
    Returns the row count."""
    import pyarrow as pa

    out = Path(out)
    fmt = fmt or {".parquet": "parquet", ".csv": "csv", ".json": "json", ".jsonl": "json"}.get(out.suffix.lower())
    if fmt is None:
        raise QueryRefused(f"{out}: say --format parquet|csv|json (no known suffix)")
    if out.resolve().is_relative_to(lake.root.resolve()):
        raise QueryRefused(f"{out}: is inside the lake {lake.root}; export writes outside it (runs own the lake)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    rows: list[int] = []
    try:
        _confined(lake, sql, _send_batches, lambda data: rows.append(_write(pa.ipc.open_stream(data), tmp, fmt, raw=raw)),
                  board=board, limits=limits or Limits())
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return rows[0]


def _send_batches(con: duckdb.DuckDBPyConnection, sql: str, out: BinaryIO) -> None:
    """In the child: the result of ``sql`` as an Arrow stream of ``BATCH`` rows at a time on ``out``."""
    import pyarrow as pa

    relation = con.sql(sql)
    if relation is None:
        raise QueryRefused("the query returns no result to export")
    reader = relation.to_arrow_reader(BATCH)
    with pa.ipc.new_stream(out, reader.schema) as writer:
        for batch in reader:
            writer.write_batch(batch)


def _write(reader, tmp: Path, fmt: str, *, raw: bool = False) -> int:
    """Write the batches of ``reader`` (an Arrow stream) to ``tmp`` as ``fmt`` (a csv guarded against formulas
    unless ``raw``); returns the row count."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    rows = 0
    if fmt == "parquet":
        with pq.ParquetWriter(tmp, reader.schema, compression="zstd") as writer:
            for batch in reader:
                writer.write_batch(batch)
                rows += batch.num_rows
    elif fmt == "csv":
        nested = [f"{f.name} ({f.type})" for f in reader.schema if pa.types.is_nested(f.type)]
        if nested:
            raise QueryRefused(f"csv cannot hold the nested column(s) {', '.join(nested)}: export to .parquet or "
                               ".json, or select them as text (CAST(column AS VARCHAR))")
        from dialogbench.text.csvsafe import guard_batch, guard_schema

        with pacsv.CSVWriter(tmp, reader.schema if raw else guard_schema(reader.schema)) as writer:
            for batch in reader:
                writer.write_batch(batch if raw else guard_batch(batch))
                rows += batch.num_rows
    else:
        with open(tmp, "w") as handle:
            for batch in reader:
                handle.writelines(json.dumps(row, default=str) + "\n" for row in batch.to_pylist())
                rows += batch.num_rows
    return rows
