"""Stage tasks: plan a stage, compute one chunk, record the stage's counts: thin wrappers over
``dialogbench.cells.runner``, the same three for every family's every stage. Each takes the run's ``Run``
(``dialogbench.run.built``): its stages, schedule and lake were built once, at the entry point."""

import logging

from prefect import Task
from prefect.cache_policies import NO_CACHE
from prefect.states import Cancelled, State

from dialogbench.run import runs, stopping
from dialogbench.cells import Chunk
from dialogbench.cells.runner import finish_stage, plan_stage, record_stage_plan, run_chunk
from dialogbench.run.built import Run
from dialogbench.lake.space import is_disk_full
from dialogbench.run.runs import StageReport
from tasks.redacted import task

log = logging.getLogger("dialogbench.checks")


@task(name="stages", cache_policy=NO_CACHE)
def run_families(run: Run) -> dict[str, list[str]]:
    """Each family the config enables that has stages, with them, in pipeline order (a family of checks only, such as
    the judge checks, gets no subflow: its checks run after every stage, in ``run_checks``)."""
    return run.stage_names()


def run_tags(run: Run, families: dict[str, list[str]]) -> list[str]:
    """The run's Prefect tags (``runs.run_tags``): config, board, its families, the models its stages call."""
    return runs.run_tags(run.config, run.source, families, run.stages)


def family_tags(run: Run, family: str) -> list[str]:
    """A family subflow's Prefect tags (``runs.family_tags``)."""
    return runs.family_tags(run.config, run.source, family, run.family_stages(family))


@task(name="plan", task_run_name="plan {stage}", cache_policy=NO_CACHE)
def plan(run: Run, stage: str, run_id: str, group: list[str] | None = None) -> tuple[list[Chunk], StageReport]:
    """The stage's missing cells, in chunks; its plan is recorded in ``plans`` (with ``group``, a dispatched unit's:
    only its group's cells, ``runner.plan_stage``). The backends no stage from this one on uses are closed first
    (``pool.Schedule``)."""
    run.schedule.release_before(stage)
    return plan_stage(run.stage(stage), run.config, run_id, lake=run.lake, group=group)


@task(name="record-plans", cache_policy=NO_CACHE)
def record_plans(run: Run, run_id: str, stages: list[str]) -> None:
    """The plans of the stages a dispatch sends in groups (each unit computes its group's cells, and records no
    plan)."""
    for name in stages:
        record_stage_plan(run.stage(name), run.config, run_id, lake=run.lake)


def retry_unless_disk_full(task, task_run, state) -> bool:
    """A chunk's retries are for transient errors (an endpoint's hiccup); a full disk stays full, so a chunk that
    failed for one fails at once (``lake.space.DiskFull``) instead of waiting 70 s to fail the same way."""
    return not is_disk_full(state.data if isinstance(state.data, BaseException) else None)


@task(name="compute", task_run_name="{chunk.stage} {chunk.index}/{chunk.total}", cache_policy=NO_CACHE,
      retry_delay_seconds=[10, 60], retry_condition_fn=retry_unless_disk_full)
def compute(run: Run, chunk: Chunk, run_id: str) -> StageReport | State:
    """One chunk's cells computed and written (a retry recomputes only what the chunk did not write). A chunk a
    stopped run did not start, or stopped midway, ends Cancelled (no retry), its report so far as its data."""
    try:
        return run_chunk(run.stage(chunk.stage), run.config, chunk, run_id, lake=run.lake,
                         after=run.schedule.models_after(chunk.stage))
    except stopping.Stopped as stop:
        report = stop.report or StageReport(chunk.stage)
        how = "stopped midway" if stop.report else "not started"
        return Cancelled(message=f"{chunk.name}: {how}, the run is stopping: {report.computed} computed, "
                                 f"{report.failed} failed kept", data=report)


def compute_with_retries(run: Run, stage: str) -> Task:
    """``compute`` with the stage's retries (judges are often remote endpoints: 2)."""
    return compute.with_options(retries=run.stage(stage).retries)


@task(name="record", task_run_name="record {stage}", cache_policy=NO_CACHE)
def record(run: Run, run_id: str, stage: str, reports: list[StageReport], group: list[str] | None = None
           ) -> StageReport:
    """One ``runs`` row (a group's of a stage dispatched in groups): the plan's counts plus every chunk's; one warning
    if cells failed."""
    return finish_stage(run.config, run_id, reports, run.source, lake=run.lake, group=group)


@task(name="run-checks", cache_policy=NO_CACHE)
def run_checks(run: Run, run_id: str) -> list[str]:
    """What fails the run besides failed cells: each enabled family's checks (the judge canary's drift)."""
    problems = [line for f in run.enabled if f.checks for line in f.checks(run.config, run.lake, run_id)]
    for line in problems:
        log.warning("%s", line)
    return problems
