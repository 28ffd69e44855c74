"""The MT-Bench-101 three-tier ability taxonomy (Bai et al., ACL 2024, §3.1, Table 1, Table 3).

Tier → ability → task, exactly as the paper names them. Everything that aggregates scores reads
this module, so the grouping lives in one place and the leaderboard columns come out in the
paper's order (Table 3: CM SI AR TS CC CR FR SC SA MR GR IC PI).
"""

from __future__ import annotations

from dataclasses import dataclass

PERCEPTIVITY = "Perceptivity"
ADAPTABILITY = "Adaptability"
INTERACTIVITY = "Interactivity"

#: The taxonomy: tier → second-tier ability → task code → the task's name in Table 1, each level in Table 3's column
#: order (grouping from §3.1 and Table 3). The tables below are read off it.
TAXONOMY: dict[str, dict[str, dict[str, str]]] = {
    PERCEPTIVITY: {
        "Memory": {"CM": "Context Memory"},
        "Understanding": {"SI": "Separate Input", "AR": "Anaphora Resolution"},
        "Interference": {"TS": "Topic Shift", "CC": "Content Confusion"},
    },
    ADAPTABILITY: {
        "Rephrasing": {"CR": "Content Rephrasing", "FR": "Format Rephrasing"},
        "Reflection": {"SC": "Self-correction", "SA": "Self-affirmation"},
        "Reasoning": {"MR": "Mathematical Reasoning", "GR": "General Reasoning"},
    },
    INTERACTIVITY: {
        "Questioning": {"IC": "Instruction Clarification", "PI": "Proactive Interaction"},
    },
}

#: The three first-tier abilities, in the order of §3.1 and of Table 3's header.
TIERS: tuple[str, ...] = tuple(TAXONOMY)

#: The seven second-tier abilities → their tier, in Table 3's column order.
ABILITY_TIER: dict[str, str] = {ability: tier for tier, abilities in TAXONOMY.items() for ability in abilities}
ABILITIES: tuple[str, ...] = tuple(ABILITY_TIER)


@dataclass(frozen=True)
class Task:
    """One third-tier task: its code in the dataset, its name in Table 1, its ability and tier."""

    code: str
    name: str
    ability: str

    @property
    def tier(self) -> str:
        return ABILITY_TIER[self.ability]


#: The 13 tasks in Table 3's column order.
TASKS: tuple[Task, ...] = tuple(Task(code, name, ability) for abilities in TAXONOMY.values()
                                for ability, tasks in abilities.items() for code, name in tasks.items())
TASK_CODES: tuple[str, ...] = tuple(t.code for t in TASKS)
TASK_BY_CODE: dict[str, Task] = {t.code: t for t in TASKS}


def task(code: str) -> Task:
    """The task for a dataset code; a ``KeyError`` that lists the valid codes otherwise."""
    try:
        return TASK_BY_CODE[code]
    except KeyError:
        raise KeyError(f"unknown MT-Bench-101 task {code!r}; expected one of {', '.join(TASK_CODES)}") from None


def tasks_of(*, ability: str) -> tuple[str, ...]:
    """Task codes of one ability, in column order (an ability's score is the mean of these)."""
    if ability not in ABILITY_TIER:
        raise KeyError(f"unknown ability {ability!r}; expected one of {', '.join(ABILITIES)}")
    return tuple(t.code for t in TASKS if t.ability == ability)


def abilities_of(*, tier: str) -> tuple[str, ...]:
    """Abilities of one tier, in column order."""
    if tier not in TIERS:
        raise KeyError(f"unknown tier {tier!r}; expected one of {', '.join(TIERS)}")
    return tuple(a for a in ABILITIES if ABILITY_TIER[a] == tier)


def columns() -> list[tuple[str, str, str]]:
    """(tier, ability, task code) per Table 3 column, left to right: the shape of a leaderboard header."""
    return [(t.tier, t.ability, t.code) for t in TASKS]
