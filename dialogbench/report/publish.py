"""Where a run leaves its report: rendered once, for the run's board, then kept three ways under ``<lake>/reports``::

    runs/<run_id>/    report.html  report.md  explorer.html  run.json  results.json   this run's report, as it ended
    boards/<board>/   the same files                                                  the board's latest report
    report.html  report.md  explorer.html  run.json  results.json                     the default board's latest

A run on an ad-hoc board (named from CLI overrides) never replaces the top-level files: the nightly report stays
where the team reads it. ``run.json`` says whose report it is (run, board, config, when, failed or not);
``dialogbench serve`` lists the boards and runs from it. ``results.json`` holds every leaderboard of the board, with
its intervals, measured flags and provenance, for scripts (``dialogbench.report.results``)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from dialogbench.run.boards import folder_name, is_adhoc
from dialogbench.run.config import ReportConfig, TrackingConfig
from dialogbench.explorer import write_explorer
from dialogbench.lake import Lake
from dialogbench.text.redact import redact
from dialogbench.report.build import _atomic_write, write_report
from dialogbench.run.environment import code_fingerprint
from dialogbench.run.family_spec import Family
from dialogbench.report.results import RESULTS, NoResults, format_all_leaderboards, write_results
from dialogbench.run.runs import now
from dialogbench.run.tracking import track

RUNS_DIR, BOARDS_DIR, RUN_NOTE = "runs", "boards", "run.json"
LEADERBOARDS = "leaderboards.txt"  # the run's folder only: every leaderboard as plain text
# a run's published files by kind: what publish_reports returns them under, and what a reused run reports
FILE_OF_KIND = {"html": "report.html", "md": "report.md", "explorer": "explorer.html", "note": RUN_NOTE,
                "results": RESULTS}
FILES = tuple(FILE_OF_KIND.values())


def run_folder(lake: Lake, run_id: str) -> Path:
    return lake.root / "reports" / RUNS_DIR / folder_name(run_id)


def board_folder(lake: Lake, board: str) -> Path:
    return lake.root / "reports" / BOARDS_DIR / folder_name(board)


def publish_reports(lake: Lake, *, families: Sequence[Family], run_id: str, board: str, config_path: str,
                    started_at=None, failed: str | None = None, settings: ReportConfig | None = None,
                    judge_checks=None, tracking: TrackingConfig | None = None) -> dict[str, str]:
    """Render the report and the explorer of ``board`` into the run's folder, then copy them to the board's folder
    and, unless the board is ad hoc, to the top of ``<lake>/reports``. Returns the run's files by kind (html, md,
    explorer, note, results) and under "board" / "latest" the folders they were copied to. ``tracking`` (the
    config's; ``to`` set): then the run's results.json and report are logged to that tracker (dialogbench/run/tracking.py),
    and "tracking" says how that went (a tracker's failure is a warning there, never the run's). ``families``: the
    run's, whose sections, records and leaderboards these are."""
    folder = run_folder(lake, run_id)
    written = write_report(lake, folder, families=families, settings=settings, board=board,
                           judge_checks=judge_checks)
    paths = {kind: str(path) for kind, path in written.items()}
    paths["explorer"] = str(write_explorer(lake, folder, families=families, board=board))
    note = {"run_id": run_id, "board": board, "adhoc": is_adhoc(board), "config": redact(config_path),
            "started_at": started_at.isoformat() if started_at else None, "finished_at": now().isoformat(),
            "rendered_at": now().isoformat(),
            "failed": failed, "code": code_fingerprint()}
    _atomic_write(folder / RUN_NOTE, json.dumps(note, indent=2) + "\n")
    paths["note"] = str(folder / RUN_NOTE)
    paths["results"] = str(write_results(lake, board, folder, families=families, run_id=run_id, failed=failed,
                                         require_run=False))
    try:  # as `dialogbench export` prints them: what an unchanged rerun shows (dialogbench/run/reuse.py) without DuckDB
        _atomic_write(folder / LEADERBOARDS, format_all_leaderboards(lake, board, families=families) + "\n")
    except NoResults:  # nothing published to the board yet (a run whose every stage failed)
        pass
    targets = [board_folder(lake, board), *([] if is_adhoc(board) else [lake.root / "reports"])]
    for target in targets:
        copy_reports(folder, target)
    paths["board"] = str(targets[0])
    paths["latest"] = str(targets[1]) if len(targets) > 1 else None
    if tracking is not None and tracking.to:  # everything is written first: a tracker's failure loses nothing
        paths["tracking"] = track(tracking, folder, run_id=run_id, board=board, families=families)
    return paths


def report_urls(url: str | None, *, run_id: str, board: str) -> dict[str, str] | None:
    """The addresses of a run's pages where ``dialogbench serve`` serves ``<lake>/reports`` at ``url``
    (``report.url`` in the config); None without one."""
    if not url:
        return None
    base = url.rstrip("/")
    run, latest = f"{base}/{RUNS_DIR}/{quote(folder_name(run_id))}", f"{base}/{BOARDS_DIR}/{quote(folder_name(board))}"
    return {"html": f"{run}/report.html", "md": f"{run}/report.md", "explorer": f"{run}/explorer.html",
            "board": f"{latest}/report.html", "index": f"{base}/"}


def failure_state_message(failed: str, url: str | None, run_id: str, board: str) -> str:
    """A failed run's state message (what a notification quotes), with its report's address when one is served."""
    links = report_urls(url, run_id=run_id, board=board)
    return f"{failed} Report: {links['html']}" if links else failed


def copy_reports(source: Path, target: Path) -> None:
    """Each report file of ``source`` into ``target``, each replaced atomically (a reader never sees half a page)."""
    target.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        if (source / name).is_file():
            tmp = target / f".{name}.copy.tmp"
            shutil.copyfile(source / name, tmp)
            tmp.replace(target / name)
