"""Which MT-Bench-101 dialogues a run uses, and which it holds out for the judge checks' known-answer probes."""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from dialogbench.mtbench101.dataset import Dialogue, read_dialogues


def reserved(dialogues: Iterable[Dialogue], *, reserve: int) -> dict[str, list[Dialogue]]:
    """Each task's last ``reserve`` dialogues in file order (``mtbench101.reserve_for_probes``), in file order: the
    slice no run evaluates, so that the hard probes (``probes.hard_items``) ask the judge about dialogues no
    leaderboard holds. A task with no more than ``reserve`` dialogues is reserved whole."""
    by_task: dict[str, list[Dialogue]] = defaultdict(list)
    for dialogue in dialogues:
        by_task[dialogue.task].append(dialogue)
    return {task: found[-reserve:] if reserve else [] for task, found in by_task.items()}


def selected_dialogues(config) -> list[Dialogue]:
    """The dialogues of ``mtbench101.tasks`` (all 13 by default), less each task's reserved ones (``reserved``), the
    first ``limit`` of each task in file order, in file order."""
    settings = config.mtbench101
    tasks = set(settings.tasks) if settings.tasks else None
    dialogues = read_dialogues(settings.dataset)
    held = {d.id for found in reserved(dialogues, reserve=settings.reserve_for_probes).values() for d in found}
    taken: dict[str, int] = {}
    chosen = []
    for dialogue in dialogues:
        if tasks is not None and dialogue.task not in tasks or dialogue.id in held:
            continue
        if settings.limit and taken.get(dialogue.task, 0) >= settings.limit:
            continue
        taken[dialogue.task] = taken.get(dialogue.task, 0) + 1
        chosen.append(dialogue)
    return chosen
