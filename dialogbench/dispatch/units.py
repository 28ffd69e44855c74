"""A run's model work sent out as units (``dispatch:`` in the config): to a Prefect work pool's workers, or to
processes of this box on GPUs of the run's (``dialogbench/dispatch/box.py``); Prefect itself is in ``tasks/dispatch.py`` and
``flows/work.py``. What goes: every stage whose models answer or play (role chatbot or player), one unit per set of
models loaded together (a model's BotChat dialogues, MT-Bench-101 answers and Ask-Guess games; a SpyFall pair's
games; TofuKingdom's three camps'); what stays with the dispatching run: the stages
before them (the seeds) and everything after (judging, data tests, report).

No lost or doubled cell, whatever dies. Each unit has an attempt token in the lake (``_state/attempts``); the
dispatching run writes a new one for every attempt, and a worker commits a file only while its token is current,
checked under a lock (``commit_guard``, POSIX record locks: the lake's file system must honour them across machines,
as NFSv4 does). A worker writes a heartbeat beside it from its first moment (``heartbeat``, before its imports, its
flow run and its engines, however slow); an attempt whose beat stops is presumed dead and sent again with a new
token, so a worker that comes back late can write nothing more. The cells it committed stay (the next attempt finds
them cached); the cell in flight is computed again.

A commit is two renames (``Lake.write``: the record, then the file). Each attempt notes the commit it is making
beside its token (``<unit>.commit``, under the same lock), so one killed between the two renames leaves a note
naming it, and whoever takes the unit's lock next with the attempt over (``settle``: when the attempt ends, and
before every new attempt or revocation) finishes it: the file renamed into place when its record is, its temp file
removed when it is not. A retry therefore finds the killed attempt's last cells committed and computes them no
more, and the next run's roll-forward (``Lake.clean_temp_files``) finds nothing of it to replay into a duplicate.

A lake whose tables are on an object store (``lake: s3://…``) has no folder every box shares: its tokens, the
attempts' beats and the dispatching run's beat (its lease, for its units) are objects on the store instead, each
written by one writer and read on the reader's clock (``on_store``); ``state_root`` says which, and the functions
below take either."""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import stat
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Iterator, Sequence

from dialogbench.dispatch import on_store
from dialogbench.lake import links, manifest
from dialogbench.lake.delta.mirror import is_store_uri
from dialogbench.lake.store import fsync_path, safe_name

if TYPE_CHECKING:  # (imported where used: a unit's process imports this module before anything slow, to beat)
    from dialogbench.run.built import Run

WORK_ROLES = ("chatbot", "player")
BEAT_S = 5.0  # how often a unit's heartbeat file is touched
WAITING_SAY_S = 60.0  # an attempt no worker has taken this long is logged once (no worker up, or all busy)
MAX_NOTE_BYTES = 4096  # a commit note is ~100 bytes; a larger one is not ours
log = logging.getLogger("dialogbench.dispatch")


class Superseded(RuntimeError):
    """This attempt is no longer the unit's current one: the dispatching run sent the unit again."""


class Withdrawn(Superseded):
    """This attempt may commit nothing more because its dispatching run stopped (it revoked the attempt), or is gone
    (it no longer holds the lake's lease: killed, or ended): the unit ends Cancelled, nobody is paged, nothing is
    sent again."""


# Why an attempt was revoked (``revoke``), as its worker is told when it tries to commit.
STOPPED = "the dispatching run stopped"
PRESUMED_DEAD = "no heartbeat: presumed dead"


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
    shard: tuple[int, int] | None = None  # (index, count): this part of a model's unit split by ``dispatch.shards``

    def group(self, stage: str) -> list[str]:
        """What a ``grouped`` stage of this unit computes (``cells.runner.plan_stage``'s ``group``): the cells of its
        models, and of its shard (``shard_mark``) when it is a part of a split unit."""
        return [*self.models, *([shard_mark(*self.shard)] if self.shard else [])]


SHARD = "shard:"  # a group's entry naming its shard: no model's name has a ':'


def shard_mark(index: int, count: int) -> str:
    return f"{SHARD}{index + 1}/{count}"


def parse_group(group: Sequence[str]) -> tuple[list[str], tuple[int, int] | None]:
    """A ``group`` as (its models, its shard as (index, count) or None)."""
    models = [g for g in group if not g.startswith(SHARD)]
    marks = [g[len(SHARD):] for g in group if g.startswith(SHARD)]
    if not marks:
        return models, None
    number, count = (int(x) for x in marks[0].split("/"))
    return models, (number - 1, count)


def split(run: "Run", families: dict[str, list[str]]) -> tuple[dict[str, list[str]], list[Unit],
                                                                dict[str, list[str]]]:
    """(the stages to run before the dispatch, by family; the units; the stages to run after it, by family). A unit
    is one set of models loaded together: a model's own (its BotChat dialogues, MT-Bench-101 answers, Ask-Guess
    games), or a group of players (a SpyFall pair, TofuKingdom's three camps), so a stage of several groups goes out
    as several units that run at the same time."""
    config = run.config
    before: dict[str, list[str]] = {}
    after: dict[str, list[str]] = {}
    units: dict[tuple[str, ...], list[str]] = {}
    grouped: dict[tuple[str, ...], list[str]] = {}
    for family, names in families.items():
        stages = [s for s in run.family_stages(family) if s.name in names]
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
    made = [Unit("+".join(group), tuple(stages), group, tuple(grouped[group])) for group, stages in units.items()]
    return before, [part for unit in made for part in shards(run, unit)], after


def shards(run: "Run", unit: Unit) -> list[Unit]:
    """``unit`` split in ``dispatch.shards`` parts when it is one model's and has stages whose cells are independent
    (``Stage.splits``): each part computes its share of those (they become ``grouped``: the dispatching run records
    their plans), and the first part also every stage that does not split, whole. Named ``<model>#<i>of<n>``."""
    config = run.config
    count = config.dispatch.shards if config.dispatch else 1
    split = [name for name in unit.stages if run.stage(name).splits(config)]
    if count < 2 or len(unit.models) != 1 or not split:
        return [unit]
    return [Unit(f"{unit.name}#{i + 1}of{count}",
                 unit.stages if i == 0 else tuple(name for name in unit.stages if name in split),
                 unit.models, tuple(dict.fromkeys([*unit.grouped, *split])), (i, count))
            for i in range(count)]


def judging(run: "Run", after: dict[str, list[str]]) -> Unit | None:
    """The judge stages of ``after`` that judge what the units finished while others still run (``dispatch.
    judge_while_generating``; a stage whose ``judges_inputs_so_far``), as one unit on its judges' GPUs: the
    dispatching run starts it when a unit ends and again when more have ended meanwhile; once every unit has ended,
    the run judges the rest as before, finding what this unit judged cached. None when there is nothing to judge
    early. Its name, ``judging:<judges>``, is no model's (a model's name has no ``:``)."""
    config = run.config
    if not config.dispatch or not config.dispatch.judge_while_generating:
        return None
    stages, models = [], {}
    for family, names in after.items():
        for stage in run.family_stages(family):
            if stage.name in names and stage.role == "judge" and stage.judges_inputs_so_far and stage.models(config):
                stages.append(stage.name)
                models.update({m.name: None for m in stage.models(config)})
    return Unit("judging:" + "+".join(models), tuple(stages), tuple(models)) if stages else None


def state_root(config) -> str:
    """Where a run's dispatch state lives, and the lake its units are given: the store (``s3://…``, every box
    reaches it: ``on_store``) of a lake whose tables are there, else the lake's folder."""
    return config.lake_store or str(config.lake)


def _folder(lake: str | os.PathLike) -> Path:
    folder = Path(lake) / "_state" / "attempts"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


_THREADS: dict[str, threading.Lock] = {}  # unit lock file -> this process's lock of it (``_locked``)
_BEATING: set[str] = set()  # beat files this process touches (``heartbeat``)
_MINE = threading.Lock()  # guards the two above


def _thread_lock(path: Path) -> threading.Lock:
    """This process's lock for a unit: a POSIX record lock is held by the process, not the thread, so two threads of
    one unit (its chunks commit at once) would hold it together, and the first to close its descriptor would release
    it under the other, mid-commit."""
    with _MINE:
        return _THREADS.setdefault(os.path.abspath(path), threading.Lock())


@contextlib.contextmanager
def _locked(lake: str | os.PathLike, unit: str) -> Iterator[Path]:
    path = _folder(lake) / f"{safe_name(unit)}.json"
    with _thread_lock(path), open(path.with_suffix(".lock"), "a+") as lock:
        fcntl.lockf(lock, fcntl.LOCK_EX)
        try:
            yield path
        finally:
            fcntl.lockf(lock, fcntl.LOCK_UN)


def grant(lake: str | os.PathLike, unit: str, run_id: str, *, reason: str | None = None) -> str:
    """A new attempt of ``unit`` for ``run_id``: its token, from now the only one that may commit. A commit an earlier
    attempt left between its two renames is finished first (``settle``), so the new one finds its cells."""
    token = uuid.uuid4().hex
    if is_store_uri(lake):
        on_store.put(lake, on_store.token_name(safe_name(unit)), {"run_id": run_id, "token": token,
                                                                  "granted": time.time(),
                                                                  **({"reason": reason} if reason else {})})
        return token
    with _locked(lake, unit) as path:
        _settle(lake, unit)
        path.write_text(json.dumps({"run_id": run_id, "token": token, "granted": time.time(),
                                    **({"reason": reason} if reason else {})}))
    return token


def revoke(lake: str | os.PathLike, unit: str, reason: str = PRESUMED_DEAD) -> None:
    """No attempt of ``unit`` may commit any more: its token becomes one no worker holds (an attempt presumed dead
    that comes back late: ``PRESUMED_DEAD``; the units of a run that stops: ``STOPPED``, which they end Cancelled
    on). The reason is what the attempt is told when it next tries to commit."""
    grant(lake, unit, "revoked", reason=reason)


def current(lake: str | os.PathLike, unit: str) -> dict:
    if is_store_uri(lake):
        return on_store.get(lake, on_store.token_name(safe_name(unit)))
    with _locked(lake, unit) as path:
        return json.loads(path.read_text()) if path.exists() else {}


def check(path: Path, token: str, lake: str | os.PathLike | None = None) -> None:
    """Raise unless ``token`` is the unit's current attempt (``Superseded``; ``Withdrawn`` when its run revoked it
    because it stopped) and, given ``lake``, the run that granted it still holds the lake's lease (``Withdrawn``: a
    dispatching run killed, or ended, leaves its units nothing to write for)."""
    held = json.loads(path.read_text()) if path.exists() else {}
    _check_held(held, path.stem, token)
    if lake is not None:
        from dialogbench.lake.lease import held_by  # (here: a unit's process imports this module before anything)

        run_id = held.get("run_id")
        if not run_id or not held_by(lake, run_id):
            raise Withdrawn(f"attempt {token[:8]} of {path.stem}: its dispatching run {run_id} no longer holds the "
                            f"lake's lease (it was killed, or it ended): it commits nothing more")


def _check_held(held: dict, unit: str, token: str) -> None:
    """Raise unless ``held`` (the unit's token record) names ``token`` (``check``)."""
    if held.get("token") != token:
        reason = held.get("reason") if held.get("run_id") == "revoked" else None
        if reason == STOPPED:
            raise Withdrawn(f"attempt {token[:8]} of {unit} was withdrawn ({STOPPED}): it commits nothing more")
        why = f"{reason}; " if reason else ""
        raise Superseded(f"attempt {token[:8]} of {unit} was superseded ({why}the dispatching run sent it "
                         f"again): it commits nothing more")


def _check_on_store(lake: str, unit: str, token: str, *, wait_first_s: float = 0.0) -> None:
    """``check`` for a lake on a store (``on_store``): the token read from the store, and the dispatching run's beat
    there for its lease."""
    held = on_store.get(lake, on_store.token_name(safe_name(unit)))
    _check_held(held, safe_name(unit), token)
    run_id = held.get("run_id")
    gone = on_store.run_gone(lake, run_id, wait_first_s=wait_first_s) if run_id else "no run granted it"
    if gone:
        raise Withdrawn(f"attempt {token[:8]} of {safe_name(unit)}: its dispatching run {run_id} is gone ({gone}; it "
                        f"was killed, or it ended): it commits nothing more")


def still_current(lake: str | os.PathLike, unit: str, token: str) -> None:
    """What a commit checks (``check``), asked before any work: an attempt withdrawn or superseded before it began
    says so at once."""
    if is_store_uri(lake):
        return _check_on_store(lake, unit, token, wait_first_s=on_store.FIRST_CHANGE_WAIT_S)
    with _locked(lake, unit) as path:
        check(path, token, lake)


def commit_guard(lake: str | os.PathLike, unit: str, token: str):
    """What ``Lake.write`` commits under (``store.guard_commits``): the unit's lock, the token still current, its
    dispatching run still holding the lake's lease (``check``), and the commit (its temp file ``tmp``) noted until both
    its renames are done (``settle``)."""

    @contextlib.contextmanager
    def guard(tmp: Path) -> Iterator[None]:
        if is_store_uri(lake):  # no lock to hold over the commit: on_store says why none is needed
            _check_on_store(lake, unit, token)
            yield
            return
        with _locked(lake, unit) as path:
            check(path, token, lake)
            note = _note_path(lake, unit)
            _write_note(note, lake, tmp)
            try:
                yield
            finally:
                _clear_note(note)

    return guard


def settle(lake: str | os.PathLike, unit: str) -> str | None:
    """Finish the commit an attempt of ``unit`` was killed in, between its two renames: its file renamed into place
    when its record is (it was committed), its temp file removed when its record never landed. Call it once the
    attempt is over (ended, killed or revoked); under the unit's lock no live attempt is mid-commit, so a noted
    commit is a dead one's. Returns what it did (logged), None when nothing was pending. Nothing on a store: a Delta
    commit is whole or absent."""
    if is_store_uri(lake):
        return None
    with _locked(lake, unit):
        return _settle(lake, unit)


def _note_path(lake: str | os.PathLike, unit: str) -> Path:
    return _folder(lake) / f"{safe_name(unit)}.commit"


def _write_note(note: Path, lake: str | os.PathLike, tmp: Path) -> None:
    """Note ``tmp``'s folder (inside the lake) and name, on disk before the commit's first rename. A write outside
    the lake (none is) is not noted: the next run's start finishes it."""
    folder = os.path.relpath(os.path.abspath(tmp.parent), os.path.abspath(lake))
    if folder == os.curdir or folder.split(os.sep)[0] == os.pardir:
        return
    created = not os.path.lexists(note)
    fd = links.open_regular(note, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        os.write(fd, json.dumps({"folder": PurePosixPath(*Path(folder).parts).as_posix(), "tmp": tmp.name}).encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    if created:
        fsync_path(note.parent)


def _clear_note(note: Path) -> None:
    """Nothing pending any more: the note emptied (kept, so the next one needs no new folder entry)."""
    try:
        os.close(links.open_regular(note, os.O_WRONLY | os.O_TRUNC))
    except links.LakeLinkError:  # not ours to write through: the link itself goes
        note.unlink(missing_ok=True)
    except FileNotFoundError:
        pass


def _settle(lake: str | os.PathLike, unit: str) -> str | None:
    note = _note_path(lake, unit)
    try:
        text = links.read_regular(note, MAX_NOTE_BYTES)
    except FileNotFoundError:
        return None
    except (OSError, links.LakeLinkError) as exc:
        log.warning("dispatch: %s: its commit note %s is unreadable (%s): the next run's start finishes what it "
                    "names", unit, note, exc)
        _clear_note(note)
        return None
    if not text.strip():
        return None
    try:
        tmp = _noted(lake, text)
        done = _finish(tmp) if tmp is not None else None
    except ValueError as exc:
        log.warning("dispatch: %s: %s: %s; left for the next run's start", unit, note, exc)
        done = None
    _clear_note(note)
    if done:
        log.info("dispatch: %s: a killed attempt's commit: %s", unit, done)
    return done


def _noted(lake: str | os.PathLike, text: bytes) -> Path | None:
    """The temp file a note names, checked as input: a temp name of the lake (``manifest.temp_name``) in a folder of
    one of its tables, reached without following a link. None when that folder is gone; ``ValueError`` why not."""
    try:
        raw = json.loads(text)
    except (ValueError, RecursionError):
        raise ValueError("not a commit note (not JSON)") from None
    if not isinstance(raw, dict) or set(raw) != {"folder", "tmp"} or not all(isinstance(v, str) for v in raw.values()):
        raise ValueError("not a commit note (an object of two strings, folder and tmp)")
    if manifest.final_name(raw["tmp"]) is None:
        raise ValueError(f"{raw['tmp'][:80]!r} is not a temp name of the lake")
    folder = PurePosixPath(raw["folder"])
    if (folder.is_absolute() or not folder.parts or any(p == ".." or "\0" in p for p in folder.parts)
            or folder.parts[0].startswith(("_", ".")) or folder.parts[0] in links.UNWALKED):
        raise ValueError(f"{raw['folder'][:80]!r} is not a table's folder of the lake")
    here = Path(lake)
    for part in folder.parts:
        here = here / part
        try:
            mode = os.lstat(here).st_mode
        except FileNotFoundError:
            return None
        if not stat.S_ISDIR(mode):
            raise ValueError(f"{here} is not a folder (a link is never followed)")
    return here / raw["tmp"]


def _finish(tmp: Path) -> str | None:
    """``tmp`` renamed over its file when the file's record names it and it is the size recorded (the first rename
    was done: it was committed); removed when no record names it (it never was). None when it is gone (both renames
    were done) or is not what its record says (left for ``dialogbench verify``)."""
    try:
        st = os.lstat(tmp)
    except FileNotFoundError:
        return None
    final = tmp.with_name(manifest.final_name(tmp.name))
    record = manifest.of(final)
    if record is not None and record.tmp == tmp.name:
        if not stat.S_ISREG(st.st_mode) or st.st_size != record.size:
            return None
        os.replace(tmp, final)
        fsync_path(tmp.parent)
        return f"finished {final}"
    tmp.unlink(missing_ok=True)  # a link: the link itself
    return f"removed {tmp} (never committed)"


def beat_path(lake: str | os.PathLike, unit: str, token: str) -> Path | str:
    """The attempt's beat file (on a store: its object's name there)."""
    if is_store_uri(lake):
        return f"{lake}/{on_store.PREFIX}/{on_store.beat_name(safe_name(unit), token)}"
    return _folder(lake) / f"{safe_name(unit)}.{token}.beat"


@contextlib.contextmanager
def heartbeat(lake: str | os.PathLike, unit: str, token: str, every_s: float | None = None) -> Iterator[None]:
    """Touch the attempt's beat file at once and every ``every_s`` (``BEAT_S``) while the work runs. A unit's process
    beats from its first moment (``flows/work.py``); a heartbeat of the same file inside it (nested) adds nothing. On a
    store, the beat is an object whose counter rises (``on_store``)."""
    path, stop = beat_path(lake, unit, token), threading.Event()
    key = str(path) if is_store_uri(lake) else os.path.abspath(path)
    with _MINE:
        outer = key not in _BEATING
        _BEATING.add(key)
    if not outer:
        yield
        return
    every = BEAT_S if every_s is None else every_s
    if is_store_uri(lake):
        beating = on_store.Beating(lake, on_store.beat_name(safe_name(unit), token), every)
        try:
            beating.start()
            yield
        finally:
            beating.stop()
            with _MINE:
                _BEATING.discard(key)
        return

    def beat() -> None:
        while not stop.is_set():
            path.write_text(str(time.time()))
            stop.wait(every)

    thread = threading.Thread(target=beat, name=f"heartbeat {unit}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        with _MINE:
            _BEATING.discard(key)


@dataclass
class Watch:
    """One attempt's liveness, as the dispatching run sees it: presumed dead after ``dead_after_s`` without a
    heartbeat, counted from when a worker picked it up (its flow run Pending or Running, first seen) or from its last
    beat. Time spent waiting in the work pool's queue for a free worker, however long, is not a death."""

    dead_after_s: float
    picked: float | None = None
    sent: float = field(default_factory=time.time)
    said_waiting: bool = False

    def waiting_long(self, *, picked_up: bool, now: float) -> bool:
        """True once (the first look after ``WAITING_SAY_S`` in the queue, not picked up): time to say so."""
        if picked_up or self.picked is not None or self.said_waiting or now - self.sent < WAITING_SAY_S:
            return False
        self.said_waiting = True
        return True

    def silent_s(self, *, picked_up: bool, beat: float | None, now: float) -> float:
        """Seconds since the attempt was last known alive (0 while it waits for a worker)."""
        if not picked_up:
            return 0.0
        if self.picked is None:
            self.picked = now
        return now - max(self.picked, beat or 0.0)

    def dead(self, *, picked_up: bool, beat: float | None, now: float) -> bool:
        return self.silent_s(picked_up=picked_up, beat=beat, now=now) > self.dead_after_s


@contextlib.contextmanager
def run_beating(lake: str | os.PathLike, run_id: str, dead_after_s: float) -> Iterator[None]:
    """While the block runs, the dispatching run beats on the store (``on_store``): what its units check before each
    commit, where a folder lake has its lease. It says it ended when the block ends. Nothing on a folder."""
    if not is_store_uri(lake):
        yield
        return
    beating = on_store.Beating(lake, on_store.run_name(run_id), BEAT_S,
                               {"run_id": run_id, "dead_after_s": dead_after_s}).start()
    try:
        yield
    finally:
        beating.stop(ended=True)


def last_beat(lake: str | os.PathLike, unit: str, token: str) -> float | None:
    """When the attempt last beat (its file's time; on a store, when this process saw its counter change), None
    before its first."""
    if is_store_uri(lake):
        return on_store.changed_at(lake, on_store.beat_name(safe_name(unit), token))
    try:
        return beat_path(lake, unit, token).stat().st_mtime
    except FileNotFoundError:
        return None
