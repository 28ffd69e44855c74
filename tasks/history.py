"""History tasks: record the run's effective config when it starts; snapshot its metrics and read what changed
since the previous run once its stages are done (``dialogbench.history``)."""

import time

from prefect.cache_policies import NO_CACHE

from dialogbench.run.config import Config
from dialogbench.history.changes import read_changes
from dialogbench.history.snapshot import record_config, snapshot_metrics
from dialogbench.run.registry import open_lake
from dialogbench.lake.catalog import connect
from tasks.redacted import task


@task(name="record-config", cache_policy=NO_CACHE)
def record_run_config(config: Config, run_id: str, config_path: str) -> str:
    """One ``run_configs`` row; returns the config's fingerprint."""
    return record_config(open_lake(config.lake), config, run_id=run_id, config_path=config_path)


@task(name="snapshot-metrics", cache_policy=NO_CACHE)
def snapshot(config: Config, run_id: str) -> dict:
    """This run's metrics into ``metric_snapshots``; returns the ``changes`` rows that moved or are new, the rows
    written and the seconds it took (the run summary reports both: bench/artifacts.py reads them)."""
    start, lake = time.perf_counter(), open_lake(config.lake)
    with connect(lake, board=config.board) as con:
        rows = snapshot_metrics(con, lake, config, run_id=run_id)
    with connect(lake, board=config.board) as con:  # views see the files of their creation: the snapshot is new
        changes = read_changes(con)
    return {"changes": changes, "rows": rows, "seconds": round(time.perf_counter() - start, 4)}
