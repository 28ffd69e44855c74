"""A run's lifecycle: load and check the config before anything is computed; let the engines go at the end."""

from prefect.cache_policies import NO_CACHE

from dialogbench.dispatch import placement
from dialogbench.run.built import Run
from dialogbench.run.registry import build_run
from dialogbench.lake.verify import quick_check
from dialogbench.lake.version import ensure_current
from dialogbench.run.preflight import preflight
from dialogbench.run.runs import new_run_id
from dialogbench.run.pool import release_all
from dialogbench.text.redact import install as redact_logs
from tasks.redacted import task

# A deployment's worker runs the flow without the CLI: redact its log records (and so the logs Prefect
# stores) as soon as the flow's modules are imported, before any task logs.
redact_logs()


@task(name="load-config", cache_policy=NO_CACHE)
def load_run_config(config_path: str, overrides: dict) -> Run:
    """The run a deployment (or a flow called without one) starts from its config path and flags: built, checked."""
    run = build_run(config_path, overrides)
    preflight(run)
    return run


@task(name="start-run", cache_policy=NO_CACHE)
def start_run(run: Run, run_id: str | None = None) -> str:
    """The run id (the flow run's name, else a new one); the run's GPUs become this process's (``placement``). An
    older lake is refused (``dialogbench migrate``); temp files left by a killed writer are finished or removed first,
    then damaged files are quarantined (``lake.verify.quick_check``)."""
    placement.use(run.config.devices)  # the run's GPUs: each vLLM engine takes its own from them
    lake = run.lake
    ensure_current(lake)
    lake.clean_temp_files()
    quick_check(lake)  # damaged files are quarantined (and named): their cells are missing, so computed again
    return run_id or new_run_id()


@task(name="release-engines", cache_policy=NO_CACHE)
def release_engines() -> list[str]:
    """Every model backend goes (vLLM engines stop their processes): the run is over."""
    return release_all()
