"""DuckDB views over the lake, defined by the files in ``sql/`` (base views, then metrics)."""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

import duckdb

from dialogbench.botchat.seeds import SEEDS_SCHEMA
from dialogbench.lake.schemas import TABLES
from dialogbench.lake.store import Lake

log = logging.getLogger("dialogbench.catalog")
SQL_DIR = Path(os.environ.get("DIALOGBENCH_SQL_DIR", Path(__file__).resolve().parents[2] / "sql"))
_SOURCE = re.compile(r"\{\{\s*source\('([a-z0-9_]+)'\)\s*\}\}")
VIEW_DIRS = ("views", "metrics")
# Typed empty views for tables a lake may not have yet; `seeds` too, so metric views that join it
# (botchat_unieval_gt) exist, empty, before the first extraction.
SOURCE_SCHEMAS = {**TABLES, "seeds": SEEDS_SCHEMA}


def view_files(sql_dir: Path = SQL_DIR) -> list[Path]:
    """Base views first (they read Parquet), then the metric views built on them, each by name."""
    return [f for d in VIEW_DIRS for f in sorted((sql_dir / d).glob("*.sql"))]


def render(sql: str, lake: Lake) -> str:
    return _SOURCE.sub(lambda m: lake.relation_sql(m.group(1), SOURCE_SCHEMAS.get(m.group(1))), sql)


def create_views(con: duckdb.DuckDBPyConnection, lake: Lake, sql_dir: Path = SQL_DIR) -> list[str]:
    """Create every view; a view that reads another is retried once the other exists (so files need
    no dependency order). Raises naming the file whose SQL is broken."""
    pending = view_files(sql_dir)
    created: list[str] = []
    while pending:
        errors, before = {}, len(pending)
        for path in list(pending):
            try:
                con.execute(f'CREATE OR REPLACE VIEW "{path.stem}" AS {render(path.read_text(), lake)}')
            except duckdb.CatalogException as exc:  # reads a view not created yet: next pass
                errors[path] = exc
                continue
            except duckdb.Error as exc:
                raise RuntimeError(f"{path}: {exc}") from exc
            pending.remove(path)
            created.append(path.stem)
        if len(pending) == before:  # no progress: a real error, not an order problem
            path, exc = next(iter(errors.items()))
            raise RuntimeError(f"{path}: {exc}")
    return created


def connect(lake: Lake) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with every view: what ``dialogbench query`` uses."""
    con = duckdb.connect()
    create_views(con, lake)
    return con


def build_catalog(lake: Lake) -> Path | None:
    """Write ``<lake>/catalog.duckdb`` so plain ``duckdb data_lake/catalog.duckdb`` sees the views.
    If someone holds it open, the old views stay (they read the files, so they are still current
    unless a table was created since) and a warning says so."""
    path = lake.root / "catalog.duckdb"
    lake.root.mkdir(parents=True, exist_ok=True)
    try:
        with duckdb.connect(str(path)) as con:
            create_views(con, lake)
    except duckdb.IOException as exc:
        log.warning("catalog %s not rebuilt (in use?): %s", path, exc)
        return None
    return path


def data_tests(lake: Lake, sql_dir: Path = SQL_DIR) -> dict[str, int]:
    """Run ``sql/tests/*.sql`` (each must return zero rows); returns the failing ones with row counts."""
    failing = {}
    with connect(lake) as con:
        for path in sorted((sql_dir / "tests").glob("*.sql")):
            rows = con.sql(path.read_text()).fetchall()
            if rows:
                failing[path.stem] = len(rows)
    return failing
