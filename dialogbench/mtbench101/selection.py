"""Which MT-Bench-101 dialogues a run uses."""

from __future__ import annotations

from dialogbench.mtbench101.dataset import Dialogue, read_dialogues


def selected_dialogues(config) -> list[Dialogue]:
    """The dialogues of ``mtbench101.tasks`` (all 13 by default), the first ``limit`` of each task in
    file order, in file order."""
    settings = config.mtbench101
    tasks = set(settings.tasks) if settings.tasks else None
    taken: dict[str, int] = {}
    chosen = []
    for dialogue in read_dialogues(settings.dataset):
        if tasks is not None and dialogue.task not in tasks:
            continue
        if settings.limit and taken.get(dialogue.task, 0) >= settings.limit:
            continue
        taken[dialogue.task] = taken.get(dialogue.task, 0) + 1
        chosen.append(dialogue)
    return chosen
