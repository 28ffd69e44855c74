"""The lake tables every family shares (failed attempts, plans, runs, backend calls), and how a family declares a
table of judge verdicts: the shared verdict columns, then its protocol's own."""

import pyarrow as pa

from dialogbench.cells.tables import Table
from dialogbench.lake.schemas import BACKEND_CALLS, FAILURES, PLANS, RUNS, VERDICTS

FAILURES_TABLE = Table("failures", FAILURES, partition=("stage",))
PLANS_TABLE = Table("plans", PLANS, partition=("stage", "run_id"))
RUNS_TABLE = Table("runs", RUNS, partition=("run_id",))
BACKEND_CALLS_TABLE = Table("backend_calls", BACKEND_CALLS, partition=("run_id",))
SHARED_TABLES = (FAILURES_TABLE, PLANS_TABLE, RUNS_TABLE, BACKEND_CALLS_TABLE)


def verdict_table(name: str, fields: list[tuple[str, pa.DataType]], *, answer: tuple[str, ...]) -> Table:
    """A judge's verdicts on one protocol's cells: ``VERDICTS`` then ``fields``, one file per judge; ``answer``: the
    fields that are the judge's answer (its parse result), as opposed to its reasons."""
    clash = set(VERDICTS.names) & {f[0] for f in fields}
    if clash:
        raise ValueError(f"verdict table {name!r}: {sorted(clash)} are shared verdict columns already")
    missing = sorted(set(answer) - {f[0] for f in fields})
    if missing or not answer:
        raise ValueError(f"verdict table {name!r}: name its answer columns among its fields (not {missing or 'none'})")
    return Table(name, pa.schema([*VERDICTS, *fields]), partition=("judge",), done="true", verdicts=True,
                 answer=tuple(answer))
