"""``write_report``: read the lake's views, render ``report.html`` and ``report.md``, write both atomically."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from dialogbench.lake import Lake
from dialogbench.report import html, markdown
from dialogbench.report.data import collect, reporting
from dialogbench.report.sections import all_sections


def default_title() -> str:
    """The page title: "dialogbench — BotChat, MT-Bench-101 and GameEval report", the reporting families' titles."""
    titles = [f.title for f in reporting()]
    names = " and ".join(filter(None, [", ".join(titles[:-1]), *titles[-1:]]))
    return f"dialogbench — {names} report" if names else "dialogbench report"


def subtitle(data: dict) -> str:
    judges = data["judges"]
    parts = [f"Judge: {data['judge']}" if data["judge"] else "No judgments yet"]
    if len(judges) > 1:
        parts.append("other judges in the lake: " + ", ".join(j for j in judges if j != data["judge"]))
    runs = data["runs"] or []
    if runs:
        parts.append(f"latest run: {runs[0]['run_id']}")
    return "; ".join(parts) + "."


def render(lake: Lake, *, title: str | None = None, examples_per_model: int = 3) -> dict[str, str]:
    """{"html": page, "md": markdown} for the lake as it is now (same lake, same text); the title defaults to
    ``default_title()``."""
    title = default_title() if title is None else title
    data = collect(lake, examples_per_model=examples_per_model)
    sections, sub = all_sections(data), subtitle(data)
    return {"html": html.render(sections, title=title, subtitle=sub),
            "md": markdown.render(sections, title=title, subtitle=sub)}


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_report(lake: Lake, out_dir: Path, *, title: str | None = None,
                 examples_per_model: int = 3) -> dict[str, Path]:
    """Write ``out_dir/report.html`` and ``out_dir/report.md`` (each replaced atomically); returns their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    pages = render(lake, title=title, examples_per_model=examples_per_model)
    paths = {"html": out_dir / "report.html", "md": out_dir / "report.md"}
    for kind, path in paths.items():
        _atomic_write(path, pages[kind])
    return paths
