"""Reading the MT-Bench-101 dialogues and splitting them into per-turn items.

The protocol (§3.4, §4.1) answers every turn against the *golden* context: the dataset's own
earlier turns, never the model's earlier replies. So a turn item carries the golden history before
the turn, the user message of the turn, and the golden bot reply of the turn (the reference
solution that the MR/GR judge prompts ask for). Items whose turn is not judged (the first turn of
six tasks, appendix C) are still produced, marked ``judged=False``, so that the 4208 turns of
Table 6 can be counted and a runner decides for itself what to skip.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from dialogbench.text.jsonl import DatasetError, once_per_version, raise_if_any, records
from dialogbench.mtbench101.scoring import is_judged
from dialogbench.mtbench101.taxonomy import TASK_BY_CODE, TASK_CODES

__all__ = ["DatasetError", "Dialogue", "Turn", "TurnItem", "read_dialogues", "turn_items"]


@dataclass(frozen=True)
class Turn:
    user: str
    bot: str


@dataclass(frozen=True)
class Dialogue:
    id: int | str
    task: str
    line: int
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class TurnItem:
    """One turn to answer: ``turn`` is 0-based; ``history`` is the golden turns before it."""

    dialogue_id: int | str
    task: str
    turn: int
    history: tuple[Turn, ...]
    user_message: str
    reference: str
    judged: bool


@once_per_version
def read_dialogues(path: str | Path) -> tuple[Dialogue, ...]:
    """Every line must be an object with a known ``task``, an ``id`` and a non-empty ``history`` of
    ``{user, bot}`` non-blank string pairs. All problems are collected and raised together as one
    ``DatasetError`` whose lines name the file, line number and dialogue id, so a bad file is fixed
    in one pass and nothing half-read reaches the pipeline. Read once per version of the file (the
    answer stages, the judge stage and the probes each ask)."""
    dialogues, problems, seen = [], [], set()
    for line_no, record in records(path, problems):
        dialogue_id, code, history = record.get("id"), record.get("task"), record.get("history")
        where = f"{path}:{line_no}: dialogue {dialogue_id!r}"
        if not isinstance(dialogue_id, (int, str)) or isinstance(dialogue_id, bool) or dialogue_id == "":
            problems.append(f"{path}:{line_no}: missing 'id' (the dialogue id)")
        elif dialogue_id in seen:
            problems.append(f"{where}: duplicate dialogue id")
        elif code not in TASK_BY_CODE:
            problems.append(f"{where}: unknown task code {code!r} (expected one of {', '.join(TASK_CODES)})")
        elif not isinstance(history, list) or not history:
            problems.append(f"{where}: 'history' must be a non-empty list of turns")
        else:
            bad = _turn_problem(history)
            if bad:
                problems.append(f"{where}: {bad}")
            else:
                seen.add(dialogue_id)
                turns = tuple(Turn(user=t["user"], bot=t["bot"]) for t in history)
                dialogues.append(Dialogue(id=dialogue_id, task=code, line=line_no, turns=turns))
    raise_if_any(problems, path=path, what="dialogue(s)")
    return tuple(dialogues)


def _turn_problem(history: list) -> str | None:
    """The first malformed turn, described with its 1-based turn number; None if all are good."""
    for n, turn in enumerate(history, 1):
        if not isinstance(turn, dict):
            return f"turn {n} is not an object"
        for key in ("user", "bot"):
            value = turn.get(key)
            if not isinstance(value, str):
                got = "missing" if key not in turn else f"a {type(value).__name__}"
                return f"turn {n}: '{key}' must be a string, is {got}"
            if not value.strip():
                return f"turn {n}: '{key}' is blank"
    return None


def turn_items(dialogues: Iterable[Dialogue]) -> list[TurnItem]:
    """One item per (dialogue, turn), in file order then turn order (4208 for the full dataset)."""
    return [
        TurnItem(dialogue_id=d.id, task=d.task, turn=i, history=d.turns[:i], user_message=t.user,
                 reference=t.bot, judged=is_judged(task=d.task, turn=i))
        for d in dialogues for i, t in enumerate(d.turns)
    ]
