"""``write_explorer``: read every family's records and the board's trend charts from the lake, render
``explorer.html``, write it atomically."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from dialogbench.explorer import disagreements
from dialogbench.explorer.collect import DEFAULT_LIMIT, collect_page
from dialogbench.explorer.page import render
from dialogbench.explorer.records import Source
from dialogbench.lake import Lake
from dialogbench.lake.catalog import connect
from dialogbench.report.build import _atomic_write
from dialogbench.run.family_spec import Family

TITLE = "dialogbench — dialogue explorer"
FILENAME = "explorer.html"


def write_explorer(lake: Lake, out_dir: Path, *, families: Sequence[Family], limit: int = DEFAULT_LIMIT,
                   title: str = TITLE, board: str | None = None) -> Path:
    """Write ``out_dir/explorer.html`` (replaced atomically) for ``board`` (None: the lake's default board), at most
    ``limit`` records per protocol of ``families`` (the run's), with the board's trend charts and its judges'
    agreement; returns its path. The page links ``report.html`` when one is beside it."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    data, trends = collect_page(lake, families=families, limit=limit, board=board)
    with connect(lake, board=board) as con:
        agreement = disagreements.panel(disagreements.read(Source(con, limit), lake=lake))
    path = out_dir / FILENAME
    _atomic_write(path, render(data, title=title, trends=trends, agreement=agreement,
                               report_link="report.html" if (out_dir / "report.html").exists() else None))
    return path
