"""Night over night: every run snapshots its metrics (``metric_snapshots``) and its effective config
(``run_configs``); the ``metric_history`` and ``changes`` views read them back."""

from dialogbench.history.metric import Metric
from dialogbench.history.snapshot import snapshot_metrics
from dialogbench.history.tables import HISTORY_TABLES

__all__ = ["HISTORY_TABLES", "Metric", "snapshot_metrics"]
