"""The one cell-stage mechanism every protocol family runs on: typed cells, output tables, the plan
record, the anti-join with the lake, chunks, writing rows and failures, and the stage report."""

from dialogbench.cells.cell import Cell, Chunk, chunked
from dialogbench.cells.stage import Emit, Planned, Stage
from dialogbench.cells.tables import Table

__all__ = ["Cell", "Chunk", "Emit", "Planned", "Stage", "Table", "chunked"]
