"""A run's model work sent out as units (``dispatch:`` in the config): to a Prefect work pool's workers, or to
processes of this box on GPUs of the run's (``dialogbench/box.py``); Prefect itself is in ``tasks/dispatch.py`` and
``flows/work.py``. What goes: every stage whose models answer or play (role chatbot or player), one unit per model
(its BotChat dialogues and MT-Bench-101 answers) and one per game; what stays with the dispatching run: the stages
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

WORK_ROLES = ("chatbot", "player")


class Superseded(RuntimeError):
    """This attempt is no longer the unit's current one: the dispatching run sent the unit again."""


@dataclass(frozen=True)
class Unit:
    """One flow run's worth of model work: its name (the model, or the game), its stages, in order, and the models
    they load (a game's players)."""

    name: str
    stages: tuple[str, ...]
    models: tuple[str, ...] = ()


def split(config: Config, families: dict[str, list[str]]) -> tuple[dict[str, list[str]], list[Unit],
                                                                   dict[str, list[str]]]:
    """(the stages to run before the dispatch, by family; the units; the stages to run after it, by family)."""
    before: dict[str, list[str]] = {}
    after: dict[str, list[str]] = {}
    units: dict[str, list[str]] = {}
    loads: dict[str, list[str]] = {}
    for family, names in families.items():
        stages = [s for s in registry.family_stages(config, family) if s.name in names]  # built once
        sent = [i for i, s in enumerate(stages) if s.role in WORK_ROLES and s.models(config)]
        last = max(sent, default=-1)
        for i, stage in enumerate(stages):
            if i in sent:
                models = [m.name for m in stage.models(config)]
                unit = models[0] if len(models) == 1 else stage.name
                units.setdefault(unit, []).append(stage.name)
                loads.setdefault(unit, [])
                loads[unit] += [m for m in models if m not in loads[unit]]
            else:
                (before if i < last else after).setdefault(family, []).append(stage.name)
    return before, [Unit(name, tuple(stages), tuple(loads[name])) for name, stages in units.items()], after


def _folder(lake: str | os.PathLike) -> Path:
    folder = Path(lake) / "_state" / "attempts"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


@contextlib.contextmanager
def _locked(lake: str | os.PathLike, unit: str) -> Iterator[Path]:
    path = _folder(lake) / f"{_safe(unit)}.json"
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
    return _folder(lake) / f"{_safe(unit)}.{token}.beat"


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


def last_beat(lake: str | os.PathLike, unit: str, token: str) -> float | None:
    """When the attempt last beat (its file's time), None before its first."""
    try:
        return beat_path(lake, unit, token).stat().st_mtime
    except FileNotFoundError:
        return None
