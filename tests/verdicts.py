"""Test helpers over the judge verdict tables (one per protocol): read every verdict as one list, write
hand-made verdict rows into their protocol's table."""

from __future__ import annotations

import pyarrow as pa

from dialogbench.run.registry import open_lake
from dialogbench.run import registry
from dialogbench.lake import Lake

LEGACY = registry.layout().legacy  # the families' verdict tables and renamed protocols (dialogbench/<family>/legacy.py)
# protocol (its current name) -> its verdict table
TABLE_OF = {LEGACY.protocols.get(p, p): table for p, table in LEGACY.verdict_tables.items()}


def verdict_tables() -> dict:
    return {t.name: t for t in registry.tables() if t.verdicts}


def verdicts(lake: Lake | str, protocol: str | None = None) -> list[dict]:
    """Every stored verdict (each with its table's columns), or those of one protocol."""
    lake = lake if isinstance(lake, Lake) else open_lake(lake)
    tables = verdict_tables()
    names = [TABLE_OF[protocol]] if protocol else list(tables)
    return [row for name in names for row in lake.read(name, tables[name].schema).to_pylist()]


def write_verdicts(lake: Lake, rows: list[dict], *, judge: str) -> None:
    """``rows`` into their protocol's table, as one file of the partition ``judge``."""
    tables = verdict_tables()
    for protocol in {r["protocol"] for r in rows}:
        table = tables[TABLE_OF[protocol]]
        group = [{c: r.get(c) for c in table.schema.names} for r in rows if r["protocol"] == protocol]
        lake.write(table.name, pa.Table.from_pylist(group, schema=table.schema), partition={"judge": judge})
