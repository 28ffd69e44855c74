"""The server's ``/`` page: the latest report, each board's latest report and each run's report, newest first, read
from the reports folder (``run.json`` when a folder has one, else its files' times). Self-contained HTML, every text
escaped, no script. A ``run.json`` that cannot be read is named on the page, never an error of the page."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from urllib.parse import quote

from dialogbench.report.html import CSS
from dialogbench.serve.files import inside, listing

PAGES = (("report.html", "report"), ("report.md", "Markdown"), ("explorer.html", "explorer"))
RUN_LIMIT = 200  # runs listed; the rest are counted
NO_REPORT = "no report yet: run dialogbench run first"


@dataclass(frozen=True)
class Folder:
    """A board's or a run's folder: its name, the pages it holds, its ``run.json`` (or why it could not be read)."""

    name: str
    pages: tuple[str, ...]
    when: dt.datetime
    meta: dict = field(default_factory=dict)
    problem: str | None = None

    def text(self, key: str) -> str:
        value = self.meta.get(key)
        return "" if value is None else str(value)


def _utc(value: object) -> dt.datetime | None:
    try:
        when = dt.datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return when.replace(tzinfo=dt.timezone.utc) if when.tzinfo is None else when.astimezone(dt.timezone.utc)


def read_folder(root: Path, name: str, folder: Path) -> Folder | None:
    """``folder`` (resolved inside ``root``) as listed, or ``None`` when it holds no page."""
    files = listing(root, folder, folders=False)
    pages = tuple(page for page, _ in PAGES if page in files)
    if not pages:
        return None
    meta, problem = {}, None
    if "run.json" in files:
        try:
            meta = json.loads(files["run.json"].read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            meta, problem = {}, f"{name}/run.json unreadable: {exc}"
        if not isinstance(meta, dict):
            meta, problem = {}, f"{name}/run.json is not a JSON object"
    when = _utc(meta.get("finished_at")) or _utc(meta.get("started_at")) or _written([files[p] for p in pages])
    return None if when is None else Folder(name, pages, when, meta, problem)


def _written(pages: list[Path]) -> dt.datetime | None:
    """When the newest of ``pages`` was written (``None`` if they vanished meanwhile: a folder being removed)."""
    try:
        mtime = max(page.stat().st_mtime for page in pages)
    except OSError:
        return None
    return dt.datetime.fromtimestamp(mtime, dt.timezone.utc)


def read_folders(root: Path, kind: str) -> list[Folder]:
    """The folders under ``root/kind`` (``boards`` or ``runs``) that hold a page, newest first."""
    parent = inside(root, root / kind)
    if parent is None:
        return []
    found = [read_folder(root, name, folder) for name, folder in listing(root, parent, folders=True).items()]
    return sorted((f for f in found if f is not None), key=lambda f: (f.when, f.name), reverse=True)


def _links(prefix: str, pages: tuple[str, ...]) -> str:
    return " · ".join(f'<a href="{escape(prefix + page)}">{label}</a>' for page, label in PAGES if page in pages)


def _when(when: dt.datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M UTC")


def _table(headers: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _status(run: Folder) -> str:
    if run.problem:
        return escape(run.problem)
    if "run_id" not in run.meta:
        return "unknown (no run.json)"
    failed = run.meta.get("failed")
    return f"<strong>failed</strong>: {escape(str(failed)[:300])}" if failed else "ok"


def _boards(boards: list[Folder]) -> str:
    return _table(("board", "latest run", "when", "pages"), [
        (escape(b.text("board") or b.name), escape(b.text("run_id") or b.problem or "unknown (no run.json)"),
         _when(b.when), _links(f"boards/{quote(b.name, safe='')}/", b.pages)) for b in boards])


def _runs(runs: list[Folder], limit: int) -> str:
    table = _table(("run", "board", "when", "status", "pages"), [
        (escape(r.text("run_id") or r.name), escape(r.text("board")), _when(r.when), _status(r),
         _links(f"runs/{quote(r.name, safe='')}/", r.pages)) for r in runs[:limit]])
    rest = len(runs) - limit
    return table + (f'<p class="note">and {rest} older run(s), not listed</p>' if rest > 0 else "")


def render_index(reports: Path, *, run_limit: int = RUN_LIMIT) -> str:
    """The index of ``reports`` (which may not exist yet) as one HTML page."""
    root = reports.resolve() if reports.is_dir() else None
    files = listing(root, root, folders=False) if root else {}
    latest = tuple(page for page, _ in PAGES if page in files)
    written = _written([files[page] for page in latest]) if latest else None
    parts = ["<h2>Latest report</h2>", f'<p>{_links("", latest)} <span class="more">written {_when(written)}</span></p>'
             if written else f'<p class="empty">{NO_REPORT}</p>']
    if boards := read_folders(root, "boards") if root else []:
        parts += ["<h2>Boards</h2>", _boards(boards)]
    if runs := read_folders(root, "runs") if root else []:
        parts += ["<h2>Runs</h2>", _runs(runs, run_limit)]
    title = "dialogbench reports"
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">'
            f"<title>{title}</title><style>{CSS}</style></head><body><main><h1>{title}</h1>"
            f'{"".join(parts)}</main></body></html>\n')
