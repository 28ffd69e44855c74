"""Lake tasks: rebuild the catalog, run the SQL data tests, read the leaderboards, render the report and the
explorer."""

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from dialogbench import registry
from dialogbench.config import Config
from dialogbench.explorer import write_explorer
from dialogbench.lake import Lake
from dialogbench.lake.catalog import build_catalog, data_tests
from dialogbench.report.build import write_report


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
def leaderboard(config: Config) -> dict:
    """Each enabled family's leaderboard rows (what the CLI prints), by family name."""
    return {f.name: f.leaderboard(config) for f in registry.families() if f.enabled(config) and f.leaderboard}


@task(name="render-report", cache_policy=NO_CACHE)
def render_report(config: Config) -> dict[str, str]:
    """``report.html``, ``report.md`` and the dialogue explorer's ``explorer.html`` (key "explorer") under
    ``<lake>/reports/``, from the lake's views."""
    lake, out = Lake(config.lake), Path(config.lake) / "reports"
    paths = write_report(lake, out, settings=config.report)
    return {**{kind: str(path) for kind, path in paths.items()}, "explorer": str(write_explorer(lake, out))}
