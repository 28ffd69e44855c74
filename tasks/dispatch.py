"""Sending a run's model work out and waiting for it: Prefect's side (``dialogbench/dispatch/units.py`` says what goes
and how no cell is lost or doubled; ``dialogbench/dispatch/scheduler.py`` is the loop that sends and watches). Each unit
becomes a flow run of the config's ``dispatch.deployment`` on a work pool, a task run that a task worker takes
(``dispatch.task_workers``, ``flows/unit_worker.py``), or else a process of this box on GPUs of the run's
(``dialogbench/dispatch/box.py``), started when enough of them are free; a unit whose flow run
crashed (process killed), or whose worker stopped beating, is sent again (a new attempt token) up to ``retries``
times; the run goes on when every unit has ended, and the stages after the dispatch find their cells cached."""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
from pathlib import Path
from typing import Iterator

from prefect import get_run_logger
from prefect.cache_policies import NO_CACHE
from prefect.client.orchestration import get_client
from prefect.deployments import run_deployment
from prefect.states import Cancelled, Crashed, Failed, State

from dialogbench.dispatch import outcome, placement, scheduler, units as dispatch
from dialogbench.run import stopping
from dialogbench.run.built import Run
from dialogbench.run.config import Config
from dialogbench.lake.lease import describe, held_by, holder
from dialogbench.lake.store import guard_commits
from dialogbench.cells.shared_tables import RUNS_TABLE
from dialogbench.run.runs import StageReport, combine
from tasks.redacted import task

log = logging.getLogger("dialogbench.dispatch")


def check_unit(run: Run, run_id: str, unit: str, token: str) -> None:
    """A unit's run (built from the dispatching run's config and flags, ``flows/work.py``) goes on only while ``token``
    is ``unit``'s current attempt (``dispatch.still_current``: withdrawn by a run that stopped, it says so) and that
    run holds the lake's lease (it writes as that run; the refusal names who holds it)."""
    config, root = run.config, dispatch.state_root(run.config)
    dispatch.still_current(root, unit, token)  # first: a run that stopped says so, as its lease is gone too
    if not config.lake_store and not held_by(config.lake, run_id):  # (on a store, its beat there: still_current)
        held = describe(holder(Path(config.lake)))
        raise dispatch.Withdrawn(f"{config.lake}: run {run_id} does not hold the lake's lease ({held}); dispatched "
                                 f"work writes only while the run that sent it goes on")
    gpus = placement.use(None).devices  # the worker's GPUs: CUDA_VISIBLE_DEVICES in its environment, else all it sees
    get_run_logger().info("dispatch: this unit's GPUs: %s", ",".join(gpus) or "none")


@contextlib.contextmanager
def attempt_guard(config: Config, unit: str, token: str) -> Iterator[None]:
    """Every write of this process commits only while ``token`` is the unit's current attempt (its heartbeat, that
    says the worker is alive, runs from the unit's first moment: ``flows/work.py``)."""
    with guard_commits(dispatch.commit_guard(dispatch.state_root(config), unit, token)):
        yield


def ended(unit: str, message: str, cause: "BaseException | State") -> State:
    """The state a unit's flow run ends in, for ``cause`` (an exception, or the failed state of a family's subflow,
    whose exception it looks at): Cancelled, Crashed or Failed, as ``dialogbench.dispatch.outcome.ending`` says."""
    if isinstance(cause, State):
        try:
            cause = cause.result(raise_on_failure=False)
        except Exception as exc:  # its result was not kept: what reading it raised says as much
            cause = exc
    kind, why = outcome.ending(cause if isinstance(cause, BaseException) else None)
    text = f"{unit}: {message}" + (f" ({why})" if why and why not in message else "")
    return {"CANCELLED": Cancelled, "CRASHED": Crashed}.get(kind, Failed)(message=text)


@task(name="split-units", cache_policy=NO_CACHE)
def split_units(run: Run, families: dict[str, list[str]]) -> tuple[dict[str, list[str]], list[dispatch.Unit],
                                                                    dict[str, list[str]]]:
    """What the run computes before the dispatch, the units it sends, what it computes after (``dispatch.split``);
    units for task workers need a server they can reach: refused here, before anything is computed, without one."""
    if run.config.dispatch.task_workers:
        _TaskWorkers.check_server()
    return dispatch.split(run, families)


@task(name="dispatch", cache_policy=NO_CACHE)
def send_units(run: Run, run_id: str, units: list[dispatch.Unit], families: dict[str, list[str]],
               after: dict[str, list[str]] | None = None) -> dict[str, str]:
    """Send every unit and wait for them all (``dialogbench.dispatch.scheduler.send_all``); returns unit -> its last
    attempt's final state ("COMPLETED", ...). While units still run, the judge stages of ``after`` judge what the ended
    ones wrote (``dispatch.judging``). Each unit builds its run from the same config path and flags
    (``flows/work.py``), the lake named among them."""
    config = run.config
    root = dispatch.state_root(config)  # a lake on a store: its URI, which every unit's box resolves to its own folder
    overrides = {**run.overrides, "lake": root}
    judge = dispatch.judging(run, after or {})
    every = [*units, *([judge] if judge else [])]
    by_unit = {u.name: {f: [s for s in names if s in u.stages] for f, names in families.items()
                        if any(s in u.stages for s in names)} for u in every}
    groups = {u.name: {stage: u.group(stage) for stage in u.grouped} for u in every}

    def parameters(unit: str, token: str) -> dict:  # what ``flows.work.work`` is called with
        return {"config_path": run.source, "overrides": overrides, "run_id": run_id, "unit": unit,
                "family_stages": by_unit[unit], "token": token, "groups": groups[unit]}

    with get_client(sync_client=True) as client:
        if config.dispatch.deployment:
            launcher = _Pool(config.dispatch.deployment, client)
        elif config.dispatch.task_workers:
            launcher = _TaskWorkers(client)
        else:
            launcher = scheduler.OnThisBox(config, {**os.environ, "PREFECT_API_URL": str(client.api_url)}, every)
        try:
            return scheduler.send_all(launcher=launcher, lake=root, run_id=run_id, settings=config.dispatch,
                                      units=units, judge=judge, parameters=parameters, check=stopping.check)
        finally:
            launcher.close()


class _Pool:
    """Units as flow runs of the work pool's deployment (``scheduler.Launcher``)."""

    def __init__(self, deployment: str, client) -> None:
        self.deployment, self.client = deployment, client

    def fits(self, unit: str) -> bool:  # the pool's workers take what they can; the rest waits there
        return True

    def start(self, unit: str, parameters: dict, *, attempt: int):
        return run_deployment(self.deployment, timeout=0, as_subflow=True, tags=[f"unit:{unit}"],
                              parameters=parameters)

    def where(self, run) -> str:
        return f"as flow run {run.name}"

    def state(self, run) -> str:
        return self.client.read_flow_run(run.id).state.type.value

    def crash(self, run, message: str) -> None:
        self.client.set_flow_run_state(run.id, Crashed(message=message), force=True)

    def explain(self, unit: str, run, kind: str) -> None:
        pass  # its flow run says why, in the UI

    def stop(self, run) -> None:
        self.client.set_flow_run_state(run.id, Cancelled(message="the dispatching run stopped"), force=True)

    def stopped(self, runs: list) -> None:
        pass  # their workers stop them

    def close(self) -> None:
        pass  # the pool's workers outlive the dispatch


class _TaskWorkers:
    """Units as task runs of ``flows.work.work_unit``, which task workers (``flows/unit_worker.py``) subscribed to this
    run's Prefect server take, one at a time each (``scheduler.Launcher``). Their parameters travel through Prefect's
    task scheduling storage (PREFECT_TASKS_SCHEDULING_DEFAULT_STORAGE_BLOCK: shared by every box, or local to one)."""

    def __init__(self, client) -> None:
        self.check_server()
        self.client = client

    @staticmethod
    def check_server() -> None:
        from prefect.settings import get_current_settings

        if not get_current_settings().api.url:
            raise ValueError("dispatch.task_workers: the units go to task workers subscribed to a Prefect server, and "
                             "this run has none of its own (no PREFECT_API_URL: a temporary server no worker can "
                             "reach); start one (prefect server start), set PREFECT_API_URL for the run and its "
                             "workers (python -m flows.unit_worker), or drop dispatch.task_workers")

    def fits(self, unit: str) -> bool:  # the workers take what they can; the rest waits on the server
        return True

    def start(self, unit: str, parameters: dict, *, attempt: int):
        """``work_unit.delay``, outside this run's Prefect context: Prefect would store it with the parameters, and it
        holds this flow's and task's own (the ``Run``, which does not pickle); the run's id is a tag instead."""
        return contextvars.Context().run(_delayed, parameters)

    def where(self, future) -> str:
        return f"as task run {future.task_run_id} (to a task worker)"

    def state(self, future) -> str:
        from prefect.exceptions import ObjectNotFound

        try:
            return self.client.read_task_run(future.task_run_id).state.type.value
        except ObjectNotFound:  # a task worker deleted it: it could not read its parameters
            log.warning("dispatch: task run %s is gone: a task worker deleted it, unable to read its parameters "
                        "(they are in Prefect's task scheduling storage: PREFECT_LOCAL_STORAGE_PATH on a folder the "
                        "run and its workers share, or PREFECT_TASKS_SCHEDULING_DEFAULT_STORAGE_BLOCK); sent again",
                        future.task_run_id)
            return "CRASHED"

    def crash(self, future, message: str) -> None:
        self.client.set_task_run_state(future.task_run_id, Crashed(message=message), force=True)

    def explain(self, unit: str, future, kind: str) -> None:
        pass  # its task run says why, in the UI

    def stop(self, future) -> None:
        self.client.set_task_run_state(future.task_run_id, Cancelled(message="the dispatching run stopped"),
                                       force=True)

    def stopped(self, futures: list) -> None:
        pass  # revoked: each ends at its next commit, Cancelled

    def close(self) -> None:
        pass  # the task workers outlive the dispatch


def _delayed(parameters: dict):
    from prefect import tags

    from flows.work import work_unit

    with tags(f"unit:{parameters['unit']}", f"run:{parameters['run_id']}"):
        return work_unit.delay(**parameters)


@task(name="dispatched-reports", cache_policy=NO_CACHE)
def dispatched_reports(run: Run, run_id: str, units: list[dispatch.Unit], ended: dict[str, str]) -> tuple[
        list[dict], list[str]]:
    """The dispatched stages' reports as their workers recorded them (``runs``; a stage sent in groups, its groups'
    rows combined), and one problem line per unit that did not complete (its cells are missing: the run fails, the
    next run computes them)."""
    stages = {s for u in units for s in u.stages}
    rows = run.lake.read(RUNS_TABLE.name, RUNS_TABLE.schema, where=f"run_id = '{run_id}'")
    by_stage: dict[str, list[StageReport]] = {}
    for r in rows.to_pylist():
        if r["stage"] in stages:
            by_stage.setdefault(r["stage"], []).append(StageReport.from_row(r))
    reports = [combine(found).to_dict() for found in by_stage.values()]
    problems = [f"dispatch: {unit} ended {state.lower()} on its last attempt: its cells that did not finish are "
                f"missing (the next run computes them)" for unit, state in ended.items() if state != "COMPLETED"]
    for line in problems:
        log.warning("%s", line)
    return reports, problems
