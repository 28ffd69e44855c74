"""How the pipeline runs its family subflows: without a heartbeat thread of their own. The pipeline flow's
heartbeat already tells the server the run is alive; a subflow's heartbeat thread sleeps in 1 s steps and
Prefect joins it when the subflow ends, which cost ~0.6 s per subflow (bench: cached rerun of the demo)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings


@contextmanager
def subflows_without_heartbeats() -> Iterator[None]:
    with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
        yield
