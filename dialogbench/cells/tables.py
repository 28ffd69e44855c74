"""Lake tables as a family declares them: name, schema, partition columns, and which rows are cells."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from dialogbench.lake import Lake


@dataclass(frozen=True)
class Table:
    """``key`` names the column that holds a cell's key. ``done`` is the SQL condition a row meets when
    it is a computed cell (a game that ended in backend errors is a row, not a computed cell); None
    means the table holds no cells (runs, plans, seeds). The stage anti-join and the ``failures``
    view both read it, so "computed" means one thing. ``verdicts``: the rows are a judge's verdicts
    (the schema starts with ``lake.schemas.VERDICTS``), which the ``judgments`` view unions; ``answer`` names the
    columns that are the judge's answer (what the judge canary compares night over night). ``repeated``: its cells
    are computed again every run (the judge canary), so rows of one cell from several runs are its history, not
    copies: ``dialogbench repair`` leaves them. ``done_stored``: ``done`` on a stored row, its columns prefixed
    ``t.``, when ``done`` is a condition (not "true"): how a Delta lake tells a stored cell from a stored row that is
    none (``lake.delta.tables``)."""

    name: str
    schema: pa.Schema
    partition: tuple[str, ...] = ()
    key: str = "cell_key"
    done: str | None = None
    verdicts: bool = False
    answer: tuple[str, ...] = ()
    repeated: bool = False
    done_stored: str | None = None

    def computed_keys_sql(self, lake: Lake) -> str:
        """``SELECT <key> AS cell_key`` of every computed cell in the lake's files."""
        where = f" WHERE {self.done}" if self.done not in (None, "true") else ""
        return f"SELECT {self.key} AS cell_key FROM {lake.relation_sql(self.name, self.schema)}{where}"

    def write(self, lake: Lake, rows: list[dict]) -> int:
        """One file per partition of ``rows`` (atomically, see ``Lake.write``); returns rows written."""
        groups: dict[tuple, list[dict]] = {}
        for row in rows:
            groups.setdefault(tuple(row[c] for c in self.partition), []).append(row)
        for values, group in groups.items():
            lake.write(self.name, pa.Table.from_pylist(group, schema=self.schema),
                       partition=dict(zip(self.partition, values)))
        return len(rows)
