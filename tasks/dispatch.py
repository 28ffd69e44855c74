"""Sending a run's model work out and waiting for it (``dialogbench/dispatch/units.py`` says what goes and how no cell is
lost or doubled). Each unit becomes a flow run of the config's ``dispatch.deployment`` on a work pool, or, without
one, a process of this box on GPUs of the run's (``dialogbench/dispatch/box.py``), started when enough of them are free; a
unit whose flow run crashed (process killed), or whose worker stopped beating, is sent again (a new attempt token)
up to ``retries`` times; the run goes on when every unit has ended, and the stages after the dispatch find their
cells cached."""

from __future__ import annotations

import contextlib
import logging
import os
import time
from pathlib import Path
from typing import Iterator

from prefect import get_run_logger
from prefect.cache_policies import NO_CACHE
from prefect.client.orchestration import get_client
from prefect.client.schemas.objects import StateType
from prefect.deployments import run_deployment
from prefect.states import Cancelled, Crashed

from dialogbench.dispatch import box, placement, units as dispatch
from dialogbench.run import stopping
from dialogbench.run.config import Config
from dialogbench.lake.lease import describe, held_by, holder
from dialogbench.lake.store import guard_commits
from dialogbench.cells.shared_tables import RUNS_TABLE
from dialogbench.run.registry import load_config, open_lake
from dialogbench.run.runs import StageReport, combine
from tasks.redacted import task

log = logging.getLogger("dialogbench.dispatch")
FINAL = {StateType.COMPLETED, StateType.FAILED, StateType.CANCELLED, StateType.CRASHED}


def load_unit_config(config_path: str, overrides: dict, run_id: str) -> Config:
    """The dispatching run's config; refused unless that run holds the lake's lease (it writes as that run)."""
    config = load_config(config_path, overrides)
    if not held_by(config.lake, run_id):
        held = describe(holder(Path(config.lake)))
        raise RuntimeError(f"{config.lake}: run {run_id} does not hold the lake's lease ({held}); dispatched work "
                           f"writes only while the run that sent it goes on")
    gpus = placement.use(None).devices  # the worker's GPUs: CUDA_VISIBLE_DEVICES in its environment, else all it sees
    get_run_logger().info("dispatch: this unit's GPUs: %s", ",".join(gpus) or "none")
    return config


@contextlib.contextmanager
def attempt_guard(config: Config, unit: str, token: str) -> Iterator[None]:
    """Every write of this process commits only while ``token`` is the unit's current attempt (its heartbeat, that
    says the worker is alive, runs from the unit's first moment: ``flows/work.py``)."""
    with guard_commits(dispatch.commit_guard(config.lake, unit, token)):
        yield


@task(name="split-units", cache_policy=NO_CACHE)
def split_units(config: Config, families: dict[str, list[str]]) -> tuple[dict[str, list[str]], list[dispatch.Unit],
                                                                          dict[str, list[str]]]:
    """What the run computes before the dispatch, the units it sends, what it computes after (``dispatch.split``)."""
    return dispatch.split(config, families)


@task(name="dispatch", cache_policy=NO_CACHE)
def send_units(config: Config, config_path: str, overrides: dict, run_id: str, units: list[dispatch.Unit],
               families: dict[str, list[str]], after: dict[str, list[str]] | None = None) -> dict[str, str]:
    """Send every unit and wait for them all; returns unit -> its last attempt's final state ("COMPLETED", ...).
    While units still run, the judge stages of ``after`` judge what the ended ones wrote (``dispatch.judging``)."""
    settings = config.dispatch
    overrides = {**overrides, "lake": str(config.lake)}
    judge = dispatch.judging(config, after or {})
    every = [*units, *([judge] if judge else [])]
    by_unit = {u.name: {f: [s for s in names if s in u.stages] for f, names in families.items()
                        if any(s in u.stages for s in names)} for u in every}
    groups = {u.name: {stage: list(u.models) for stage in u.grouped} for u in every}
    with get_client(sync_client=True) as client:
        launcher = _Pool(settings.deployment, client) if settings.deployment else _OnThisBox(config, client, every)
        live: dict[str, tuple[str, object, dispatch.Watch]] = {}  # unit -> (token, its attempt, its liveness)
        tries = {u.name: 0 for u in every}
        waiting, ended = [u.name for u in units], {}
        judging = _Judging(judge)

        def send(unit: str) -> None:
            token = dispatch.grant(config.lake, unit, run_id)
            tries[unit] += 1
            live[unit] = (token, launcher.start(unit, {"config_path": config_path, "overrides": overrides,
                                                      "run_id": run_id, "unit": unit, "family_stages": by_unit[unit],
                                                      "token": token, "groups": groups[unit]}, attempt=tries[unit]),
                          dispatch.Watch(settings.dead_after_s))
            log.info("dispatch: %s sent (attempt %d) %s", unit, tries[unit], launcher.where(live[unit][1]))

        start = time.monotonic()
        with _revoked_on_exit(config, live, launcher):
            while waiting or live:
                stopping.check()
                for unit in list(waiting):
                    if launcher.fits(unit):  # after the ones just sent took their GPUs
                        waiting.remove(unit)
                        send(unit)
                if judging.due(waiting, live) and launcher.fits(judge.name):  # GPUs no waiting unit could use
                    judging.started()
                    send(judge.name)
                time.sleep(settings.poll_s)
                for unit, (token, attempt, watch) in list(live.items()):
                    kind = launcher.state(attempt)
                    silent = watch.silent_s(picked_up=kind in (StateType.RUNNING, StateType.PENDING),  # by a worker
                                            beat=dispatch.last_beat(config.lake, unit, token), now=time.time())
                    dead = silent > watch.dead_after_s
                    if dead:  # its worker stopped beating: presumed dead; if it comes back, it commits nothing
                        dispatch.revoke(config.lake, unit)
                        launcher.crash(attempt, "dispatch: no heartbeat")
                        log.warning("dispatch: %s: no heartbeat for %.0fs: its worker is presumed dead", unit, silent)
                    if not dead and kind not in FINAL:
                        continue
                    del live[unit]
                    dispatch.settle(config.lake, unit)  # a commit it was killed in: finished before anyone recomputes
                    kind = StateType.CRASHED if dead else kind
                    if kind != StateType.COMPLETED:
                        launcher.explain(unit, attempt, kind)
                    if judge and unit == judge.name:
                        judging.ended(kind)
                        continue
                    if kind == StateType.CRASHED and tries[unit] <= settings.retries:
                        waiting.append(unit)  # a new token: the old attempt, if it comes back, commits nothing more
                        continue
                    ended[unit] = kind.value
                    judging.more()
                    log.info("dispatch: %s ended %s after %d attempt(s)", unit, kind.value, tries[unit])
    log.info("dispatch: %d unit(s) ended in %.1fs%s", len(ended), time.monotonic() - start, judging.summary())
    return ended


class _Judging:
    """When the judging unit (``dispatch.judging``) goes: after a unit ended, while others still run or wait, not
    while it runs already (it goes again after, for what ended meanwhile), and on GPUs left once the waiting units
    took what they fit in: what would idle while the last units run. It is never sent again when it fails:
    the run judges after its units as it would without it."""

    def __init__(self, unit: dispatch.Unit | None) -> None:
        self.unit, self.pending, self.passes = unit, False, 0

    def more(self) -> None:
        self.pending = self.unit is not None

    def due(self, waiting: list[str], live: dict) -> bool:
        if not self.pending or self.unit.name in live:
            return False
        return bool(waiting) or any(name != self.unit.name for name in live)  # units still generating

    def started(self) -> None:
        self.pending, self.passes = False, self.passes + 1

    def ended(self, kind: StateType) -> None:
        if kind != StateType.COMPLETED:
            log.warning("dispatch: %s ended %s: the run judges after its units, as without it", self.unit.name,
                        kind.value.lower())
        else:
            log.info("dispatch: %s: pass %d ended", self.unit.name, self.passes)

    def summary(self) -> str:
        return f"; {self.passes} judging pass(es) while units ran" if self.unit else ""


class _Pool:
    """Units as flow runs of the work pool's deployment."""

    def __init__(self, deployment: str, client) -> None:
        self.deployment, self.client = deployment, client

    def fits(self, unit: str) -> bool:  # the pool's workers take what they can; the rest waits there
        return True

    def start(self, unit: str, parameters: dict, *, attempt: int):
        return run_deployment(self.deployment, timeout=0, as_subflow=True, tags=[f"unit:{unit}"],
                              parameters=parameters)

    def where(self, run) -> str:
        return f"as flow run {run.name}"

    def state(self, run) -> StateType:
        return self.client.read_flow_run(run.id).state.type

    def crash(self, run, message: str) -> None:
        self.client.set_flow_run_state(run.id, Crashed(message=message), force=True)

    def explain(self, unit: str, run, kind: StateType) -> None:
        pass  # its flow run says why, in the UI

    def stop(self, run) -> None:
        self.client.set_flow_run_state(run.id, Cancelled(message="the dispatching run stopped"), force=True)

    def stopped(self, runs: list) -> None:
        pass  # their workers stop them


class _OnThisBox:
    """Units as processes of this box, each on GPUs of the run's own (``dialogbench/dispatch/box.py``)."""

    def __init__(self, config: Config, client, units: list[dispatch.Unit]) -> None:
        devices = placement.devices().devices  # the run's: --devices, the config's, CUDA_VISIBLE_DEVICES, nvidia-smi
        self.box = box.Box(devices, env={**os.environ, "PREFECT_API_URL": str(client.api_url)},
                           logs=Path(config.lake) / "_state" / "attempts" / "logs")
        self.needs = {u.name: box.needs(config, u.models, devices) for u in units}
        self.grace_s = config.stop_timeout_s + 5  # a unit's own stop: its chunk in flight, then its exit

    def fits(self, unit: str) -> bool:
        return self.box.fits(self.needs[unit])

    def start(self, unit: str, parameters: dict, *, attempt: int) -> box.Started:
        return self.box.start(unit, self.needs[unit], parameters, attempt=attempt)

    def where(self, started: box.Started) -> str:
        return f"on GPU {','.join(started.gpus)} (process {started.process.pid}, log {started.log})"

    def state(self, started: box.Started) -> StateType:
        return StateType(self.box.state(started))

    def crash(self, started: box.Started, message: str) -> None:
        self.box.kill(started)

    def explain(self, unit: str, started: box.Started, kind: StateType) -> None:
        log.warning("dispatch: %s ended %s (exit %s); the end of its log %s:\n%s", unit, kind.value.lower(),
                    started.process.returncode, started.log, self.box.tail(started))

    def stop(self, started: box.Started) -> None:
        started.process.terminate()  # all of them first: they stop their chunks at the same time

    def stopped(self, attempts: list[box.Started]) -> None:
        deadline = time.monotonic() + self.grace_s
        for started in attempts:
            self.box.stop(started, grace_s=max(0.0, deadline - time.monotonic()))


@contextlib.contextmanager
def _revoked_on_exit(config: Config, live: dict, launcher) -> Iterator[None]:
    """A dispatching run that stops (a signal) or fails while units run: each gets a new token no worker holds, so
    nothing more of it commits, and its flow run is cancelled (its process stopped)."""
    try:
        yield
    finally:
        for unit, (_, attempt, _) in list(live.items()):
            dispatch.revoke(config.lake, unit)
            try:
                launcher.stop(attempt)
            except Exception as exc:  # the server gone too: the revoked token is what matters
                log.warning("dispatch: %s: could not cancel its flow run (%s)", unit, exc)
        launcher.stopped([attempt for _, attempt, _ in live.values()])


@task(name="dispatched-reports", cache_policy=NO_CACHE)
def dispatched_reports(config: Config, run_id: str, units: list[dispatch.Unit], ended: dict[str, str]) -> tuple[
        list[dict], list[str]]:
    """The dispatched stages' reports as their workers recorded them (``runs``; a stage sent in groups, its groups'
    rows combined), and one problem line per unit that did not complete (its cells are missing: the run fails, the
    next run computes them)."""
    stages = {s for u in units for s in u.stages}
    rows = open_lake(config.lake).read(RUNS_TABLE.name, RUNS_TABLE.schema, where=f"run_id = '{run_id}'")
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
