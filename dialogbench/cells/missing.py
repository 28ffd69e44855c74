"""The anti-join: which planned cells the lake has not computed yet."""

from __future__ import annotations

import pyarrow as pa

from dialogbench.cells.cell import Cell
from dialogbench.cells.tables import Table
from dialogbench.lake import Lake


def missing(lake: Lake, table: Table, cells: list[Cell]) -> list[Cell]:
    """The cells with no computed row in ``table`` (``Table.done``), in plan order."""
    if not cells:
        return []
    with lake.connect() as con:
        con.register("planned", pa.table({"cell_key": pa.array([c.key for c in cells], pa.string())}))
        keys = {r[0] for r in con.sql(f"SELECT cell_key FROM planned ANTI JOIN ({table.computed_keys_sql(lake)}) "
                                       "USING (cell_key)").fetchall()}
    return [c for c in cells if c.key in keys]
