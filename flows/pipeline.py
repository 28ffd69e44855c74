"""The whole nightly pipeline: check the config, take the lake's lease (one writer at a time), run every
stage of every enabled family (one subflow per family), then run the SQL data tests, rebuild the catalog and
render the report, all before the lease is let go. Wiring only; the flow run is named by the lake's run id and
tagged with its config, families and models; its results are published as artifacts (``tasks/artifacts.py``).
The run records its effective config first and snapshots its metrics before the report (``tasks/history.py``),
so the report and the ``changes`` artifact say what moved since the previous run.

A run whose cells failed (after their retries) ends Failed, as ``Config.fail_on`` says, as does one whose judge
canary drifted below ``canary.min_agreement`` (a family's ``checks``), but only once its
catalog, data tests, report and artifacts are done: the results are published either way, and the Failed
state's data is the same summary a Completed run returns. A write that finds the disk full stops the run at once
(its chunk is not retried: ``tasks/stages.py``); the flow ends Failed with that one line (``lake.space.DiskFull``)."""

from __future__ import annotations

from prefect import tags
from prefect.runtime import flow_run
from prefect.states import Failed

from dialogbench.lake.lease import lake_lease
from dialogbench.lake.space import DiskFull
from dialogbench.runs import failure_lines, family_tags, new_run_id, run_tags
from dialogbench.redact import redact
from dialogbench.report.publish import failure_state_message
from flows.family import family
from tasks.artifacts import (cost, log_problems, publish_changes, publish_failures, publish_judges,
                             publish_leaderboards, publish_report, publish_stages, reset_cost, tag_flow_run)
from tasks.config import load_run_config, release_engines, start_run
from tasks.history import record_run_config, snapshot
from tasks.lake import catalog, check_lake, judge_summary, leaderboard, render_report
from tasks.redacted import flow
from tasks.stages import run_checks, run_families
from tasks.subflows import subflows_without_heartbeats


@flow(name="dialogbench", flow_run_name=new_run_id, log_prints=True)
def pipeline(config_path: str = "configs/demo.yaml", limit: int | None = None, models: list[str] | None = None,
             n: list[int] | None = None, judge: str | None = None, lake: str | None = None,
             board: str | None = None, lease_wait_s: float = 0.0):
    try:
        return _pipeline(config_path, limit, models, n, judge, lake, board, lease_wait_s)
    except DiskFull as exc:  # one line saying where and how much is free, not a traceback
        return Failed(message=str(exc), data=exc)


def _pipeline(config_path: str, limit: int | None, models: list[str] | None, n: list[int] | None,
              judge: str | None, lake: str | None, board: str | None, lease_wait_s: float):
    reset_cost()
    config = load_run_config(config_path, {"limit": limit, "models": models, "n": n, "judge": judge, "lake": lake,
                                           "board": board})
    with lake_lease(config.lake, wait_s=lease_wait_s, run_id=flow_run.name):
        run_id = start_run(config, flow_run.name)
        record_run_config(config, run_id, config_path)
        families = run_families(config)
        run_tagged = run_tags(config, config_path, families)
        tag_flow_run(run_tagged)
        with subflows_without_heartbeats():
            stages = []
            for name, names in families.items():
                with tags(*family_tags(config, config_path, name)):  # a subflow carries its own family's tags
                    stages += family(config, run_id, name, names, config_path)
        with tags(*run_tagged):  # every task run below carries them too
            publish_stages(run_id, stages)
            problems = run_checks(config, run_id)  # a drifted canary or an unreadable judge fails a run as cells do
            release_engines()
            check_lake(config)  # a lake that fails its data tests publishes nothing: no catalog, no report
            catalog(config)
            boards = leaderboard(config)
            publish_leaderboards(run_id, boards)
            publish_judges(run_id, judge_summary(config))
            history = snapshot(config, run_id)  # before the report, which opens with what changed
            publish_changes(run_id, history["changes"])
            problem_lines = failure_lines(stages, config.fail_on, problems)
            failed = "; ".join(problem_lines) or None
            report = render_report(config, run_id, config_path, failed)
            publish_report(run_id, report, url=config.report.url, board=config.board)
            publish_failures(config, run_id)
    log_problems(problem_lines)  # on the parent flow run: one WARNING per reason it fails
    summary = {"run_id": run_id, "lake": config.lake, "board": config.board, "stages": stages, "leaderboard": boards,
               "report": report,
               "history": {"rows": history["rows"], "changes": len(history["changes"]), "seconds": history["seconds"]},
               "tags": run_tagged, "failed": failed,
               "artifacts": cost()}
    if failed:
        message = failure_state_message(failed, config.report.url, run_id, config.board)
        return Failed(message=redact(message), data=summary)  # report.url may carry a password
    return summary
