"""From per-turn judge ratings to the MT-Bench-101 leaderboard (§3.4, appendix C, Table 3).

* Judged turns: every turn, except the first turn of the six tasks listed in appendix C ("in
  format rephrasing, content rephrasing, anaphora resolution, self-affirmation, self-correction,
  and context memory tasks, models generate responses directly from the second turn of dialogue,
  utilizing the golden context from the first turn as historical dialogue information").
* Dialogue score: the *minimum* rating over its judged turns (§3.4: "the lowest score of a turn is
  considered the final score for the entire dialogue"). If any judged turn is unparsed or missing,
  the dialogue has no score: a minimum over a subset could only be too high.
* Task score: the mean over the task's dialogues that have a score; the rest are counted as left out.
* Ability score: the mean of its tasks' scores (§4.2: "the score for each ability is the average
  score across its respective tasks").
* Overall ("Avg." in Table 3): the unweighted mean of the 13 task scores. Checked against every
  row of Table 3: the flat task mean reproduces all 18 rows to 2 dp (e.g. Llama2-7B-Chat 6.527 →
  6.53), while the mean of the 7 abilities does not (6.606) nor does a dialogue-weighted mean.
* Tier score: Table 3 prints none, so by the same rule as "Avg.", the flat mean of the tier's tasks
  (Perceptivity: CM SI AR TS CC), not the mean of its abilities.
An ability, tier or overall score is None unless every task under it has a score, so a partial
run is never ranked beside a complete one.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from statistics import fmean
from typing import Iterable, Mapping

from dialogbench.mtbench101.taxonomy import ABILITIES, TASK_CODES, TIERS, TASK_BY_CODE, abilities_of, tasks_of

#: Tasks whose first turn is golden context only and is not judged (appendix C).
SKIP_FIRST_TURN: frozenset[str] = frozenset({"FR", "CR", "AR", "SA", "SC", "CM"})


def is_judged(*, task: str, turn: int) -> bool:
    """Whether the 0-based ``turn`` of a ``task`` dialogue is answered and judged."""
    if task not in TASK_BY_CODE:
        raise KeyError(f"unknown MT-Bench-101 task {task!r}")
    return not (turn == 0 and task in SKIP_FIRST_TURN)


def judged_turns(*, task: str, n_turns: int) -> tuple[int, ...]:
    """The 0-based judged turns of a dialogue with ``n_turns`` turns."""
    return tuple(i for i in range(n_turns) if is_judged(task=task, turn=i))


def dialogue_score(*, task: str, n_turns: int, ratings: Mapping[int, int | None]) -> int | None:
    """Minimum rating over the judged turns; None if any judged turn is unparsed (None) or missing.
    Ratings of turns that are not judged are ignored."""
    judged = judged_turns(task=task, n_turns=n_turns)
    if not judged:
        return None
    scores = [ratings.get(i) for i in judged]
    for s in scores:
        if s is not None and (isinstance(s, bool) or not isinstance(s, int) or not 1 <= s <= 10):
            raise ValueError(f"a rating must be an int in 1..10 or None, got {s!r}")
    return None if any(s is None for s in scores) else min(scores)  # type: ignore[type-var]


@dataclass(frozen=True)
class TaskScore:
    task: str
    mean: float | None
    n_scored: int
    n_left_out: int


def task_scores(*, dialogue_scores: Iterable[tuple[str, int | None]]) -> dict[str, TaskScore]:
    """(task, dialogue score or None) pairs → per-task mean and left-out count, in Table 3 order.
    Tasks with no dialogues at all are absent."""
    by_task: dict[str, list[int | None]] = defaultdict(list)
    for code, score in dialogue_scores:
        if code not in TASK_BY_CODE:
            raise KeyError(f"unknown MT-Bench-101 task {code!r}")
        by_task[code].append(score)
    out = {}
    for code in TASK_CODES:
        if code in by_task:
            scored = [s for s in by_task[code] if s is not None]
            mean = fmean(scored) if scored else None
            out[code] = TaskScore(code, mean, len(scored), len(by_task[code]) - len(scored))
    return out


def _mean_all(values: list[float | None]) -> float | None:
    return None if not values or any(v is None for v in values) else fmean(values)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Leaderboard:
    """One model's row: Table 3's task columns plus the ability, tier and overall aggregates."""

    tasks: dict[str, float | None]
    abilities: dict[str, float | None]
    tiers: dict[str, float | None]
    overall: float | None


def leaderboard(*, tasks: Mapping[str, TaskScore | float | None]) -> Leaderboard:
    """Aggregate task scores (``TaskScore``s or plain means) as Table 3 and §4.2 do."""
    means = {c: (v.mean if isinstance(v, TaskScore) else v) for c, v in tasks.items()}
    row = {c: means.get(c) for c in TASK_CODES}
    abilities = {a: _mean_all([row[c] for c in tasks_of(ability=a)]) for a in ABILITIES}
    tiers = {t: _mean_all([row[c] for a in abilities_of(tier=t) for c in tasks_of(ability=a)]) for t in TIERS}
    return Leaderboard(tasks=row, abilities=abilities, tiers=tiers, overall=_mean_all(list(row.values())))
