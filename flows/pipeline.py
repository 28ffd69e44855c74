"""The whole nightly pipeline: check the config, run each benchmark family's flow, then rebuild the
catalog, run the SQL data tests and render the report. Wiring only."""

from __future__ import annotations

from prefect import flow

from flows.botchat import botchat
from flows.gameeval import gameeval
from flows.mtbench101 import mtbench101
from tasks.config import load_run_config, release_engines, start_run
from tasks.lake import catalog, check_lake, leaderboard, render_report


@flow(name="dialogbench", log_prints=True)
def pipeline(config_path: str = "configs/demo.yaml", limit: int | None = None, models: list[str] | None = None,
             n: list[int] | None = None, judge: str | None = None, lake: str | None = None) -> dict:
    config = load_run_config(config_path, {"limit": limit, "models": models, "n": n, "judge": judge, "lake": lake})
    run_id = start_run(config)
    stages = (botchat(config, run_id, config_path) + mtbench101(config, run_id, config_path)
              + gameeval(config, run_id, config_path))
    release_engines()
    catalog(config)
    check_lake(config)
    return {"run_id": run_id, "lake": config.lake, "stages": stages, "leaderboard": leaderboard(config),
            "report": render_report(config)}
