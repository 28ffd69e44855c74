"""One family's stages, in order, as one subflow: each stage is plan → compute its chunks (mapped, with
retries; a progress artifact follows a stage of several chunks) → record. Wiring only. One subflow per
family, not per stage: a Prefect subflow costs ~0.4 s to create and finish, and a cached stage's plan and
record take ~0.1 s (bench/cached_rerun.py). The subflow takes the run's ``Config`` itself (one object for the
whole run); Prefect records it redacted (``tasks/redacted.py``): no secret of the config reaches its database or UI."""

from __future__ import annotations

from prefect import unmapped
from prefect.states import Failed

from dialogbench.config import Config
from dialogbench.lake.space import DiskFull
from tasks.artifacts import computed_with_progress
from tasks.redacted import flow
from tasks.stages import compute_with_retries, plan, record


def stage(config: Config, run_id: str, name: str, config_path: str) -> dict:
    chunks, planned = plan(config, name, run_id)
    futures = compute_with_retries(config, name).map(unmapped(config), chunks, unmapped(run_id))
    computed = computed_with_progress(name, planned, chunks, list(futures))  # progress: stages of 2+ chunks
    return record(config, run_id, name, [planned, *computed], config_path).to_dict()


@flow(name="family", flow_run_name="{family}", log_prints=True)
def family(config: Config, run_id: str, family: str, stages: list[str], config_path: str) -> list[dict]:
    try:
        return [stage(config, run_id, name, config_path) for name in stages]
    except DiskFull as exc:  # one line saying where, not a traceback per flow; the parent fails the same way
        return Failed(message=str(exc), data=exc)
