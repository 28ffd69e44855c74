"""Lake tasks: rebuild the catalog, run the SQL data tests, read the leaderboards, render the report and the
explorer."""

from prefect.cache_policies import NO_CACHE

from dialogbench.run import registry
from dialogbench.run.config import Config
from dialogbench.judge_checks.check import settings_of, summary
from dialogbench.lake.catalog import build_catalog, connect, data_tests
from dialogbench.run.registry import open_lake
from dialogbench.report.publish import publish_reports
from tasks.redacted import task


@task(name="build-catalog", cache_policy=NO_CACHE)
def catalog(config: Config) -> str | None:
    path = build_catalog(open_lake(config.lake))
    return str(path) if path else None


@task(name="sql-data-tests", cache_policy=NO_CACHE)
def check_lake(config: Config) -> dict[str, int]:
    failing = data_tests(open_lake(config.lake), board=config.board)
    if failing:
        raise RuntimeError(f"SQL data tests failed (rows returned): {failing}")
    return failing


@task(name="leaderboards", cache_policy=NO_CACHE)
def leaderboard(config: Config) -> dict:
    """Each enabled family's leaderboard rows (what the CLI prints), by family name."""
    return registry.leaderboards(config)


@task(name="judge-checks", cache_policy=NO_CACHE)
def judge_summary(config: Config) -> list[dict]:
    """Can the run's judges tell? (dialogbench.judge_checks.check.summary)"""
    with connect(open_lake(config.lake), board=config.board) as con:
        return summary(config, con)


@task(name="render-report", cache_policy=NO_CACHE)
def render_report(config: Config, run_id: str, config_path: str, failed: str | None,
                  started_at=None) -> dict[str, str]:
    """The board's ``report.html``, ``report.md`` and dialogue explorer ``explorer.html`` in the run's folder
    ``<lake>/reports/runs/<run_id>/``, copied to the board's folder and (a board without CLI overrides) to the top of
    ``<lake>/reports`` (``dialogbench.report.publish``)."""
    return publish_reports(open_lake(config.lake), run_id=run_id, board=config.board, config_path=config_path,
                           started_at=started_at, failed=failed, settings=config.report,
                           judge_checks=settings_of(config), tracking=config.tracking)
