"""How the pipeline runs its family subflows: without a heartbeat thread of their own. The pipeline flow's
heartbeat already tells the server the run is alive; a subflow's heartbeat thread sleeps in 1 s steps and
Prefect joins it when the subflow ends, which cost ~0.6 s per subflow (bench: cached rerun of the demo).

Prefect's public surface only (the ``PREFECT_FLOWS_HEARTBEAT_FREQUENCY`` setting, ``temporary_settings``); Prefect
3.7.7 sends heartbeats by default since PrefectHQ/prefect PR #21058 (180 s) and joins the thread with a 2 s bound
(PR #19641). No upstream issue found for a per-subflow setting. ``tests/tasks/test_subflows.py`` checks the setting."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings


@contextmanager
def subflows_without_heartbeats() -> Iterator[None]:
    with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
        yield
