"""Lake tasks: record a stage in ``runs``, rebuild the catalog, run the SQL data tests, read metrics."""

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from dialogbench.botchat.leaderboard import unieval_leaderboard
from dialogbench.gameeval.leaderboard import gameeval_leaderboard
from dialogbench.mtbench101.leaderboard import mtbench101_leaderboard
from dialogbench.config import Config
from dialogbench.lake import Lake
from dialogbench.lake.catalog import build_catalog, data_tests
from dialogbench.report.build import write_report
from dialogbench.runs import StageReport, record_stage, sum_reports


@task(name="record-stage", cache_policy=NO_CACHE)
def record(config: Config, run_id: str, reports: list[StageReport], config_path: str) -> StageReport:
    report = sum_reports(reports)
    record_stage(Lake(config.lake), run_id=run_id, report=report, config=config_path)
    return report


@task(name="build-catalog", cache_policy=NO_CACHE)
def catalog(config: Config) -> str | None:
    path = build_catalog(Lake(config.lake))
    return str(path) if path else None


@task(name="sql-data-tests", cache_policy=NO_CACHE)
def check_lake(config: Config) -> dict[str, int]:
    failing = data_tests(Lake(config.lake))
    if failing:
        raise RuntimeError(f"SQL data tests failed (rows returned): {failing}")
    return failing


@task(name="leaderboards", cache_policy=NO_CACHE)
def leaderboard(config: Config) -> dict[str, list[dict]]:
    """The rows the CLI prints: BotChat pass@N, the MT-Bench-101 Table-3 row per model, GameEval's tables."""
    return {"botchat": unieval_leaderboard(config), "mtbench101": mtbench101_leaderboard(config),
            "gameeval": gameeval_leaderboard(config)}


@task(name="render-report", cache_policy=NO_CACHE)
def render_report(config: Config) -> dict[str, str]:
    """``report.html`` and ``report.md`` under ``<lake>/reports/``, from the lake's views."""
    paths = write_report(Lake(config.lake), Path(config.lake) / "reports")
    return {kind: str(path) for kind, path in paths.items()}
