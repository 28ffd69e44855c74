"""A run's model work sent out as units (``dispatch:`` in the config): to a Prefect work pool's workers, or to
processes of this box on GPUs of the run's (``dialogbench/box.py``); Prefect itself is in ``tasks/dispatch.py`` and
``flows/work.py``. What goes: every stage whose models answer or play (role chatbot or player), one unit per set of
models loaded together (a model's BotChat dialogues, MT-Bench-101 answers and Ask-Guess games; a SpyFall pair's
games; TofuKingdom's three camps'); what stays with the dispatching run: the stages
before them (the seeds) and everything after (judging, data tests, report).

No lost or doubled cell, whatever dies. Each unit has an attempt token in the lake (``_state/attempts``); the
dispatching run writes a new one for every attempt, and a worker commits a file only while its token is current,
checked under a lock (``commit_guard``, POSIX record locks: the lake's file system must honour them across machines,
as NFSv4 does). A worker writes a heartbeat beside it; an attempt whose beat stops is presumed dead and sent again
with a new token, so a worker that comes back late can write nothing more. The cells it committed stay (the next
attempt finds them cached); the cell in flight is computed again."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from dialogbench import registry
from dialogbench.config import Config
from dialogbench.lake.store import safe_name

WORK_ROLES = ("chatbot", "player")


class Superseded(RuntimeError):
    """This attempt is no longer the unit's current one: the dispatching run sent the unit again."""


@dataclass(frozen=True)
class Unit:
    """One flow run's worth of model work: its name (its models, ``+``-joined), its stages, in order, the models
    they load at once (a game's players), and which of its stages it runs only in part: ``grouped`` stages are split
    by the models their cells load (a game's groups of players), so the unit computes only the cells of exactly its
    models (``cells.runner.of_group``) and the dispatching run records those stages' plans."""

    name: str
    stages: tuple[str, ...]
    models: tuple[str, ...] = ()
    grouped: tuple[str, ...] = ()


def split(config: Config, families: dict[str, list[str]]) -> tuple[dict[str, list[str]], list[Unit],
                                                                   dict[str, list[str]]]:
    """(the stages to run before the dispatch, by family; the units; the stages to run after it, by family). A unit
    is one set of models loaded together: a model's own (its BotChat dialogues, MT-Bench-101 answers, Ask-Guess
    games), or a group of players (a SpyFall pair, TofuKingdom's three camps), so a stage of several groups goes out
    as several units that run at the same time."""
    before: dict[str, list[str]] = {}
    after: dict[str, list[str]] = {}
    units: dict[tuple[str, ...], list[str]] = {}
    grouped: dict[tuple[str, ...], list[str]] = {}
    for family, names in families.items():
        stages = [s for s in registry.family_stages(config, family) if s.name in names]  # built once
        sent = [i for i, s in enumerate(stages) if s.role in WORK_ROLES and s.models(config)]
        last = max(sent, default=-1)
        for i, stage in enumerate(stages):
            if i not in sent:
                (before if i < last else after).setdefault(family, []).append(stage.name)
                continue
            groups = sorted({tuple(sorted(m.name for m in group)) for group in stage.model_groups(config)})
            for group in groups:
                units.setdefault(group, []).append(stage.name)
                grouped.setdefault(group, [])
                if len(groups) > 1:
                    grouped[group].append(stage.name)
    return before, [Unit("+".join(group), tuple(stages), group, tuple(grouped[group]))
                    for group, stages in units.items()], after


def judging(config: Config, after: dict[str, list[str]]) -> Unit | None:
    """The judge stages of ``after`` that judge what the units finished while others still run (``dispatch.
    judge_while_generating``; a stage whose ``judges_inputs_so_far``), as one unit on its judges' GPUs: the
    dispatching run starts it when a unit ends and again when more have ended meanwhile; once every unit has ended,
    the run judges the rest as before, finding what this unit judged cached. None when there is nothing to judge
    early. Its name, ``judging:<judges>``, is no model's (a model's name has no ``:``)."""
    if not config.dispatch or not config.dispatch.judge_while_generating:
        return None
    stages, models = [], {}
    for family, names in after.items():
        for stage in registry.family_stages(config, family):
            if stage.name in names and stage.role == "judge" and stage.judges_inputs_so_far and stage.models(config):
                stages.append(stage.name)
                models.update({m.name: None for m in stage.models(config)})
    return Unit("judging:" + "+".join(models), tuple(stages), tuple(models)) if stages else None


def _folder(lake: str | os.PathLike) -> Path:
    folder = Path(lake) / "_state" / "attempts"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextlib.contextmanager
def _locked(lake: str | os.PathLike, unit: str) -> Iterator[Path]:
    path = _folder(lake) / f"{safe_name(unit)}.json"
    with open(path.with_suffix(".lock"), "a+") as lock:
        fcntl.lockf(lock, fcntl.LOCK_EX)
        try:
            yield path
        finally:
            fcntl.lockf(lock, fcntl.LOCK_UN)


def grant(lake: str | os.PathLike, unit: str, run_id: str) -> str:
    """A new attempt of ``unit`` for ``run_id``: its token, from now the only one that may commit."""
    token = uuid.uuid4().hex
    with _locked(lake, unit) as path:
        path.write_text(json.dumps({"run_id": run_id, "token": token, "granted": time.time()}))
    return token


def revoke(lake: str | os.PathLike, unit: str) -> None:
    """No attempt of ``unit`` may commit any more: its token becomes one no worker holds (an attempt presumed dead
    that comes back late, the units of a run that stops)."""
    grant(lake, unit, "revoked")


def current(lake: str | os.PathLike, unit: str) -> dict:
    with _locked(lake, unit) as path:
        return json.loads(path.read_text()) if path.exists() else {}


def check(path: Path, token: str) -> None:
    held = json.loads(path.read_text()) if path.exists() else {}
    if held.get("token") != token:
        raise Superseded(f"attempt {token[:8]} of {path.stem} was superseded (the dispatching run sent it again): "
                         f"it commits nothing more")


def commit_guard(lake: str | os.PathLike, unit: str, token: str):
    """What ``Lake.write`` commits under (``store.guard_commits``): the unit's lock, and the token still current."""

    @contextlib.contextmanager
    def guard() -> Iterator[None]:
        with _locked(lake, unit) as path:
            check(path, token)
            yield

    return guard


def beat_path(lake: str | os.PathLike, unit: str, token: str) -> Path:
    return _folder(lake) / f"{safe_name(unit)}.{token}.beat"


@contextlib.contextmanager
def heartbeat(lake: str | os.PathLike, unit: str, token: str, every_s: float = 5.0) -> Iterator[None]:
    """Touch the attempt's beat file every ``every_s`` while the work runs."""
    path, stop = beat_path(lake, unit, token), threading.Event()

    def beat() -> None:
        while not stop.is_set():
            path.write_text(str(time.time()))
            stop.wait(every_s)

    thread = threading.Thread(target=beat, name=f"heartbeat {unit}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


@dataclass
class Watch:
    """One attempt's liveness, as the dispatching run sees it: presumed dead after ``dead_after_s`` without a
    heartbeat, counted from when a worker picked it up (its flow run Pending or Running, first seen) or from its last
    beat. Time spent waiting in the work pool's queue for a free worker, however long, is not a death."""

    dead_after_s: float
    picked: float | None = None

    def silent_s(self, *, picked_up: bool, beat: float | None, now: float) -> float:
        """Seconds since the attempt was last known alive (0 while it waits for a worker)."""
        if not picked_up:
            return 0.0
        if self.picked is None:
            self.picked = now
        return now - max(self.picked, beat or 0.0)

    def dead(self, *, picked_up: bool, beat: float | None, now: float) -> bool:
        return self.silent_s(picked_up=picked_up, beat=beat, now=now) > self.dead_after_s


def last_beat(lake: str | os.PathLike, unit: str, token: str) -> float | None:
    """When the attempt last beat (its file's time), None before its first."""
    try:
        return beat_path(lake, unit, token).stat().st_mtime
    except FileNotFoundError:
        return None
