"""``dialogbench run`` when the board's latest run already holds this run's results (``dialogbench/run/reuse.py``;
``reuse_unchanged_run`` in the config, no ``--rerun``): that run is said in seconds instead of recomputing nothing."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from dialogbench.commands.say import say


def unchanged_run(run):
    """The board's latest run when this run would repeat it (``dialogbench/run/reuse.py``), else None, the reason logged.
    It only reads (no lease: a run writing the lake meanwhile is a changed lake); whatever stops the check (a lake of
    an older format, say) makes this a real run, which deals with it as any run does."""
    from dialogbench.run.reuse import unchanged_run as latest_if_unchanged

    log = logging.getLogger("dialogbench.reuse")
    try:
        reuse = latest_if_unchanged(run)
    except Exception as exc:  # noqa: BLE001 - the check only saves time; a real run is always right
        log.warning("a new run: could not tell whether the board's latest run holds these results (%s: %s)",
                    type(exc).__name__, exc)
        return None
    if reuse.run_id is None:
        log.info("a new run: %s", reuse.reason)
        return None
    return reuse


def reused(args, run, reuse, start: float) -> int:
    """The board's latest run answers this rerun (``dialogbench/run/reuse.py``): its stages as this run would count them
    (all cached), every leaderboard of the board, its report; ``--json`` gets the same summary shape, ``reused``."""
    from dialogbench.report.publish import FILE_OF_KIND, LEADERBOARDS
    from dialogbench.report.results import NoResults, format_all_leaderboards
    from dialogbench.run.runs import StageReport

    stages: dict[str, StageReport] = {}
    for size in reuse.sizes:
        if size.stage not in stages:
            stages[size.stage] = StageReport(stage=size.stage, planned=size.planned, cached=size.cached)
    say(f"\nnothing to compute: {reuse.reason} (checked in {time.perf_counter() - start:.1f}s; --rerun records "
        "a new run anyway)")
    for stage in stages.values():
        say("  " + stage.line())
    written = reuse.folder / LEADERBOARDS  # as the run wrote them; a run from before it did: read from the lake
    try:
        say("\n" + (written.read_text().rstrip("\n") if written.is_file()
                     else format_all_leaderboards(run.lake, run.board, families=run.families)))
    except NoResults as exc:
        say(f"\n({exc})")
    report = {kind: str(reuse.folder / name) for kind, name in FILE_OF_KIND.items() if (reuse.folder / name).exists()}
    if report.get("html"):
        say(f"\nreport: {report['html']}")
        if report.get("explorer"):
            say(f"explorer: {report['explorer']}")
    if args.json:
        summary = {"run_id": reuse.run_id, "reused": True, "reason": reuse.reason, "lake": run.config.lake,
                   "board": run.board, "finished_at": reuse.finished_at,
                   "stages": [s.to_dict() for s in stages.values()], "report": report, "failed": None}
        Path(args.json).write_text(json.dumps(summary, indent=2, default=str))
    return 0
