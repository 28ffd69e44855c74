"""What the concurrency tests run in their writer processes (spawned: a module they can import)."""

from __future__ import annotations

import random
import traceback
from typing import Any

import pyarrow as pa

from dialogbench.lake.delta import DeltaCellStore

KEYS = 40  # each round's cells: 40 keys, two models
PER_WRITER = 25  # each writer offers 25 of them, so any two writers overlap on at least 10


def round_cells(writer: int, round_: int, keys: list[int]) -> pa.Table:
    """Round ``round_``'s cells for ``keys`` (new ones each round: ``k`` = round × 1000 + key), two models."""
    ks = [round_ * 1000 + k for k in keys]
    return pa.table({"model": [f"m{k % 2}" for k in ks], "k": pa.array(ks, pa.int64()),
                     "writer": pa.array([writer] * len(ks), pa.int64())})


def race(location: str, writer: int, rounds: int, barrier: Any, results: Any, plain_append: bool = False) -> None:
    """Offer ``PER_WRITER`` random keys of each round with ``insert_missing``, starting each round with the other
    writers (``barrier``); put what was offered, how many were inserted and any error on ``results``.
    ``plain_append`` writes with ``append`` instead, what the tests use to show the race would catch a store that
    does not check keys."""
    store = DeltaCellStore(location, writer=f"w{writer}")
    rnd = random.Random(1000 + writer)
    out: dict[str, Any] = {"writer": writer, "offered": [], "inserted": 0, "conflicts": 0, "error": None}
    try:
        for round_ in range(rounds):
            data = round_cells(writer, round_, rnd.sample(range(KEYS), PER_WRITER))
            barrier.wait(timeout=120)
            if plain_append:
                out["inserted"] += store.append("cells", data, partition_by=["model"])
            else:
                out["inserted"] += store.insert_missing("cells", data, keys=["model", "k"], partition_by=["model"])
            out["offered"] += list(zip(data.column("model").to_pylist(), data.column("k").to_pylist()))
    except BaseException:  # noqa: BLE001 - reported to the test, which fails on it
        out["error"] = traceback.format_exc()
    out["conflicts"] = store.conflicts
    results.put(out)
