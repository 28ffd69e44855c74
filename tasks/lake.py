"""Lake tasks: a Delta lake's upkeep, rebuild the catalog, run the SQL data tests, read the leaderboards, render the
report and the explorer."""

from prefect.cache_policies import NO_CACHE

from dialogbench.judge_checks.check import settings_of, summary
from dialogbench.lake.catalog import build_catalog, connect, data_tests
from dialogbench.report.publish import publish_reports
from dialogbench.run.built import Run
from tasks.redacted import task


@task(name="lake-upkeep", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=10)
def upkeep_lake(run: Run) -> list[dict]:
    """A Delta lake's tables with too many files compacted and its unneeded files deleted (``lake_upkeep``); nothing
    on a folder lake. Before the catalog, which names the files."""
    from dialogbench.lake.delta.upkeep import upkeep

    settings = run.config.lake_upkeep
    done = upkeep(run.lake, compact_above_files=settings.compact_above_files,
                  vacuum_after_hours=settings.vacuum_after_hours)
    return [vars(d) for d in done]


@task(name="build-catalog", cache_policy=NO_CACHE)
def catalog(run: Run) -> str | None:
    path = build_catalog(run.lake)
    return str(path) if path else None


@task(name="sql-data-tests", cache_policy=NO_CACHE)
def check_lake(run: Run) -> dict[str, int]:
    failing = data_tests(run.lake, board=run.board)
    if failing:
        raise RuntimeError(f"SQL data tests failed (rows returned): {failing}")
    return failing


@task(name="leaderboards", cache_policy=NO_CACHE)
def leaderboard(run: Run) -> dict:
    """Each enabled family's leaderboard rows (what the CLI prints), by family name."""
    return run.leaderboards()


@task(name="judge-checks", cache_policy=NO_CACHE)
def judge_summary(run: Run) -> list[dict]:
    """Can the run's judges tell? (dialogbench.judge_checks.check.summary)"""
    with connect(run.lake, board=run.board) as con:
        return summary(run.config, con)


@task(name="render-report", cache_policy=NO_CACHE)
def render_report(run: Run, run_id: str, failed: str | None, started_at=None) -> dict[str, str]:
    """The board's ``report.html``, ``report.md`` and dialogue explorer ``explorer.html`` in the run's folder
    ``<lake>/reports/runs/<run_id>/``, copied to the board's folder and (a board without CLI overrides) to the top of
    ``<lake>/reports`` (``dialogbench.report.publish``)."""
    config = run.config
    return publish_reports(run.lake, run_id=run_id, board=run.board, config_path=run.source,
                           started_at=started_at, failed=failed, settings=config.report,
                           judge_checks=settings_of(config), tracking=config.tracking, families=run.families)
