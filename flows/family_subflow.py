"""One family's stages, in order, as one subflow: each stage is plan → compute its chunks (mapped, with
retries; a progress artifact follows a stage of several chunks) → record. Wiring only. One subflow per
family, not per stage: a Prefect subflow costs ~0.4 s to create and finish, and a cached stage's plan and
record take ~0.1 s (bench/cached_rerun.py). The subflow takes the run's ``Run`` itself (built once for the whole run:
config, stages, lake); Prefect records its config redacted (``tasks/redacted.py``): no secret of the config reaches
its database or UI.
A run stopped by a signal starts no further stage or chunk; the subflow ends Cancelled."""

from __future__ import annotations

from prefect import unmapped
from prefect.states import Failed

from dialogbench.run import stopping
from dialogbench.run.built import Run
from dialogbench.lake.space import DiskFull
from flows.signals import cancelled, cancelled_on_escalation, stop_on_signals
from tasks.artifacts import computed_with_progress
from tasks.redacted import flow
from tasks.stages import compute_with_retries, plan, record


def stage(run: Run, run_id: str, name: str, group: list[str] | None = None) -> dict:
    chunks, planned = plan(run, name, run_id, group)
    futures = compute_with_retries(run, name).map(unmapped(run), chunks, unmapped(run_id))
    # progress: stages of 2+ chunks; a chunk the run's stop ended (Cancelled) raises Stopped: the stage is not recorded
    computed = computed_with_progress(name, planned, chunks, list(futures), board=run.board)
    return record(run, run_id, name, [planned, *computed], group).to_dict()


@flow(name="family", flow_run_name="{family}", log_prints=True)
def family(run: Run, run_id: str, family: str, stages: list[str], groups: dict[str, list[str]] | None = None):
    """The family's stage reports (``groups``: the stages a dispatched unit runs in part, each for its group of
    models, ``dialogbench/dispatch/units.py``); a stopped run (SIGTERM, SIGINT) starts no further stage and ends this subflow
    Cancelled (``flows/signals.py``); a full disk ends it Failed with one line saying where (the parent fails the same
    way)."""
    done = []
    with stop_on_signals(run.config.stop_timeout_s), cancelled_on_escalation():  # Prefect put its SIGTERM handler in place
        try:
            for name in stages:
                stopping.check()
                done.append(stage(run, run_id, name, (groups or {}).get(name)))
        except stopping.Stopped:
            return cancelled()
        except DiskFull as exc:
            return Failed(message=str(exc), data=exc)
    return done
