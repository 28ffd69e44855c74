"""The whole nightly pipeline: check the config, take the lake's lease (one writer at a time), run every
stage of every enabled family (one subflow per family), then run the SQL data tests, keep a Delta lake's files few
(``lake_upkeep``), rebuild the catalog and render the report, all before the lease is let go. Wiring only; the flow run is named by the lake's run id and
tagged with its config, families and models; its results are published as artifacts (``tasks/artifacts.py``).
The run records its effective config first and snapshots its metrics before the report (``tasks/history.py``),
so the report and the ``changes`` artifact say what moved since the previous run.

A run whose cells failed (after their retries) ends Failed, as ``Config.fail_on`` says, as does one whose judge
canary drifted below ``canary.min_agreement`` (a family's ``checks``), but only once its
catalog, data tests, report and artifacts are done: the results are published either way, and the Failed
state's data is the same summary a Completed run returns. A write that finds the disk full stops the run at once
(its chunk is not retried: ``tasks/stages.py``); the flow ends Failed with that one line (``lake.space.DiskFull``).

A run stopped by SIGTERM or SIGINT (``flows/signals.py``, README "Stopping a run") starts nothing new, keeps what it
wrote, lets its engines and the lease go, and ends Cancelled with a message saying so; it publishes nothing."""

from __future__ import annotations

import signal

from prefect import get_run_logger, tags
from prefect.exceptions import TerminationSignal
from prefect.runtime import flow_run
from prefect.states import Cancelled, Failed, State

from dialogbench.run import stopping
from dialogbench.lake.lease import lake_lease
from dialogbench.lake.space import DiskFull
from dialogbench.run.built import Run
from dialogbench.run.pool import release_all
from dialogbench.run.runs import failure_lines, new_run_id, now
from dialogbench.text.redact import redact
from dialogbench.report.publish import failure_state_message
from flows.family_subflow import family
from flows.signals import cancelled_on_escalation, stop_on_signals
from tasks.artifacts import (cost, log_problems, publish_changes, publish_failures, publish_judges,
                             publish_leaderboards, publish_report, publish_stages, reset_cost, tag_flow_run)
from tasks.lifecycle import load_run_config, release_engines, start_run
from tasks.dispatch import dispatched_reports, send_units, split_units
from tasks.history import record_run_config, snapshot
from tasks.lake import catalog, check_lake, judge_summary, leaderboard, render_report, upkeep_lake
from tasks.redacted import flow
from tasks.returned import result_of
from tasks.stages import family_tags, record_plans, run_checks, run_families, run_tags
from tasks.subflows import subflows_without_heartbeats


@flow(name="dialogbench", flow_run_name=new_run_id, log_prints=True)
def pipeline(config_path: str = "configs/demo.yaml", limit: int | None = None, models: list[str] | None = None,
             n: list[int] | None = None, judge: str | None = None, lake: str | None = None,
             board: str | None = None, lease_wait_s: float = 0.0, stop_timeout_s: float | None = None,
             devices: str | None = None, model: list[str] | None = None, canary: bool | None = None,
             run: Run | None = None):
    """A deployment gives the config's path and flags, and the run is built and checked here; the CLI, which built and
    checked it already (``dialogbench run``), hands it down as ``run`` (its path and flags are given too, for the UI)."""
    reset_cost()
    with stop_on_signals(stop_timeout_s), cancelled_on_escalation():  # Prefect put its own SIGTERM handler in place
        try:
            if run is None:
                run = load_run_config(config_path, {"limit": limit, "model": model, "models": models, "n": n,
                                                    "judge": judge, "lake": lake, "board": board,
                                                    "stop_timeout_s": stop_timeout_s, "devices": devices,
                                                    "canary": canary})
            return _run(run, lease_wait_s)
        except (stopping.Stopped, TerminationSignal):
            return _stopped()
        except DiskFull as exc:  # one line saying where and how much is free, not a traceback
            return Failed(message=str(exc), data=exc)


def _run(run: Run, lease_wait_s: float):
    config = run.config
    stopping.install(config.stop_timeout_s)  # the config's timeout (a deployment's run has no CLI to set it)
    with lake_lease(config.lake, wait_s=lease_wait_s, run_id=flow_run.name):
        stopping.check()
        run_id = start_run(run, flow_run.name)
        started_at = now()  # run.json's and the summary's started_at (UTC)
        record_run_config(run, run_id)
        families = run_families(run)
        stopping.progress.begin([name for names in families.values() for name in names])
        run_tagged = run_tags(run, families)
        tag_flow_run(run_tagged)
        with subflows_without_heartbeats():
            if config.dispatch:  # the model work goes to the work pool's workers; the run does the rest
                before, units, after = split_units(run, families)
                stages = _families(run, run_id, before)
                record_plans(run, run_id, list(dict.fromkeys(s for unit in units for s in unit.grouped)))
                ended = send_units(run, run_id, units, families, after)
                sent, dispatch_problems = dispatched_reports(run, run_id, units, ended)
                stages += sent + _families(run, run_id, after)
            else:
                stages, dispatch_problems = _families(run, run_id, families), []
        with tags(*run_tagged):  # every task run below carries them too
            publish_stages(run_id, stages, board=run.board)
            stopping.check()
            # a drifted canary or an unreadable judge fails a run as cells do, and so does dispatched work lost
            problems = dispatch_problems + run_checks(run, run_id)
            release_engines()
            stopping.check()
            check_lake(run)  # a lake that fails its data tests publishes nothing: no catalog, no report
            # the snapshot first: the leaderboards and the report read its intervals and rank ranges (headline),
            # and the report opens with what changed
            history = snapshot(run, run_id)
            upkeep_lake(run)  # a Delta lake's compaction and vacuum, after the run's last commit
            catalog(run)  # after them: a Delta lake's catalog names the files of its tables' latest versions
            boards = leaderboard(run)
            publish_leaderboards(run_id, boards, board=run.board)
            publish_judges(run_id, judge_summary(run), board=run.board)
            publish_changes(run_id, history["changes"], board=run.board)
            stopping.check()
            problem_lines = failure_lines(stages, config.fail_on, problems)
            failed = "; ".join(problem_lines) or None
            stopping.check()
            report = render_report(run, run_id, failed, started_at)
            publish_report(run_id, report, url=config.report.url, board=run.board)
            publish_failures(run, run_id)
    log_problems(problem_lines)  # on the parent flow run: one WARNING per reason it fails
    summary = {"run_id": run_id, "lake": config.lake, "board": config.board, "stages": stages, "leaderboard": boards,
               "report": report,
               "history": {"rows": history["rows"], "changes": len(history["changes"]), "seconds": history["seconds"]},
               "tags": run_tagged, "failed": failed, "failed_lines": problem_lines,
               "started_at": started_at.isoformat(), "finished_at": now().isoformat(),
               "artifacts": cost()}
    if failed:
        message = failure_state_message(failed, config.report.url, run_id, config.board)
        return Failed(message=redact(message), data=summary)  # report.url may carry a password
    return summary


def _families(run: Run, run_id: str, families: dict[str, list[str]]) -> list[dict]:
    """Each family's stages as its subflow, in order; their stage reports."""
    stages = []
    for name, names in families.items():
        stopping.check()
        with tags(*family_tags(run, name)):  # a subflow carries its own family's tags
            state = family(run, run_id, name, names, return_state=True)
        if state.is_cancelled():  # the run was stopped (SIGTERM, SIGINT)
            raise stopping.Stopped()
        stages += result_of(state)
    return stages


def _stopped() -> State:
    """A run stopped by SIGTERM or SIGINT: its engines go (their processes stop), the lease went with the ``with``
    block, and the flow run ends Cancelled with what was kept (what was written stays; the next run completes the
    rest). Prefect's own SIGTERM handling (a subflow starting, or a worker's cancellation it acknowledged) ends here
    too, as a SIGTERM."""
    if stopping.requested() is None:
        stopping.request(signal.SIGTERM)
    release_all()
    stop = stopping.requested()
    message = stopping.message(stop)
    get_run_logger().warning("%s", message)
    return Cancelled(message=message, data={"run_id": flow_run.name, "stopped": {
        "signal": stop.name, "seconds": round(stop.elapsed(), 1), "stages": list(stopping.progress.stages),
        "stages_done": list(stopping.progress.done), "cells_kept": stopping.progress.cells, "message": message}})
