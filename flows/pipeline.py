"""The whole nightly pipeline: check the config, take the lake's lease (one writer at a time), run every
stage of every enabled family (one subflow per family), then run the SQL data tests, rebuild the catalog and
render the report, all before the lease is let go. Wiring only; the flow run is named by the lake's run id and
tagged with its config, families and models; its results are published as artifacts (``tasks/artifacts.py``).

A run whose cells failed (after their retries) ends Failed, as ``Config.fail_on`` says, but only once its
catalog, data tests, report and artifacts are done: the results are published either way, and the Failed
state's data is the same summary a Completed run returns."""

from __future__ import annotations

from prefect import flow, tags
from prefect.runtime import flow_run
from prefect.states import Failed

from dialogbench.lake.lease import lake_lease
from dialogbench.runs import failing_stages, failure_message, new_run_id, run_tags
from flows.family import family
from tasks.artifacts import (cost, publish_failures, publish_leaderboards, publish_report, publish_stages, reset_cost,
                             tag_flow_run)
from tasks.config import load_run_config, release_engines, start_run
from tasks.lake import catalog, check_lake, leaderboard, render_report
from tasks.stages import run_families
from tasks.subflows import subflows_without_heartbeats


@flow(name="dialogbench", flow_run_name=new_run_id, log_prints=True)
def pipeline(config_path: str = "configs/demo.yaml", limit: int | None = None, models: list[str] | None = None,
             n: list[int] | None = None, judge: str | None = None, lake: str | None = None,
             lease_wait_s: float = 0.0):
    reset_cost()
    config = load_run_config(config_path, {"limit": limit, "models": models, "n": n, "judge": judge, "lake": lake})
    with lake_lease(config.lake, wait_s=lease_wait_s, run_id=flow_run.name):
        run_id = start_run(config, flow_run.name)
        families = run_families(config)
        run_tagged = run_tags(config, config_path, families)
        tag_flow_run(run_tagged)
        with tags(*run_tagged):  # every task run and family subflow below carries them too
            with subflows_without_heartbeats():
                stages = [report for name, names in families.items()
                          for report in family(config, run_id, name, names, config_path)]
            publish_stages(run_id, stages)
            release_engines()
            check_lake(config)  # a lake that fails its data tests publishes nothing: no catalog, no report
            catalog(config)
            boards = leaderboard(config)
            publish_leaderboards(run_id, boards)
            report = render_report(config)
            publish_report(run_id, report)
            publish_failures(config, run_id)
    failing = failing_stages(stages, config.fail_on)
    summary = {"run_id": run_id, "lake": config.lake, "stages": stages, "leaderboard": boards, "report": report,
               "tags": run_tagged, "failed": failure_message(failing, config.fail_on) if failing else None,
               "artifacts": cost()}
    if failing:
        return Failed(message=summary["failed"], data=summary)
    return summary
