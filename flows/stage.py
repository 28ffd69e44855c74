"""One stage of any family: plan → compute the chunks (mapped) → record. Wiring only."""

from __future__ import annotations

from prefect import flow, unmapped

from dialogbench.config import Config
from tasks.stages import compute_with_retries, plan, record


@flow(name="stage", flow_run_name="{stage}", log_prints=True)
def stage(config: Config, run_id: str, stage: str, config_path: str) -> dict:
    chunks, planned = plan(config, stage, run_id)
    computed = compute_with_retries(config, stage).map(unmapped(config), chunks, unmapped(run_id)).result()
    return record(config, run_id, stage, [planned, *computed], config_path).to_dict()
