"""What a run shows in the Prefect UI besides its task runs: artifacts (the stage table, a leaderboard per family,
the report, the failed cells, a progress bar per computing stage) and its tags. Prefect wiring only: the numbers
come from ``dialogbench``. Publishing never fails a run: an API error is a warning and the run goes on. Every string
an artifact carries (table cells, Markdown, descriptions) has its control characters made visible
(``dialogbench.text.textsafe``): the UI and anyone who copies an artifact's text get no terminal escape or bidi override.

Artifact keys (each run adds a version under the same key; the flow run's Artifacts tab shows its own). Every key
names the run's board (``dialogbench/run/boards.py``), ``dialogbench-<board>-…``, so the UI's latest version of a key is
that board's latest run's: an ad-hoc run of another config publishes beside the nightly's, never over it. The board
is the one the caller gives, else the running family subflow's ``config`` parameter's, else the run's
``board:<board>`` tag (the pipeline publishes inside ``prefect.tags`` of its run tags); only an artifact published
outside a run that none of them names (a test's, a script's) has a key with no board, and a warning says so.
``<board>`` is the board itself when it is lowercase letters, digits and dashes (``nightly``); else its slug and a
short hash of the name (``demo+limit=4`` → ``demo-limit-4-<8 hex>``: two boards whose slugs agree still get keys
of their own), cut to ``BOARD_KEY_CHARS``. A key longer than ``KEY_MAX_CHARS`` is cut and ends with a hash of what
it names (``key``).

- ``dialogbench-<board>-stages``: planned / cached / computed / failed / seconds per stage
- ``dialogbench-<board>-leaderboard-<family>`` (``-<family>-<table>`` for a family with several, e.g. GameEval's
  games); a judged family's rows say in ``self_judged`` whether the judge is the model itself (its description
  names them)
- ``dialogbench-<board>-report``: a link to the run's report.html where ``dialogbench serve`` serves it
  (``report.url``), else a note saying where the file is and how to serve it; ``dialogbench-<board>-report-md``
  (report.md's text)
- ``dialogbench-<board>-explorer``: a link to the run's explorer.html (with ``report.url``), every judged dialogue
  with the judge's raw output
- ``dialogbench-<board>-judges``: per (judge, protocol), whether its numbers are measured
- ``dialogbench-<board>-failures``: stage, item, model, judge, error (redacted when written) of each failed cell
- ``dialogbench-<board>-changes``: the metric values that moved or are new since the previous run, with their cause
- ``dialogbench-<board>-progress-<stage>``: share of the stage's planned cells done, updated as its chunks finish
  (stages computing two chunks or more)
"""

from __future__ import annotations

import hashlib
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
from prefect.context import FlowRunContext, TagsContext
from prefect.futures import PrefectFuture, as_completed

from dialogbench.run import stopping
from dialogbench.cells import Chunk
from dialogbench.cells.records import run_failures
from dialogbench.judge_checks.self_judging import BIAS
from dialogbench.run.built import Run
from dialogbench.text.redact import redact_tree
from dialogbench.report.publish import report_urls
from dialogbench.run.runs import StageReport
from dialogbench.text.textsafe import visible_tree

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


# Prefect 3.7.7 bounds an artifact key's characters only (``prefect.types.names.ArtifactKey``: lowercase letters,
# digits, dashes; its database column is an unbounded string); these bounds are ours: a key stays readable in the
# Artifacts page and its URL, whatever the board (a board named from overrides may have 400 characters) or stage.
KEY_MAX_CHARS = 128
BOARD_KEY_CHARS = 48   # the board's part of a key, its hash included
HASH_CHARS = 8
BOARD_TAG = "board:"   # the run's tag naming its board (``dialogbench.run.runs.run_tags``)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")


def _digest(*texts: str) -> str:
    return hashlib.sha256("\0".join(texts).encode("utf-8")).hexdigest()[:HASH_CHARS]


def _hashed(slug: str, limit: int, *named: str) -> str:
    """``slug`` cut so that it and a dash and a hash of ``named`` fit in ``limit`` characters."""
    return "-".join(s for s in (slug[:limit - HASH_CHARS - 1].rstrip("-"), _digest(*named)) if s)


def board_slug(board: str) -> str:
    """The board as a key's part: the name itself when it is already lowercase letters, digits and dashes, at most
    ``BOARD_KEY_CHARS`` (``nightly``); else its slug and a hash of the name (``demo+limit=4`` →
    ``demo-limit-4-<8 hex>``; ``Nightly`` and ``nightly``, ``a.b`` and ``a-b`` get keys of their own), cut to fit."""
    slug = _slug(board)
    if slug == board and len(slug) <= BOARD_KEY_CHARS:
        return slug
    return _hashed(slug, BOARD_KEY_CHARS, board)


def key(*parts: str, board: str | None) -> str:
    """A valid artifact key (lowercase letters, digits, dashes) naming ``board``: ``("progress", "generate:Bot_A")``
    on ``nightly`` → ``dialogbench-nightly-progress-generate-bot-a`` (``board`` None: no board part); one longer
    than ``KEY_MAX_CHARS`` is cut and ends with a hash of the board and the parts."""
    slugs = (PREFIX, board_slug(board) if board else "", *(_slug(part) for part in parts))
    full = "-".join(s for s in slugs if s)
    return full if len(full) <= KEY_MAX_CHARS else _hashed(full, KEY_MAX_CHARS, board or "", *map(str, parts))


def run_board(board: str | None = None) -> str | None:
    """The board the artifacts being published belong to: ``board`` if given; else the running flow's ``run``
    parameter's (a family subflow, here or on a dispatch worker); else the ``board:`` tag of the tags in force
    (``prefect.tags``: the pipeline publishes inside its run tags) or of the running flow run. None, with a warning,
    when none names one (outside a run: the key then names no board)."""
    if board:
        return board
    context = FlowRunContext.get()
    run = (context.parameters or {}).get("run") if context is not None else None
    if getattr(run, "board", None):
        return run.board
    tags = [*sorted(TagsContext.get().current_tags),
            *(context.flow_run.tags if context is not None and context.flow_run is not None else [])]
    found = [t[len(BOARD_TAG):] for t in tags if isinstance(t, str) and t.startswith(BOARD_TAG) and t[len(BOARD_TAG):]]
    if found:
        return found[0]
    log.warning("no board names this artifact (none given, no run parameter, no board: tag): its key names none")
    return None


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


def publish_stages(run_id: str, stages: list[dict], *, board: str | None = None) -> None:
    rows = [{"stage": s["stage"], "planned": s["planned"], "cached": s["cached"], "computed": s["computed"],
             "failed": s["failed"], "blocked": s.get("blocked", 0), "seconds": round(s["seconds"], 2)} for s in stages]
    total = {k: sum(r[k] for r in rows) for k in ("planned", "cached", "computed", "failed", "blocked")}
    with _publishing("stages"):
        _create(create_table_artifact, table=rows, key=key("stages", board=run_board(board)),
                description=f"Run `{run_id}`: {len(rows)} stage(s); {total['planned']} planned, {total['cached']} "
                            f"cached, {total['computed']} computed, {total['failed']} failed, {total['blocked']} "
                            "blocked (their input failed or is missing).")


def publish_leaderboards(run_id: str, boards: dict[str, Any], *, board: str | None = None) -> None:
    """A table per family (a family whose leaderboard is several tables, e.g. GameEval's games: one per table); a
    table with a model judged by itself (its ``self_judged`` column) says what that means."""
    for family, rows in boards.items():
        tables = rows.items() if isinstance(rows, dict) else [(None, rows)]
        for name, table in tables:
            title = f"{family} {name}" if name else family
            selves = [r["model"] for r in table or [] if isinstance(r, dict) and r.get("self_judged")]
            with _publishing(f"{title} leaderboard"):
                _create(create_table_artifact, table=_jsonable(list(table or [])),
                        key=key("leaderboard", family, *([name] if name else []), board=run_board(board)),
                        description=f"Run `{run_id}`: {title} leaderboard ({len(table or [])} row(s))."
                                    + (f" self_judged: {', '.join(selves)}: {SELF_JUDGED}." if selves else ""))


def publish_report(run_id: str, paths: dict[str, str] | None, *, url: str | None = None, board: str | None = None) -> None:
    """Links to the run's report.html and its dialogue explorer where ``dialogbench serve`` serves them (``url``:
    ``report.url`` of the config), else a note saying where the files are and how to serve them; and report.md's
    text."""
    if not paths:
        return
    board = run_board(board)
    links = report_urls(url, run_id=run_id, board=board or "") if url else None
    if links:
        with _publishing("report link"):
            _create(create_link_artifact, link=links["html"], link_text=f"report ({run_id})",
                    key=key("report", board=board),
                    description=f"Run `{run_id}`: its HTML report (board `{board}`: latest at {links['board']}; "
                                f"every board and run: {links['index']}).")
    elif paths.get("html"):
        with _publishing("report note"):
            _create(create_markdown_artifact, key=key("report", board=board),
                    description=f"Run `{run_id}`: where its report is.",
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
            _create(create_markdown_artifact, markdown=text, key=key("report", "md", board=board),
                    description=f"Run `{run_id}`: report.md.")
    if paths.get("explorer") and links:
        with _publishing("explorer link"):
            _create(create_link_artifact, link=links["explorer"], link_text=f"explorer ({run_id})",
                    key=key("explorer", board=board), description=f"Run `{run_id}`: the dialogue explorer (every "
                    "judged dialogue, turn and game with the judge's raw output).")


def publish_judges(run_id: str, rows: list[dict], *, board: str | None = None) -> None:
    """Can the run's judges tell? One row per (judge, protocol): unreadable share, the most frequent answer's share,
    known-answer probes right, and the checks it fails (its numbers are then not measured)."""
    with _publishing("judges"):
        failing = [r for r in rows if not r.get("measured", True)]
        _create(create_table_artifact, table=_jsonable(rows), key=key("judges", board=run_board(board)),
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


def publish_failures(run: Run, run_id: str) -> None:
    """This run's failed cells, one row each (a cell retried within the run is one row with its attempts, so the count is
    the stages' ``failed`` total and the run's message); none: an empty table, so the key's latest version says so."""
    with _publishing("failures"):
        failures = run_failures(run.lake, run_id)
        rows = [{"stage": f["stage"], "item": f["item_id"], "model": ", ".join(f["models"]) or None, "judge": f["judge"],
                 "attempts": f["attempts"], "error": (f["error"] or "")[:ERROR_MAX_CHARS], "cell_key": f["cell_key"]}
                for f in failures[:FAILURE_ROWS_MAX]]
        more = f" (the first {FAILURE_ROWS_MAX} shown)" if len(failures) > FAILURE_ROWS_MAX else ""
        _create(create_table_artifact, table=rows, key=key("failures", board=run_board(run.board)),
                description=f"Run `{run_id}`: {len(failures)} failed cell(s){more}; the next run retries them "
                            "(`dialogbench query \"select * from failures\"`).")


def computed_with_progress(stage: str, planned: StageReport, chunks: list[Chunk],
                           futures: list[PrefectFuture], *, board: str | None = None) -> list[StageReport]:
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
        artifact = _create(create_progress_artifact, progress=100.0 * done / total,
                           key=key("progress", stage, board=run_board(board)),
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


def publish_changes(run_id: str, changes: list[dict], *, board: str | None = None) -> None:
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
        _create(create_table_artifact, table=_jsonable(rows), key=key("changes", board=run_board(board)),
                description=f"Run `{run_id}`: {len(changes)} metric value(s) changed or new since the previous run"
                            f"{more}, {noise} of them within noise (the paired 95% interval of the change on the "
                            f"items both runs share holds 0), {outside} outside their 95% interval "
                            "(`dialogbench query \"select * from changes\"`).")
