"""ChatSEED extraction: the vendored MuTual-Test dialogues → the ``seeds`` table."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from dialogbench.text.jsonl import DatasetError, once_per_version, raise_if_any, records
from dialogbench.botchat.tables import SEEDS
from dialogbench.cells.keys import fingerprint

__all__ = ["DatasetError", "SEED_LENGTH", "read_seeds"]

SEED_LENGTH = 2


@once_per_version
def read_seeds(path: str | Path) -> pa.Table:
    """Every row must have an ``index`` and a ``conv-GT`` list of >= 2 non-empty strings. All bad rows
    are reported together; nothing is returned (so nothing is written) unless all are good. Read once
    per version of the file (the seed stage and the probes each ask)."""
    rows, problems, seen = [], [], set()
    for line_no, record in records(path, problems):
        seed_id, dialogue = record.get("index"), record.get("conv-GT")
        where = f"{path}:{line_no}: row {seed_id!r}"
        if not isinstance(seed_id, str) or not seed_id:
            problems.append(f"{path}:{line_no}: missing 'index' (the row id)")
        elif seed_id in seen:
            problems.append(f"{where}: duplicate row id")
        elif not isinstance(dialogue, list) or not all(isinstance(u, str) for u in dialogue):
            problems.append(f"{where}: 'conv-GT' must be a list of strings, got {type(dialogue).__name__}")
        elif len(dialogue) < SEED_LENGTH or not all(u.strip() for u in dialogue[:SEED_LENGTH]):
            problems.append(f"{where}: needs at least {SEED_LENGTH} non-empty utterances, has {len(dialogue)}")
        else:
            seen.add(seed_id)
            seed = dialogue[:SEED_LENGTH]
            rows.append({"seed_id": seed_id, "line": line_no, "seed": seed, "dialogue": dialogue,
                         "n_utterances": len(dialogue), "item_fp": fingerprint("botchat_seed", seed_id, seed)})
    raise_if_any(problems, path=path, what="row(s)")
    rows.sort(key=lambda r: _natural(r["seed_id"]))
    return pa.Table.from_pylist(rows, schema=SEEDS)


def _natural(seed_id: str) -> tuple:
    """MT-2 before MT-10."""
    head, _, tail = seed_id.rpartition("-")
    return (head, int(tail)) if tail.isdigit() else (seed_id, 0)
