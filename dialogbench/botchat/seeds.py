"""ChatSEED extraction: the vendored MuTual-Test dialogues → the ``seeds`` table."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

from dialogbench.keys import fingerprint

SEED_LENGTH = 2
SEEDS_SCHEMA = pa.schema([
    ("seed_id", pa.string()),
    ("line", pa.int32()),
    ("seed", pa.list_(pa.string())),
    ("dialogue", pa.list_(pa.string())),
    ("n_utterances", pa.int32()),
    ("item_fp", pa.string()),
])


class DatasetError(ValueError):
    """A malformed dataset row; the message names the file, line and row id."""


def read_seeds(path: str | Path) -> pa.Table:
    """Every row must have an ``index`` and a ``conv-GT`` list of >= 2 non-empty strings. All bad rows
    are reported together; nothing is returned (so nothing is written) unless all are good."""
    rows, problems, seen = [], [], set()
    for line_no, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{path}:{line_no}: not valid JSON ({exc.msg})")
            continue
        seed_id = record.get("index") if isinstance(record, dict) else None
        dialogue = record.get("conv-GT") if isinstance(record, dict) else None
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
    if problems:
        shown = "\n  ".join(problems[:20]) + (f"\n  … and {len(problems) - 20} more" if len(problems) > 20 else "")
        raise DatasetError(f"{len(problems)} malformed row(s) in {path}:\n  {shown}")
    rows.sort(key=lambda r: _natural(r["seed_id"]))
    return pa.Table.from_pylist(rows, schema=SEEDS_SCHEMA)


def _natural(seed_id: str) -> tuple:
    """MT-2 before MT-10."""
    head, _, tail = seed_id.rpartition("-")
    return (head, int(tail)) if tail.isdigit() else (seed_id, 0)
