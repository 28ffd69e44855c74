"""Tonight's probe items (``judge_checks.rotate``): each family builds its probes from a pool of ``pool`` items per
kind, and each night asks ``probes`` of them, a window that moves by ``probes`` items a night through the kind's pool
(in the pool's own seeded order, from an offset drawn from the protocol and kind), so an unchanged judge meets new
items night after night and comes back to the first ones only after ``ceil(pool / probes)`` nights. An item is what
is graded as one: a pair's two cells (``pair_id``), a pairwise item's two orders (the probe id less its last segment,
the order), a single dialogue. A repeated item is the same cell, answered from the lake."""

from __future__ import annotations

import copy
from collections import defaultdict
from datetime import UTC, date, datetime

from dialogbench.judge_checks.probe_stage import Probe, ProbeStage
from dialogbench.cells.keys import fingerprint

EPOCH = date(1970, 1, 1)


def tonight(night: date | None) -> date:
    """The night a run's rotation takes: ``night`` when the config gives one, else today's UTC date."""
    return night or datetime.now(UTC).date()


def item_of(probe: Probe) -> str:
    """What ``probe`` is graded as one with: its pair, else its probe id less the last segment (an order, a side)."""
    return probe.pair_id or probe.probe_id.rsplit("/", 1)[0]


def window(items: list[str], *, k: int, night: date, tag: str) -> list[str]:
    """The ``k`` of ``items`` (a kind's pool, in order) that ``night`` asks: all when there are no more than ``k``;
    else ``k`` in a row from ``(offset + n * k) mod len(items)`` round the end, ``n`` the night's day number and
    ``offset`` drawn from ``tag``."""
    if len(items) <= k:
        return list(items)
    start = (int(fingerprint("probe-rotation", tag)[:8], 16) + (night - EPOCH).days * k) % len(items)
    return [items[(start + i) % len(items)] for i in range(k)]


def rotated(stage: ProbeStage, *, k: int, night: date) -> ProbeStage:
    """``stage`` with only tonight's ``k`` items of each kind (its probes in their order)."""
    pools: dict[str, dict[str, None]] = defaultdict(dict)  # kind -> its items, in order
    for probe in stage.probes:
        pools[probe.kind].setdefault(item_of(probe))
    keep = {(kind, item) for kind, items in pools.items()
            for item in window(list(items), k=k, night=night, tag=f"{stage.protocol}/{kind}")}
    out = copy.copy(stage)
    out.probes = [p for p in stage.probes if (p.kind, item_of(p)) in keep]
    return out
