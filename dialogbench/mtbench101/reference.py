"""MT-Bench-101's generated reference table: the taxonomy of ``taxonomy.py`` as rows, so the SQL reads it
(the ``mtbench101_taxonomy`` view) instead of typing it again."""

from __future__ import annotations

import pyarrow as pa

from dialogbench.mtbench101.taxonomy import TASKS

TAXONOMY_SCHEMA = pa.schema([
    ("position", pa.int32()),  # 1-based column of Table 3
    ("task", pa.string()),     # the dataset's task code (CM, SI, …)
    ("name", pa.string()),     # Table 1's name
    ("ability", pa.string()),  # second tier
    ("tier", pa.string()),     # first tier
])


def taxonomy_table() -> pa.Table:
    """Tier → ability → task of MT-Bench-101, one row per task in Table 3's column order (``position``)."""
    return pa.Table.from_pylist([{"position": i, "task": t.code, "name": t.name, "ability": t.ability, "tier": t.tier}
                                 for i, t in enumerate(TASKS, start=1)], schema=TAXONOMY_SCHEMA)
