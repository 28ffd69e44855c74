"""``write_explorer``: read every family's records and the board's trend charts from the lake, render
``explorer.html``, write it atomically."""

from __future__ import annotations

from pathlib import Path

from dialogbench.explorer.collect import DEFAULT_LIMIT, collect_page
from dialogbench.explorer.page import render
from dialogbench.lake import Lake
from dialogbench.report.build import _atomic_write

TITLE = "dialogbench — dialogue explorer"
FILENAME = "explorer.html"


def write_explorer(lake: Lake, out_dir: Path, *, limit: int = DEFAULT_LIMIT, title: str = TITLE,
                   board: str | None = None) -> Path:
    """Write ``out_dir/explorer.html`` (replaced atomically) for ``board`` (None: the lake's default board), at most
    ``limit`` records per protocol, with the board's trend charts; returns its path. The page links ``report.html``
    when one is beside it."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    data, trends = collect_page(lake, limit=limit, board=board)
    path = out_dir / FILENAME
    _atomic_write(path, render(data, title=title, trends=trends,
                               report_link="report.html" if (out_dir / "report.html").exists() else None))
    return path
