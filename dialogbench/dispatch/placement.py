"""Which GPUs each local engine runs on. A model asks for ``engine.tensor_parallel_size`` x
``engine.pipeline_parallel_size`` GPUs (1 by default) and, on each, the share of its memory vLLM may take
(``engine.gpu_memory_utilization``, vLLM's default 0.9). The run's devices (``--devices``, the config's ``devices``,
else CUDA_VISIBLE_DEVICES, else every GPU ``nvidia-smi`` lists, else none: a CPU machine) are handed out by one
``Devices`` ledger: an engine goes on GPUs nothing else holds while there are enough, else on GPUs whose memory
shares, its own added, stay within 1 (two engines at 0.45 share one GPU); otherwise ``PlacementError`` names the
models and says why. The engine is started with CUDA_VISIBLE_DEVICES set to its GPUs."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass
from typing import Iterator, Mapping, Sequence

LOCAL = ("vllm",)  # the backend placed on GPUs (transformers, the fallback, runs on the first visible one)
FULL = 1.0 + 1e-9  # a GPU's memory, with room for rounding


class PlacementError(ValueError):
    """Models that cannot be placed on the devices given, with the reason and what to change."""


@dataclass(frozen=True)
class Ask:
    """What one model's engine asks of the machine."""

    model: str
    gpus: int
    share: float

    def __str__(self) -> str:
        return f"{self.model} ({self.gpus} GPU{'s' if self.gpus > 1 else ''} at {self.share:g} of its memory)"


def ask(model) -> Ask | None:
    """The GPUs ``model`` (a ``ModelConfig``) asks for; None for a model that runs no engine here (an endpoint,
    scripted)."""
    if model.backend not in LOCAL:
        return None
    engine = model.engine
    gpus = int(engine.get("tensor_parallel_size", 1)) * int(engine.get("pipeline_parallel_size", 1))
    return Ask(model.name, gpus, float(engine.get("gpu_memory_utilization", 0.9)))


def asks(models) -> list[Ask]:
    """One ask per engine of ``models`` (model configs naming the same weights, engine settings and engine_env share
    one, as ``backends.engines`` loads them), none for a model that runs no engine here."""
    found: dict[str, Ask] = {}
    for model in models:
        if (a := ask(model)) is not None:
            engine = [model.weights, model.revision, model.engine, model.engine_env]
            found.setdefault(json.dumps(engine, sort_keys=True, default=str), a)
    return list(found.values())


def place(asks: Sequence[Ask], devices: Sequence[str], *, used: Mapping[str, float] | None = None,
          holders: Mapping[str, list[str]] | None = None) -> dict[str, tuple[str, ...]]:
    """GPUs for ``asks``, loaded at once, on ``devices`` of which ``used`` (device -> memory share taken, held by
    ``holders``' models) is already in use: the largest ask first, each on the GPUs with the most memory free (a
    free GPU before a shared one). Raises ``PlacementError`` when one does not fit."""
    used = {d: float((used or {}).get(d, 0.0)) for d in devices}
    holders = {d: list((holders or {}).get(d, [])) for d in devices}
    placed: dict[str, tuple[str, ...]] = {}
    for a in sorted(asks, key=lambda a: (-a.gpus, -a.share)):
        room = sorted((d for d in devices if used[d] + a.share <= FULL), key=lambda d: (used[d], devices.index(d)))
        if len(room) < a.gpus:
            raise PlacementError(_why(a, devices, used, holders, [x for x in asks if x is not a]))
        placed[a.model] = tuple(sorted(room[:a.gpus], key=devices.index))
        for d in placed[a.model]:
            used[d] += a.share
            holders[d].append(a.model)
    return placed


def _why(a: Ask, devices: Sequence[str], used: Mapping[str, float], holders: Mapping[str, list[str]],
         others: list[Ask]) -> str:
    if not devices:
        return f"{a} asks for GPUs and the run has none (--devices, or run it where CUDA_VISIBLE_DEVICES lists some)"
    if a.gpus > len(devices):  # no memory share makes room: the engine splits over more GPUs than there are
        return (f"{a} does not fit: it splits over {a.gpus} GPUs (engine.tensor_parallel_size x "
                f"pipeline_parallel_size) and the run has {len(devices)} ({','.join(devices)}): run it where "
                f"{a.gpus} GPUs are (--devices, or a worker that has them: dispatch.deployment or dispatch.task_workers), or "
                f"lower engine.tensor_parallel_size so that it splits over at most {len(devices)}")
    taken = "; ".join(f"GPU {d}: {used[d]:g} taken by {', '.join(holders[d])}" for d in devices if holders[d])
    together = f" with {', '.join(map(str, others))} loaded at the same time" if others else ""
    return (f"{a} does not fit on GPUs {','.join(devices)}{together}" + (f" ({taken})" if taken else "")
            + ": give the run more GPUs (--devices) or lower engine.gpu_memory_utilization so that engines share a "
              "GPU (their shares on one GPU must add up to at most 1)")


def visible_devices(flag: str | Sequence[str] | None = None, *, environ: Mapping[str, str] = os.environ) -> list[str]:
    """The run's GPUs: ``flag`` ("0,1,2,3", a list, or "none"), else CUDA_VISIBLE_DEVICES, else every GPU
    ``nvidia-smi -L`` lists, else none."""
    if flag is None:
        flag = environ.get("CUDA_VISIBLE_DEVICES")
    if flag is None:
        return _smi_devices()
    parts = flag.split(",") if isinstance(flag, str) else list(flag)
    parts = [str(p).strip() for p in parts if str(p).strip()]
    return [] if parts in (["none"], ["-1"]) else parts


def _smi_devices() -> list[str]:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return []
    try:
        listing = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [str(i) for i, line in enumerate(line for line in listing.splitlines() if line.startswith("GPU "))]


class Devices:
    """The ledger of a process's GPUs: which engine holds which, at what share."""

    def __init__(self, devices: Sequence[str]) -> None:
        self.devices = list(devices)
        self._held: dict[str, tuple[Ask, tuple[str, ...]]] = {}
        self._lock = threading.Lock()

    def take(self, a: Ask, *, holder: str | None = None) -> tuple[str, ...]:
        """GPUs for ``a`` beside the engines loaded now, held by ``holder`` (default ``a.model``; an engine several
        model configs share holds them once) until ``give_back``; the same ones again if it holds some."""
        holder = holder or a.model
        with self._lock:
            if holder in self._held:
                return self._held[holder][1]
            used, holders = self.usage()
            gpus = place([a], self.devices, used=used, holders=holders)[a.model]
            self._held[holder] = (a, gpus)
            return gpus

    def give_back(self, holder: str) -> None:
        with self._lock:
            self._held.pop(holder, None)

    def usage(self) -> tuple[dict[str, float], dict[str, list[str]]]:
        """Device -> memory share taken, and device -> the models holding it."""
        used: dict[str, float] = {d: 0.0 for d in self.devices}
        holders: dict[str, list[str]] = {d: [] for d in self.devices}
        for a, gpus in self._held.values():
            for d in gpus:
                used[d] += a.share
                holders[d].append(a.model)
        return used, holders


_devices: Devices | None = None


def devices() -> Devices:
    """This process's ledger (the run's devices, ``use``; else what ``visible_devices()`` finds)."""
    global _devices
    if _devices is None:
        _devices = Devices(visible_devices())
    return _devices


_ENV = threading.Lock()


@contextlib.contextmanager
def visible(gpus: Sequence[str], env: Mapping[str, str] | None = None) -> Iterator[None]:
    """While an engine starts (its processes inherit them): CUDA_VISIBLE_DEVICES set to ``gpus`` (nothing for no
    GPUs: a CPU machine), and the variables of ``env`` (a model's ``engine_env``); as before after."""
    values = {**({"CUDA_VISIBLE_DEVICES": ",".join(gpus)} if gpus else {}), **(env or {})}
    if not values:
        yield
        return
    with _ENV:
        before = {name: os.environ.get(name) for name in values}
        os.environ.update(values)
        try:
            yield
        finally:
            for name, value in before.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def use(gpus: str | Sequence[str] | None) -> Devices:
    """Make ``gpus`` this process's devices (None: ``visible_devices()``); engines already placed are forgotten."""
    global _devices
    _devices = Devices(visible_devices(gpus))
    return _devices
