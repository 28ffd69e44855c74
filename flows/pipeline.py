"""The whole nightly pipeline: check the config, take the lake's lease (one writer at a time), run every
stage of every enabled family (one subflow per family), then run the SQL data tests, rebuild the catalog and
render the report, all before the lease is let go. Wiring only; the flow run is named by the lake's run id."""

from __future__ import annotations

from prefect import flow
from prefect.runtime import flow_run

from dialogbench.lake.lease import lake_lease
from dialogbench.runs import new_run_id
from flows.family import family
from tasks.config import load_run_config, release_engines, start_run
from tasks.lake import catalog, check_lake, leaderboard, render_report
from tasks.stages import run_families
from tasks.subflows import subflows_without_heartbeats


@flow(name="dialogbench", flow_run_name=new_run_id, log_prints=True)
def pipeline(config_path: str = "configs/demo.yaml", limit: int | None = None, models: list[str] | None = None,
             n: list[int] | None = None, judge: str | None = None, lake: str | None = None,
             lease_wait_s: float = 0.0) -> dict:
    config = load_run_config(config_path, {"limit": limit, "models": models, "n": n, "judge": judge, "lake": lake})
    with lake_lease(config.lake, wait_s=lease_wait_s, run_id=flow_run.name):
        run_id = start_run(config, flow_run.name)
        with subflows_without_heartbeats():
            stages = [report for name, names in run_families(config).items()
                      for report in family(config, run_id, name, names, config_path)]
        release_engines()
        check_lake(config)  # a lake that fails its data tests publishes nothing: no catalog, no report
        catalog(config)
        return {"run_id": run_id, "lake": config.lake, "stages": stages, "leaderboard": leaderboard(config),
                "report": render_report(config)}
