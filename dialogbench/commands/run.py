"""``dialogbench run``: build the Run once (``dialogbench.run.registry.build_run``), check it, hand it to the
Prefect pipeline under the lake's lease, then print what it did: each stage, the leaderboards, the report, and why
it failed when it did. Prefect is imported only once the run is past its checks and holds the lease."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import NoReturn

from dialogbench.commands.overrides import overrides
from dialogbench.commands.run_failures import failures_command, run_failed_lines
from dialogbench.commands.run_reuse import reused, unchanged_run
from dialogbench.commands.say import count, say

PREFECT_DEFAULTS = {
    # Prefect's temporary local API can take > 20 s to start on a 2-core machine.
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    # Our own progress lines (dialogbench.* loggers) show up in the Prefect UI.
    "PREFECT_LOGGING_EXTRA_LOGGERS": "dialogbench",
}

RUN_FAILED = 4  # cells failed (fail_on in the config); results, summary and report are still written
# stopped by SIGTERM / SIGINT: 128 + the signal (143, 130), as a shell reports it (dialogbench/run/stopping.py)


def cmd_run(args) -> int:
    from dialogbench.run import progress_display, stopping
    from dialogbench.run.registry import build_run

    run = build_run(args.config, overrides(args))  # fail fast, before Prefect starts; built once, handed down
    # SIGTERM / SIGINT stop the run cleanly from here on; each stage's progress is shown (a live line on a terminal)
    with stopping.handling(run.config.stop_timeout_s), progress_display.showing(stream=sys.stderr):
        try:
            return _run(args, run)
        except stopping.Stopped:  # stopped before the flow began (queueing for the lease, say)
            stopping.exit_now(stopping.requested())


def _run(args, run) -> int:
    from dialogbench.run import stopping
    from dialogbench.lake.version import refuse_foreign
    from dialogbench.run.preflight import preflight

    config = run.config
    refuse_foreign(run.lake)  # a folder that is not a lake: one line, before anything in it
    start = time.perf_counter()
    if config.reuse_unchanged_run and not args.rerun:  # before preflight (which imports the engines): nothing runs
        reuse = unchanged_run(run)
        if reuse is not None:
            return reused(args, run, reuse, start)
    preflight(run)
    for key, value in PREFECT_DEFAULTS.items():
        os.environ.setdefault(key, value)
    from dialogbench.lake.lease import lake_lease
    from dialogbench.lake.version import ensure_current
    from dialogbench.run.runs import StageReport

    with lake_lease(config.lake, wait_s=args.wait):  # a busy lake is refused before Prefect starts
        ensure_current(run.lake, tables=config.lake_tables, store=config.lake_store)  # so is an older one (migrate); a format-3 one is recorded in place
        stopping.check()
        from flows.pipeline import pipeline  # Prefect (and its API log handler) only now
        from flows.signals import own_session_server, stop_temporary_server
        from tasks.returned import result_of

        own_session_server()  # a Ctrl-C reaches the run, which records its stop there, not Prefect's server
        stopping.at_exit(stop_temporary_server)  # a stopped run exits without atexit
        from prefect.exceptions import TerminationSignal

        try:
            state = pipeline(config_path=args.config, lease_wait_s=args.wait, return_state=True, run=run,
                             **{k: v for k, v in overrides(args).items() if v is not None})
        except TerminationSignal:  # a SIGTERM in the instant Prefect's own handler was in place (the flow starting)
            stopping.request(signal.SIGTERM)  # (its handler passed it on to ours, which asked already)
            raise stopping.Stopped() from None
    if state.is_cancelled() and stopping.requested():
        _stopped(args, state)
    result = result_of(state, raise_on_failure=False)
    if isinstance(result, BaseException):  # the flow raised: as before, the exception (a traceback, exit 1) ...
        from dialogbench.lake.space import as_disk_full

        raise as_disk_full(result, Path(config.lake)) or result  # ... but a full disk is one line (exit DISK_FULL)
    say(f"\nrun {result['run_id']} finished in {time.perf_counter() - start:.1f}s  (lake: {result['lake']}, "
        f"board: {result['board']})")
    for stage in result["stages"]:
        say("  " + StageReport(**stage).line())
    for family in run.families:
        if family.name in result["leaderboard"] and family.format_leaderboard:
            say("\n" + family.format_leaderboard(config, result["leaderboard"][family.name]))
    botchat = config.sections().get("botchat")
    if botchat is not None and botchat.enabled and (botchat.arena.enabled or botchat.gteval.enabled):
        say("\n" + _pairwise_leaderboards(run, result["board"]))
    if result.get("report"):
        say(f"\nreport: {result['report']['html']}")
        if result["report"].get("explorer"):
            say(f"explorer: {result['report']['explorer']}")
        if result["report"].get("tracking"):  # the config's tracking: logged to MLflow / W&B, or why not
            say(f"tracking: {result['report']['tracking']}")
    if args.json:
        from dialogbench.text.redact import redact
        from dialogbench.text.textsafe import visible_tree

        Path(args.json).write_text(redact(json.dumps(visible_tree(result), indent=2, default=str)))
    failed = sum(s["failed"] for s in result["stages"])
    if failed:
        say(f"\n{count(failed, 'cell')} failed; see `{failures_command(result)}`. A rerun retries them.")
    if not state.is_completed():  # failed cells, as the config's fail_on counts them: results published, run Failed
        from dialogbench.text.redact import redact

        say(redact("\n".join(run_failed_lines(result, config, state.message))), file=sys.stderr)
        return RUN_FAILED
    return 0


def _pairwise_leaderboards(run, board: str) -> str:
    """BotChat's Arena and GTEval leaderboards (the family's table above is UniEval's), as ``dialogbench export``
    and results.json have them."""
    from dialogbench.report.results import NoResults, format_all_leaderboards

    try:
        return format_all_leaderboards(run.lake, board, views=("botchat_elo", "botchat_gteval"), families=run.families)
    except NoResults as exc:
        return f"(Arena and GTEval leaderboards: {exc})"


def _stopped(args, state) -> NoReturn:
    """A run stopped by SIGTERM / SIGINT (the flow ended Cancelled, the lease is let go): ``--json`` gets what the
    flow says was kept, the temporary server stops, no process of the run is left, one line, exit 130 / 143."""
    from dialogbench.run import stopping
    from tasks.returned import result_of

    data = result_of(state, raise_on_failure=False)
    if args.json and isinstance(data, dict):
        from dialogbench.text.redact import redact

        Path(args.json).write_text(redact(json.dumps(data, indent=2, default=str)))
    stopping.exit_now(stopping.requested())
