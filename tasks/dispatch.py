"""Sending a run's model work to a Prefect work pool and waiting for it (``dialogbench/dispatch.py`` says what goes
and how no cell is lost or doubled). Each unit becomes a flow run of the config's ``dispatch.deployment``; a unit
whose flow run crashed, or whose worker stopped beating, is sent again (a new attempt token) up to ``retries``
times; the run goes on when every unit has ended, and the stages after the dispatch find their cells cached."""

from __future__ import annotations

import contextlib
import json
import logging
import time
from pathlib import Path
from typing import Iterator

from prefect.cache_policies import NO_CACHE
from prefect.client.orchestration import get_client
from prefect.client.schemas.objects import StateType
from prefect.deployments import run_deployment
from prefect.states import Cancelled, Crashed

from dialogbench import dispatch, placement, stopping
from dialogbench.config import Config
from dialogbench.lake.lease import describe, held_by, holder
from dialogbench.lake.store import guard_commits
from dialogbench.cells.shared_tables import RUNS_TABLE
from dialogbench.registry import load_config, open_lake
from dialogbench.runs import StageReport
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
    placement.use(None)  # the worker's GPUs: CUDA_VISIBLE_DEVICES in its environment, else all it sees
    return config


@contextlib.contextmanager
def attempt_guard(config: Config, unit: str, token: str) -> Iterator[None]:
    """Every write of this process commits only while ``token`` is the unit's current attempt; a heartbeat says the
    worker is alive."""
    with dispatch.heartbeat(config.lake, unit, token), guard_commits(dispatch.commit_guard(config.lake, unit, token)):
        yield


@task(name="split-units", cache_policy=NO_CACHE)
def split_units(config: Config, families: dict[str, list[str]]) -> tuple[dict[str, list[str]], list[dispatch.Unit],
                                                                          dict[str, list[str]]]:
    """What the run computes before the dispatch, the units it sends, what it computes after (``dispatch.split``)."""
    return dispatch.split(config, families)


@task(name="dispatch", cache_policy=NO_CACHE)
def send_units(config: Config, config_path: str, overrides: dict, run_id: str, units: list[dispatch.Unit],
               families: dict[str, list[str]]) -> dict[str, str]:
    """Send every unit and wait for them all; returns unit -> its last flow run's final state ("COMPLETED", ...)."""
    settings = config.dispatch
    overrides = {**overrides, "lake": str(config.lake)}
    by_unit = {u.name: {f: [s for s in names if s in u.stages] for f, names in families.items()
                        if any(s in u.stages for s in names)} for u in units}
    live: dict[str, tuple[str, object, float]] = {}  # unit -> (token, flow run id, sent at)
    tries = {u.name: 0 for u in units}
    ended: dict[str, str] = {}

    def send(unit: str) -> None:
        token = dispatch.grant(config.lake, unit, run_id)
        run = run_deployment(settings.deployment, timeout=0, as_subflow=True, tags=[f"unit:{unit}"],
                             parameters={"config_path": config_path, "overrides": overrides, "run_id": run_id,
                                         "unit": unit, "family_stages": by_unit[unit], "token": token})
        live[unit] = (token, run.id, time.time())
        tries[unit] += 1
        log.info("dispatch: %s sent (attempt %d) as flow run %s", unit, tries[unit], run.name)

    start = time.monotonic()
    for unit in by_unit:
        send(unit)
    with get_client(sync_client=True) as client, _revoked_on_exit(config, live, client):
        while live:
            stopping.check()
            time.sleep(settings.poll_s)
            for unit, (token, run_id_, sent) in list(live.items()):
                state = client.read_flow_run(run_id_).state
                beat = dispatch.last_beat(config.lake, unit, token)
                dead = (state.type in (StateType.RUNNING, StateType.PENDING)  # picked up by a worker
                        and time.time() - (beat or sent) > settings.dead_after_s)
                if dead:  # its worker stopped beating: presumed dead, its flow run marked so
                    client.set_flow_run_state(run_id_, Crashed(message="dispatch: no heartbeat"), force=True)
                    log.warning("dispatch: %s: no heartbeat for %.0fs: its worker is presumed dead", unit,
                                time.time() - (beat or sent))
                if not dead and state.type not in FINAL:
                    continue
                del live[unit]
                kind = StateType.CRASHED if dead else state.type
                if kind == StateType.CRASHED and tries[unit] <= settings.retries:
                    send(unit)  # a new token: the old attempt, if it comes back, commits nothing more
                    continue
                ended[unit] = kind.value
                log.info("dispatch: %s ended %s after %d attempt(s)", unit, kind.value, tries[unit])
    log.info("dispatch: %d unit(s) ended in %.1fs", len(ended), time.monotonic() - start)
    return ended


@contextlib.contextmanager
def _revoked_on_exit(config: Config, live: dict, client) -> Iterator[None]:
    """A dispatching run that stops (a signal) or fails while units run: each gets a new token no worker holds, so
    nothing more of it commits, and its flow run is cancelled."""
    try:
        yield
    finally:
        for unit, (_, flow_run_id, _) in list(live.items()):
            dispatch.grant(config.lake, unit, "revoked")
            try:
                client.set_flow_run_state(flow_run_id, Cancelled(message="the dispatching run stopped"), force=True)
            except Exception as exc:  # the server gone too: the revoked token is what matters
                log.warning("dispatch: %s: could not cancel its flow run (%s)", unit, exc)


@task(name="dispatched-reports", cache_policy=NO_CACHE)
def dispatched_reports(config: Config, run_id: str, units: list[dispatch.Unit], ended: dict[str, str]) -> tuple[
        list[dict], list[str]]:
    """The dispatched stages' reports as their workers recorded them (``runs``), and one problem line per unit that
    did not complete (its cells are missing: the run fails, the next run computes them)."""
    stages = {s for u in units for s in u.stages}
    rows = open_lake(config.lake).read(RUNS_TABLE.name, RUNS_TABLE.schema, where=f"run_id = '{run_id}'")
    reports = [StageReport(r["stage"], r["planned"], r["cached"], r["computed"], r["failed"], r["seconds"],
                           json.loads(r["detail"] or "{}"), blocked=r["blocked"] or 0).to_dict()
               for r in rows.to_pylist() if r["stage"] in stages]
    problems = [f"dispatch: {unit} ended {state.lower()} on its last attempt: its cells that did not finish are "
                f"missing (the next run computes them)" for unit, state in ended.items() if state != "COMPLETED"]
    for line in problems:
        log.warning("%s", line)
    return reports, problems
