"""The lake tables every family shares: judge ratings (``judgments``), failed attempts, plans, runs."""

from dialogbench.cells.tables import Table
from dialogbench.lake.schemas import FAILURES, JUDGMENTS, PLANS, RUNS

JUDGMENTS_TABLE = Table("judgments", JUDGMENTS, partition=("protocol", "judge"), done="true")
FAILURES_TABLE = Table("failures", FAILURES, partition=("stage",))
PLANS_TABLE = Table("plans", PLANS, partition=("stage", "run_id"))
RUNS_TABLE = Table("runs", RUNS, partition=("run_id",))
SHARED_TABLES = (JUDGMENTS_TABLE, FAILURES_TABLE, PLANS_TABLE, RUNS_TABLE)
