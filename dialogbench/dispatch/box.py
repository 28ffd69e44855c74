"""A run's model work spread over the GPUs of this box (``dispatch:`` without a ``deployment``): each unit
(``dialogbench/dispatch/units.py``: one model's generation and answers, one game) runs as a process of its own, the
``dialogbench-work`` flow (``flows/work.py``) started directly, with CUDA_VISIBLE_DEVICES set to the GPUs it was
given; as many units run at once as the run's devices hold. A unit takes the GPUs its engines ask for
(``placement.asks``: tensor x pipeline parallel, an engine its model configs share counted once), at least one, at
most all: the devices are the slots that bound how many units run together (a unit of endpoint or scripted models
takes one too). Inside the unit the engines are placed on its GPUs as in any run (``placement``), sharing one by
memory where the unit asks for more than the box has.

The attempt tokens, heartbeats and commit guard are the work pool's (a unit killed is sent again, a late one
commits nothing). A unit process stops when the run does: SIGTERM from the run (``stop``), and from the kernel
when the run's process dies (PR_SET_PDEATHSIG), so no unit outlives its run."""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Mapping, Sequence

from dialogbench.dispatch import outcome, placement
from dialogbench.run.config import Config
from dialogbench.lake.store import safe_name

PR_SET_PDEATHSIG = 1


@dataclass
class Started:
    """A unit's process on this box: its GPUs and its output file; on a warm slot, the slot and the unit's request
    number on it (the process is then the slot's, which outlives the unit)."""

    unit: str
    gpus: tuple[str, ...]
    process: subprocess.Popen
    log: Path
    _out: IO = field(repr=False, default=None)
    slot: "Slot | None" = field(repr=False, default=None)
    seq: int | None = None
    released: bool = False


@dataclass
class Slot:
    """A warm slot (``dispatch.warm``): one long-lived ``python -m flows.work --serve`` process on one GPU that takes
    unit after unit; ``results`` (request number -> exit code) is filled by a thread reading its results pipe."""

    device: str
    process: subprocess.Popen
    log: Path
    out: IO = field(repr=False)
    results: dict[int, int] = field(default_factory=dict)
    reader: threading.Thread | None = field(repr=False, default=None)

    def alive(self) -> bool:
        return self.process.poll() is None

    def outcome(self, seq: int) -> int | None:
        """The exit code of request ``seq``: its result line; None while the slot runs without one; once the slot has
        ended without one (killed, or ended before it read the request), CRASHED: sent again."""
        if seq in self.results:
            return self.results[seq]
        if self.process.poll() is None:
            return None
        if self.reader is not None:
            self.reader.join(5)  # the pipe drained: a line written just before the end is read
        return self.results.get(seq, outcome.EXIT["CRASHED"])

    def ending(self) -> bool:
        """It has ended, or ends now: after a unit that did not complete it takes no other (``flows.work._serve``)."""
        return not self.alive() or any(code != 0 for code in self.results.values())


def needs(config: Config, models: Sequence[str], devices: Sequence[str]) -> int:
    """How many of ``devices`` a unit loading ``models`` takes: what its engines ask for, at least 1, at most all."""
    asked = sum(a.gpus for a in placement.asks([config.model(m) for m in models]))
    return max(1, min(len(devices), asked))


def die_with_parent(parent: int) -> None:
    """In a unit's process: a SIGTERM when the run's process ``parent`` is gone (Linux; elsewhere the run's own
    stop still ends it), at once if it is gone already."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


class Box:
    """The run's devices, handed out to unit processes."""

    def __init__(self, devices: Sequence[str], *, env: Mapping[str, str], logs: Path) -> None:
        if not devices:
            raise ValueError("dispatch on this box needs the run's GPUs (--devices, the config's devices or "
                             "CUDA_VISIBLE_DEVICES): they bound how many units run at once")
        self.devices, self.free = list(devices), list(devices)
        self.env, self.logs = dict(env), logs

    def fits(self, gpus: int) -> bool:
        return len(self.free) >= gpus

    def start(self, unit: str, gpus: int, parameters: dict, *, attempt: int) -> Started:
        """Run ``unit`` on ``gpus`` free devices: ``python -m flows.work`` with its parameters (and this process's id,
        ``die_with_parent``) on stdin."""
        taken, self.free = tuple(self.free[:gpus]), self.free[gpus:]
        self.logs.mkdir(parents=True, exist_ok=True)
        log = self.logs / f"{safe_name(unit)}.{attempt}.log"
        out = open(log, "w")
        process = subprocess.Popen([sys.executable, "-m", "flows.work"], stdin=subprocess.PIPE, stdout=out,
                                   stderr=subprocess.STDOUT, env={**self.env, "CUDA_VISIBLE_DEVICES": ",".join(taken)},
                                   cwd=Path(__file__).resolve().parents[2], text=True)
        # on stdin, not in argv: what a unit is given stays out of `ps`
        process.stdin.write(json.dumps({**parameters, "parent_pid": os.getpid()}))
        process.stdin.close()
        return Started(unit, taken, process, log, out)

    def state(self, started: Started) -> str:
        """RUNNING, or how it ended (``outcome.exit_state``): COMPLETED (exit 0), CRASHED (killed by a signal, or a
        transient error: sent again), CANCELLED (withdrawn by its run), FAILED."""
        code = started.process.poll() if started.slot is None else started.slot.outcome(started.seq)
        if code is None:
            return "RUNNING"
        self._release(started)
        return outcome.exit_state(code)

    def stop(self, started: Started, *, grace_s: float) -> None:
        """SIGTERM (the unit writes what finished and ends), SIGKILL after ``grace_s``."""
        if started.process.poll() is None:
            started.process.terminate()
            try:
                started.process.wait(grace_s)
            except subprocess.TimeoutExpired:
                started.process.kill()
                started.process.wait()
        self._release(started)

    def kill(self, started: Started) -> None:
        """SIGKILL (a unit presumed hung: its heartbeat stopped)."""
        started.process.kill()
        started.process.wait()
        self._release(started)

    def _release(self, started: Started) -> None:
        if started._out is not None:
            started._out.close()
            started._out = None
        if not started.released:
            started.released = True
            self.free += [d for d in started.gpus if d not in self.free]
            self.free.sort(key=self.devices.index)

    def close(self) -> None:
        """The dispatch is over (nothing to do for units that run a process each)."""

    def tail(self, started: Started, lines: int = 20) -> str:
        try:
            return "\n".join(started.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


class WarmBox(Box):
    """``Box`` with warm slots (``dispatch.warm``): a unit on one GPU goes to that GPU's slot, a process started once
    that runs unit after unit (started again when it has ended: after a unit that did not complete, a stop or a
    kill); a unit on several GPUs still runs as a process of its own, the idle slots on its GPUs ended first so that
    their memory is its."""

    SERVE = ("-m", "flows.work", "--serve")  # the slot's program, then its results pipe and this process's id

    def __init__(self, devices: Sequence[str], *, env: Mapping[str, str], logs: Path) -> None:
        super().__init__(devices, env=env, logs=logs)
        self.slots: dict[str, Slot] = {}
        self.requests = 0
        self.started = 0  # slot processes started: what warm saves is the difference to the units run
        self.restarts: dict[str, int] = {}

    def start(self, unit: str, gpus: int, parameters: dict, *, attempt: int) -> Started:
        if gpus != 1:
            for device in self.free[:gpus]:
                self._end_slot(device)
            return super().start(unit, gpus, parameters, attempt=attempt)
        device = self.free.pop(0)
        slot = self.slots.get(device)
        if slot is None or slot.ending():
            self._end_slot(device)
            slot = self.slots[device] = self._slot(device)
        self.requests += 1
        try:
            slot.process.stdin.write(json.dumps({**parameters, "seq": self.requests}) + "\n")
            slot.process.stdin.flush()
        except (BrokenPipeError, OSError):  # it ended meanwhile: its outcome says so (a crash: sent again)
            pass
        return Started(unit, (device,), slot.process, slot.log, slot=slot, seq=self.requests)

    def _slot(self, device: str) -> Slot:
        self.logs.mkdir(parents=True, exist_ok=True)
        self.started += 1
        self.restarts[device] = self.restarts.get(device, 0) + 1  # its log: slot-<gpu>.<how many times started>.log
        log = self.logs / f"slot-{safe_name(device)}.{self.restarts[device]}.log"
        out = open(log, "w")
        read, write = os.pipe()
        process = subprocess.Popen([sys.executable, *self.SERVE, str(write), str(os.getpid())],
                                   stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT, pass_fds=(write,),
                                   env={**self.env, "CUDA_VISIBLE_DEVICES": device},
                                   cwd=Path(__file__).resolve().parents[2], text=True)
        os.close(write)
        slot = Slot(device, process, log, out)
        slot.reader = threading.Thread(target=_read_results, args=(read, slot.results), daemon=True,
                                       name=f"slot-{device}")
        slot.reader.start()
        return slot

    def _end_slot(self, device: str) -> None:
        """End ``device``'s slot, idle or ending: at the end of its stdin, killed if it has not ended in 30 s."""
        slot = self.slots.pop(device, None)
        if slot is None:
            return
        try:
            slot.process.stdin.close()
        except OSError:
            pass
        try:
            slot.process.wait(30)
        except subprocess.TimeoutExpired:
            slot.process.kill()
            slot.process.wait()
        slot.out.close()

    def close(self) -> None:
        """The dispatch is over: every slot ends (idle ones at the end of their stdin)."""
        for device in list(self.slots):
            self._end_slot(device)


def _read_results(fd: int, results: dict[int, int]) -> None:
    with os.fdopen(fd) as lines:
        for line in lines:
            try:
                done = json.loads(line)
                results[int(done["seq"])] = int(done["exit"])
            except (ValueError, KeyError, TypeError):
                continue
