"""The dispatching run's loop: send each unit when it fits, watch each attempt's state and heartbeat, send a crashed or
silent one again (a new attempt token) up to ``retries`` times, start the judging unit on GPUs the waiting units
leave, and end when every unit has ended. Where a unit runs is a ``Launcher``'s business: a Prefect work pool's
deployment (``tasks/dispatch.py``, which owns Prefect's side) or a process of this box (``OnThisBox``). States are
Prefect's names as plain strings, so this loop needs no Prefect."""

from __future__ import annotations

import contextlib
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Protocol, Sequence

from dialogbench.dispatch import box, placement, units as dispatch

if TYPE_CHECKING:
    from dialogbench.run.config import Config, DispatchConfig

log = logging.getLogger("dialogbench.dispatch")
FINAL = frozenset({"COMPLETED", "FAILED", "CANCELLED", "CRASHED"})
PICKED_UP = frozenset({"RUNNING", "PENDING"})  # a worker has the attempt: its silence counts from now


class Launcher(Protocol):
    """Where units run: ``fits`` (room for it now), ``start`` (an attempt), ``where`` (a line saying where it went),
    ``state`` (the attempt's state name), ``crash`` (end an attempt presumed dead), ``explain`` (say why an attempt did
    not complete), ``stop`` and ``stopped`` (the dispatching run stops: ask each, then wait for them), ``close`` (the
    dispatch is over)."""

    def fits(self, unit: str) -> bool: ...
    def start(self, unit: str, parameters: dict, *, attempt: int) -> Any: ...
    def where(self, attempt: Any) -> str: ...
    def state(self, attempt: Any) -> str: ...
    def crash(self, attempt: Any, message: str) -> None: ...
    def explain(self, unit: str, attempt: Any, kind: str) -> None: ...
    def stop(self, attempt: Any) -> None: ...
    def stopped(self, attempts: list) -> None: ...
    def close(self) -> None: ...


def send_all(*, launcher: Launcher, lake: str | Path, run_id: str, settings: "DispatchConfig",
             units: Sequence[dispatch.Unit], judge: dispatch.Unit | None,
             parameters: Callable[[str, str], dict], check: Callable[[], None] = lambda: None) -> dict[str, str]:
    """Send every unit of ``units`` and wait for them all; returns unit -> its last attempt's final state
    ("COMPLETED", ...). ``judge`` (``dispatch.judging``) goes while units still run, on GPUs no waiting unit could use.
    ``parameters(unit, token)`` are an attempt's flow parameters; ``check`` raises when the run is stopping (between
    polls: the units still live are then revoked and stopped)."""
    live: dict[str, tuple[str, Any, dispatch.Watch]] = {}  # unit -> (token, its attempt, its liveness)
    tries = {u.name: 0 for u in [*units, *([judge] if judge else [])]}
    waiting, ended = [u.name for u in units], {}
    judging = Judging(judge)

    def send(unit: str) -> None:
        token = dispatch.grant(lake, unit, run_id)
        tries[unit] += 1
        live[unit] = (token, launcher.start(unit, parameters(unit, token), attempt=tries[unit]),
                      dispatch.Watch(settings.dead_after_s))
        log.info("dispatch: %s sent (attempt %d) %s", unit, tries[unit], launcher.where(live[unit][1]))

    start = time.monotonic()
    with dispatch.run_beating(lake, run_id, settings.dead_after_s), revoked_on_exit(lake, live, launcher):
        while waiting or live:
            check()
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
                if watch.waiting_long(picked_up=kind in PICKED_UP or kind in FINAL, now=time.time()):
                    log.warning("dispatch: %s: no worker has taken it in %.0fs (%s): are workers up, and free?", unit,
                                dispatch.WAITING_SAY_S, kind.lower())
                silent = watch.silent_s(picked_up=kind in PICKED_UP,  # by a worker
                                        beat=dispatch.last_beat(lake, unit, token), now=time.time())
                dead = silent > watch.dead_after_s
                if dead:  # its worker stopped beating: presumed dead; if it comes back, it commits nothing
                    dispatch.revoke(lake, unit, dispatch.PRESUMED_DEAD)
                    launcher.crash(attempt, "dispatch: no heartbeat")
                    log.warning("dispatch: %s: no heartbeat for %.0fs: its worker is presumed dead", unit, silent)
                if not dead and kind not in FINAL:
                    continue
                del live[unit]
                dispatch.settle(lake, unit)  # a commit it was killed in: finished before anyone recomputes
                kind = "CRASHED" if dead else kind
                if kind != "COMPLETED":
                    launcher.explain(unit, attempt, kind)
                if judge and unit == judge.name:
                    judging.ended(kind)
                    continue
                if kind == "CRASHED" and tries[unit] <= settings.retries:
                    waiting.append(unit)  # a new token: the old attempt, if it comes back, commits nothing more
                    continue
                ended[unit] = kind
                judging.more()
                log.info("dispatch: %s ended %s after %d attempt(s)", unit, kind, tries[unit])
    log.info("dispatch: %d unit(s) ended in %.1fs%s", len(ended), time.monotonic() - start, judging.summary())
    return ended


class Judging:
    """When the judging unit (``dispatch.judging``) goes: after a unit ended, while others still run or wait, not
    while it runs already (it goes again after, for what ended meanwhile), and on GPUs left once the waiting units
    took what they fit in: what would idle while the last units run. It is never sent again when it fails:
    the run judges after its units as it would without it."""

    def __init__(self, unit: dispatch.Unit | None) -> None:
        self.unit, self.pending, self.passes = unit, False, 0

    def more(self) -> None:
        self.pending = self.unit is not None

    def due(self, waiting: list[str], live: Mapping) -> bool:
        if not self.pending or self.unit.name in live:
            return False
        return bool(waiting) or any(name != self.unit.name for name in live)  # units still generating

    def started(self) -> None:
        self.pending, self.passes = False, self.passes + 1

    def ended(self, kind: str) -> None:
        if kind != "COMPLETED":
            log.warning("dispatch: %s ended %s: the run judges after its units, as without it", self.unit.name,
                        kind.lower())
        else:
            log.info("dispatch: %s: pass %d ended", self.unit.name, self.passes)

    def summary(self) -> str:
        return f"; {self.passes} judging pass(es) while units ran" if self.unit else ""


class OnThisBox:
    """Units as processes of this box, each on GPUs of the run's own (``dialogbench/dispatch/box.py``), started with
    ``env`` (the Prefect server's address among it, for their flow runs)."""

    def __init__(self, config: "Config", env: Mapping[str, str], units: Sequence[dispatch.Unit]) -> None:
        devices = placement.devices().devices  # the run's: --devices, the config's, CUDA_VISIBLE_DEVICES, nvidia-smi
        kind = box.WarmBox if config.dispatch is not None and config.dispatch.warm else box.Box
        self.box = kind(devices, env=dict(env), logs=Path(config.lake) / "_state" / "attempts" / "logs")
        self.needs = {u.name: box.needs(config, u.models, devices) for u in units}
        self.grace_s = config.stop_timeout_s + 5  # a unit's own stop: its chunk in flight, then its exit

    def fits(self, unit: str) -> bool:
        return self.box.fits(self.needs[unit])

    def start(self, unit: str, parameters: dict, *, attempt: int) -> box.Started:
        return self.box.start(unit, self.needs[unit], parameters, attempt=attempt)

    def where(self, started: box.Started) -> str:
        return f"on GPU {','.join(started.gpus)} (process {started.process.pid}, log {started.log})"

    def state(self, started: box.Started) -> str:
        return self.box.state(started)

    def crash(self, started: box.Started, message: str) -> None:
        self.box.kill(started)

    def explain(self, unit: str, started: box.Started, kind: str) -> None:
        log.warning("dispatch: %s ended %s (exit %s); the end of its log %s:\n%s", unit, kind.lower(),
                    started.process.returncode, started.log, self.box.tail(started))

    def stop(self, started: box.Started) -> None:
        started.process.terminate()  # all of them first: they stop their chunks at the same time

    def stopped(self, attempts: list[box.Started]) -> None:
        deadline = time.monotonic() + self.grace_s
        for started in attempts:
            self.box.stop(started, grace_s=max(0.0, deadline - time.monotonic()))

    def close(self) -> None:
        """The dispatch is over: warm slots end (``box.WarmBox``)."""
        self.box.close()


@contextlib.contextmanager
def revoked_on_exit(lake: str | Path, live: dict, launcher: Launcher) -> Iterator[None]:
    """A dispatching run that stops (a signal) or fails while units run: each gets a new token no worker holds, so
    nothing more of it commits, and its attempt is stopped (its process, its flow run cancelled)."""
    try:
        yield
    finally:
        for unit, (_, attempt, _) in list(live.items()):
            dispatch.revoke(lake, unit, dispatch.STOPPED)
            try:
                launcher.stop(attempt)
            except Exception as exc:  # the server gone too: the revoked token is what matters
                log.warning("dispatch: %s: could not cancel its flow run (%s)", unit, exc)
        launcher.stopped([attempt for _, attempt, _ in live.values()])
