"""A run's lifecycle: load and check the config before anything is computed; let the engines go at the end."""

from prefect import task
from prefect.cache_policies import NO_CACHE

from dialogbench.config import Config, load_config
from dialogbench.lake import Lake
from dialogbench.preflight import preflight
from dialogbench.runs import new_run_id
from dialogbench.schedule import release_all


@task(name="load-config", cache_policy=NO_CACHE)
def load_run_config(config_path: str, overrides: dict) -> Config:
    config = load_config(config_path, overrides)
    preflight(config, source=config_path)
    return config


@task(name="start-run", cache_policy=NO_CACHE)
def start_run(config: Config) -> str:
    """A new run id; temp files left by a killed writer are removed first."""
    Lake(config.lake).clean_temp_files()
    return new_run_id()


@task(name="release-engines", cache_policy=NO_CACHE)
def release_engines() -> list[str]:
    """Every model backend goes (vLLM engines stop their processes): the run is over."""
    return release_all()
