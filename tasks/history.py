"""History tasks: record the run's effective config when it starts; snapshot its metrics and read what changed
since the previous run once its stages are done (``dialogbench.history``)."""

import time

from prefect.cache_policies import NO_CACHE

from dialogbench.history.changes import read_changes
from dialogbench.history.snapshot import record_config, snapshot_metrics
from dialogbench.lake.catalog import connect
from dialogbench.run.built import Run
from tasks.redacted import task


@task(name="record-config", cache_policy=NO_CACHE)
def record_run_config(run: Run, run_id: str) -> str:
    """One ``run_configs`` row; returns the config's fingerprint."""
    return record_config(run.lake, run.config, run_id=run_id, config_path=run.source)


@task(name="snapshot-metrics", cache_policy=NO_CACHE)
def snapshot(run: Run, run_id: str) -> dict:
    """This run's metrics into ``metric_snapshots``; returns the ``changes`` rows that moved or are new, the rows
    written and the seconds it took (the run summary reports both: bench/artifacts.py reads them)."""
    start, lake = time.perf_counter(), run.lake
    with connect(lake, board=run.board) as con:
        rows = snapshot_metrics(con, lake, run.config, run_id=run_id, families=run.families)
    with connect(lake, board=run.board) as con:  # views see the files of their creation: the snapshot is new
        changes = read_changes(con)
    return {"changes": changes, "rows": rows, "seconds": round(time.perf_counter() - start, 4)}
