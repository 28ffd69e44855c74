"""What a run shows in the Prefect UI besides its task runs: artifacts (the stage table, a leaderboard per family,
the report, the failed cells, a progress bar per computing stage) and its tags. Prefect wiring only: the numbers
come from ``dialogbench``. Publishing never fails a run: an API error is a warning and the run goes on. Every string
an artifact carries (table cells, Markdown, descriptions) has its control characters made visible
(``dialogbench.textsafe``): the UI and anyone who copies an artifact's text get no terminal escape or bidi override.

Artifact keys (each run adds a version under the same key; the flow run's Artifacts tab shows its own):

- ``dialogbench-stages``: planned / cached / computed / failed / seconds per stage
- ``dialogbench-leaderboard-<family>`` (``-<family>-<table>`` for a family with several, e.g. GameEval's games);
  a judged family's rows say in ``self_judged`` whether the judge is the model itself (its description names them)
- ``dialogbench-report``: a link to the run's report.html where ``dialogbench serve`` serves it (``report.url``),
  else a note saying where the file is and how to serve it; ``dialogbench-report-md`` (report.md's text)
- ``dialogbench-explorer``: a link to the run's explorer.html (with ``report.url``), every judged dialogue with the
  judge's raw output
- ``dialogbench-failures``: stage, item, model, judge, error (redacted when written) of each failed cell
- ``dialogbench-changes``: the metric values that moved or are new since the previous run, with their cause
- ``dialogbench-progress-<stage>``: share of the stage's planned cells done, updated as its chunks finish (stages
  computing two chunks or more)
"""

from __future__ import annotations

import json
import logging
import platform
import re
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from prefect.artifacts import (create_link_artifact, create_markdown_artifact, create_progress_artifact,
                               create_table_artifact, update_progress_artifact)
from prefect import get_run_logger
from prefect.context import FlowRunContext
from prefect.futures import PrefectFuture, as_completed

from dialogbench import stopping
from dialogbench.cells import Chunk
from dialogbench.cells.records import run_failures
from dialogbench.config import Config
from dialogbench.judge_checks.self_judging import BIAS
from dialogbench.registry import open_lake
from dialogbench.redact import redact_tree
from dialogbench.report.publish import report_urls
from dialogbench.runs import StageReport
from dialogbench.textsafe import visible_tree

log = logging.getLogger("dialogbench.artifacts")

PREFIX = "dialogbench"
# report.md in a Markdown artifact: Prefect 3.7's server sets no size limit on artifact data (a JSON column), but
# every version is kept in its database and the UI renders it whole; a larger report is cut, naming the file.
MARKDOWN_MAX_CHARS = 200_000
FAILURE_ROWS_MAX = 1000   # rows of the failures table; the rest are counted in its description
ERROR_MAX_CHARS = 500     # characters of one error in that table
PROGRESS_MIN_CHUNKS = 2   # a stage computing fewer chunks gets no progress artifact
SELF_JUDGED = f"rated by the judge, the same model ({BIAS})"  # a leaderboard's self_judged rows, said once

# this process's publishing cost: artifacts created, progress updates, API seconds (the run summary reports it)
_spent = {"artifacts": 0, "updates": 0, "seconds": 0.0}


def key(*parts: str) -> str:
    """A valid artifact key (lowercase letters, digits, dashes): ``("progress", "generate:Bot_A")`` →
    ``dialogbench-progress-generate-bot-a``."""
    slugs = (re.sub(r"[^a-z0-9]+", "-", str(part).lower()).strip("-") for part in (PREFIX, *parts))
    return "-".join(s for s in slugs if s)


def reset_cost() -> None:
    _spent.update(artifacts=0, updates=0, seconds=0.0)


def cost() -> dict:
    return {"artifacts": _spent["artifacts"], "progress_updates": _spent["updates"],
            "seconds": round(_spent["seconds"], 4)}


@contextmanager
def _publishing(what: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    except Exception as exc:  # the UI's copy of a result is not worth a run: warn and go on
        log.warning("could not publish the %s artifact: %s: %s", what, type(exc).__name__, exc)
    finally:
        _spent["seconds"] += time.perf_counter() - start


def _create(make: Callable[..., Any], **kwargs) -> Any:
    """Every artifact is made here: its texts redacted (a report.url with a password, an error quoting a token:
    Prefect stores what it is given) and their control characters made visible, its cost counted."""
    _spent["artifacts"] += 1
    return make(**{name: value if name == "key" else visible_tree(redact_tree(value, by_key=False))
                   for name, value in kwargs.items()})


def _jsonable(rows: Any) -> Any:
    """Rows as plain JSON values (dates, decimals and the like as strings; NaN becomes null in the table)."""
    return json.loads(json.dumps(rows, default=str))


def tag_flow_run(tags: list[str]) -> None:
    """Add ``tags`` to the running flow run itself (task runs and subflows get them from ``prefect.tags``)."""
    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        return
    with _publishing("tags"):
        merged = sorted(set(context.flow_run.tags) | set(tags))
        context.client.update_flow_run(context.flow_run.id, tags=merged)


def publish_stages(run_id: str, stages: list[dict]) -> None:
    rows = [{"stage": s["stage"], "planned": s["planned"], "cached": s["cached"], "computed": s["computed"],
             "failed": s["failed"], "blocked": s.get("blocked", 0), "seconds": round(s["seconds"], 2)} for s in stages]
    total = {k: sum(r[k] for r in rows) for k in ("planned", "cached", "computed", "failed", "blocked")}
    with _publishing("stages"):
        _create(create_table_artifact, table=rows, key=key("stages"),
                description=f"Run `{run_id}`: {len(rows)} stage(s); {total['planned']} planned, {total['cached']} "
                            f"cached, {total['computed']} computed, {total['failed']} failed, {total['blocked']} "
                            "blocked (their input failed or is missing).")


def publish_leaderboards(run_id: str, boards: dict[str, Any]) -> None:
    """A table per family (a family whose leaderboard is several tables, e.g. GameEval's games: one per table); a
    table with a model judged by itself (its ``self_judged`` column) says what that means."""
    for family, rows in boards.items():
        tables = rows.items() if isinstance(rows, dict) else [(None, rows)]
        for name, table in tables:
            title = f"{family} {name}" if name else family
            selves = [r["model"] for r in table or [] if isinstance(r, dict) and r.get("self_judged")]
            with _publishing(f"{title} leaderboard"):
                _create(create_table_artifact, table=_jsonable(list(table or [])),
                        key=key("leaderboard", family, *([name] if name else [])),
                        description=f"Run `{run_id}`: {title} leaderboard ({len(table or [])} row(s))."
                                    + (f" self_judged: {', '.join(selves)}: {SELF_JUDGED}." if selves else ""))


def publish_report(run_id: str, paths: dict[str, str] | None, *, url: str | None = None, board: str | None = None) -> None:
    """Links to the run's report.html and its dialogue explorer where ``dialogbench serve`` serves them (``url``:
    ``report.url`` of the config), else a note saying where the files are and how to serve them; and report.md's
    text."""
    if not paths:
        return
    links = report_urls(url, run_id=run_id, board=board or "") if url else None
    if links:
        with _publishing("report link"):
            _create(create_link_artifact, link=links["html"], link_text=f"report ({run_id})", key=key("report"),
                    description=f"Run `{run_id}`: its HTML report (board `{board}`: latest at {links['board']}; "
                                f"every board and run: {links['index']}).")
    elif paths.get("html"):
        with _publishing("report note"):
            _create(create_markdown_artifact, key=key("report"), description=f"Run `{run_id}`: where its report is.",
                    markdown=f"The report of run `{run_id}` is `{paths['html']}` on the machine that ran it "
                             f"(`{platform.node()}`). To open it from here, serve the lake's reports there: "
                             f"`dialogbench serve --lake {Path(paths['html']).parents[3]} --host 0.0.0.0`, and set "
                             "`report.url: http://<that host>:8765` in the config so the next run links them.")
    if paths.get("md"):
        with _publishing("report markdown"):
            text = Path(paths["md"]).read_text(encoding="utf-8")
            if len(text) > MARKDOWN_MAX_CHARS:
                text = (text[:MARKDOWN_MAX_CHARS] + f"\n\n… (cut at {MARKDOWN_MAX_CHARS:,} of {len(text):,} "
                        f"characters; the whole report is {paths['md']})\n")
            _create(create_markdown_artifact, markdown=text, key=key("report", "md"),
                    description=f"Run `{run_id}`: report.md.")
    if paths.get("explorer") and links:
        with _publishing("explorer link"):
            _create(create_link_artifact, link=links["explorer"], link_text=f"explorer ({run_id})",
                    key=key("explorer"), description=f"Run `{run_id}`: the dialogue explorer (every judged "
                    "dialogue, turn and game with the judge's raw output).")


def publish_judges(run_id: str, rows: list[dict]) -> None:
    """Can the run's judges tell? One row per (judge, protocol): unreadable share, the most frequent answer's share,
    known-answer probes right, and the checks it fails (its numbers are then not measured)."""
    with _publishing("judges"):
        failing = [r for r in rows if not r.get("measured", True)]
        _create(create_table_artifact, table=_jsonable(rows), key=key("judges"),
                description=f"Run `{run_id}`: {len(rows)} (judge, protocol) pair(s), {len(failing)} not measured"
                            + (f": {'; '.join(r['judge'] + ' on ' + r['protocol'] for r in failing)}" if failing else "")
                            + " (`dialogbench query \"select * from judge_health\"`, `judge_probes`).")


def log_problems(lines: list[str]) -> None:
    """One WARNING per reason the run fails, on the flow run that calls it (the parent's logs, where the UI and a
    notification look first)."""
    if not lines:
        return
    logger = get_run_logger()
    for line in lines:
        logger.warning("%s", line)


def publish_failures(config: Config, run_id: str) -> None:
    """This run's failed cells, one row each (a cell retried within the run is one row with its attempts, so the count is
    the stages' ``failed`` total and the run's message); none: an empty table, so the key's latest version says so."""
    with _publishing("failures"):
        failures = run_failures(open_lake(config.lake), run_id)
        rows = [{"stage": f["stage"], "item": f["item_id"], "model": ", ".join(f["models"]) or None, "judge": f["judge"],
                 "attempts": f["attempts"], "error": (f["error"] or "")[:ERROR_MAX_CHARS], "cell_key": f["cell_key"]}
                for f in failures[:FAILURE_ROWS_MAX]]
        more = f" (the first {FAILURE_ROWS_MAX} shown)" if len(failures) > FAILURE_ROWS_MAX else ""
        _create(create_table_artifact, table=rows, key=key("failures"),
                description=f"Run `{run_id}`: {len(failures)} failed cell(s){more}; the next run retries them "
                            "(`dialogbench query \"select * from failures\"`).")


def computed_with_progress(stage: str, planned: StageReport, chunks: list[Chunk],
                           futures: list[PrefectFuture]) -> list[StageReport]:
    """Each chunk's report, in chunk order, once all are done; meanwhile, for a stage of several chunks, a progress
    artifact goes from its cached share to 100% as its chunks finish (one chunk: its task run says as much, and two
    API calls are saved). A chunk that raised (after its retries) raises here, as ``PrefectFutureList.result()``
    did; once every chunk has ended, one that a stopped run cancelled raises ``Stopped``."""
    if len(futures) < PROGRESS_MIN_CHUNKS:
        return _reports(futures)
    cells = {future: len(chunk.cells) for future, chunk in zip(futures, chunks)}
    done, total = planned.cached, max(planned.planned, 1)
    artifact = None
    with _publishing(f"{stage} progress"):
        artifact = _create(create_progress_artifact, progress=100.0 * done / total, key=key("progress", stage),
                           description=f"{stage}: share of its {planned.planned} planned cells done "
                                       f"({planned.cached} cached, {len(chunks)} chunk(s) to compute).")
    for future in as_completed(futures):
        if future.state.is_cancelled():  # a stopped run's: its cells are not all done
            continue
        done += cells[future]
        if artifact is not None:
            with _publishing(f"{stage} progress"):
                _spent["updates"] += 1
                update_progress_artifact(artifact_id=artifact, progress=min(100.0, 100.0 * done / total))
    return _reports(futures)


def _reports(futures: list[PrefectFuture]) -> list[StageReport]:
    for future in futures:
        future.wait()
    if any(future.state.is_cancelled() for future in futures):
        raise stopping.Stopped()
    return [future.result() for future in futures]


CHANGES_ROWS_MAX = 200  # rows of the changes table; the rest are counted in its description


def publish_changes(run_id: str, changes: list[dict]) -> None:
    """The metric series that moved or are new since the previous run (the ``changes`` view), most notable first."""
    with _publishing("changes"):
        rows = [{"family": c["family"], "board": c["board"], "metric": c["metric"], "model": c["model"],
                 "slice": c["slice"], "status": c["status"], "previous": c["previous"], "value": c["value"],
                 "delta": c["delta"], "outside_interval": c["outside_interval"],
                 "change_ci_low": c.get("change_ci_low"), "change_ci_high": c.get("change_ci_high"),
                 "cause": c["cause"], "previous_run_id": c["previous_run_id"]} for c in changes[:CHANGES_ROWS_MAX]]
        outside = sum(bool(c["outside_interval"]) for c in changes)
        noise = sum(c["status"] == "within noise" for c in changes)
        more = f" (the first {CHANGES_ROWS_MAX} shown)" if len(changes) > CHANGES_ROWS_MAX else ""
        _create(create_table_artifact, table=_jsonable(rows), key=key("changes"),
                description=f"Run `{run_id}`: {len(changes)} metric value(s) changed or new since the previous run"
                            f"{more}, {noise} of them within noise (the paired 95% interval of the change on the "
                            f"items both runs share holds 0), {outside} outside their 95% interval "
                            "(`dialogbench query \"select * from changes\"`).")
