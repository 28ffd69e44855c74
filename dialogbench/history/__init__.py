"""Night over night: every run snapshots its metrics (``metric_snapshots``, ``history.snapshot``) and its effective
config (``run_configs``); the ``metric_history`` and ``changes`` views read them back."""

from dialogbench.history.metric import Metric
from dialogbench.history.tables import HISTORY_TABLES

__all__ = ["HISTORY_TABLES", "Metric"]
