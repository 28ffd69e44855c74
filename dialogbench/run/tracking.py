"""A run's results logged to an experiment tracker, MLflow or Weights & Biases, when the config's ``tracking:`` asks.

Off by default (``tracking.to`` unset). On, ``track`` runs once the run's report, ``results.json`` and their copies are
written (``dialogbench.report.publish``): it reads that ``results.json`` and logs, as one tracker run per dialogbench
run (named ``<board>/<run_id>``):

- what the run is: ``results.json``'s board and ``provenance`` (the run id, the config, its fingerprint, the models,
  the judges, dialogbench's version, the commit, the host, the GPU, the package versions as ``versions.<package>``,
  the failure if the run failed), each as text, lists joined with ", " (``params``): MLflow's params, plus the tags
  ``dialogbench.board``, ``.run_id``, ``.config``, ``.config_fp``, ``.version`` and ``.failed``; W&B's run config,
  plus the board as the run's tag;
- metrics: every number of every leaderboard (``flatten``): ``<family>/<leaderboard>/<model>[/<slice>]/<number>``,
  ``<slice>`` the row's other keys (``judge=gpt-4,n=8``; none: left out), ``<number>`` each metric the family
  declares for that leaderboard (``dialogbench.history.metric.Metric``) with ``<number>_ci_low`` /
  ``<number>_ci_high`` where its row has an interval; the headline (``core/headline``: each number with the run's
  bootstrap interval) as ``core/headline/<model>[/<slice>]/<leaderboard>.<metric>``. A row that is not measured
  (its judge failed a judge check: ``measured`` false) and a null value are never logged as numbers; a metric the
  view computes from an expression (TofuKingdom's win rate) is not a column of ``results.json``: the headline has it.
  Each name is then made what the tracker accepts (``metric_names``): MLflow: letters, digits, ``_ - . /`` and
  space, no empty, ``.`` or ``..`` part, at most 250 characters; W&B: letters, digits and ``_`` in each
  ``/``-separated part (the ``/`` groups its panels into sections), no part starting with a digit. Two numbers
  whose names become one (or, W&B's names being case-insensitive, differ only in case), and a name cut to the
  length limit, get a hash of the original name as a suffix, so that no number overwrites another;
- artifacts: ``results.json``, ``report.html``, ``report.md`` of the run's report folder.

API calls made (imported lazily, inside ``log_run``; neither package is a dependency):

- MLflow (fluent API): ``mlflow.set_experiment(name)``, ``with mlflow.start_run(run_name=...)`` (a failure inside
  ends the run FAILED), ``mlflow.set_tags(dict)``, ``mlflow.log_params(dict)``, ``mlflow.log_metrics(dict)``
  (MLflow's client splits it into batches of at most 1000), ``mlflow.log_artifact(local_path)``. Where to log:
  MLflow's own environment (``MLFLOW_TRACKING_URI``, ``MLFLOW_TRACKING_USERNAME`` / ``_PASSWORD`` / ``_TOKEN``);
  unset, MLflow's default (``./mlruns`` or ``mlflow.db`` in the working directory).
- W&B: ``run = wandb.init(project=..., name=..., config=params, tags=[board], job_type="dialogbench",
  reinit="create_new")`` (a run of its own, not ending a run the calling process has open; wandb >= 0.19.10),
  ``run.log(metrics)`` (one step: the run's summary holds each number), ``artifact = wandb.Artifact(name, type=...)``,
  ``artifact.add_file(local_path=...)``, ``run.log_artifact(artifact)``, ``run.finish()`` (``exit_code=1`` on a
  failure). The key: ``WANDB_API_KEY`` (or ``wandb login``), the server ``WANDB_BASE_URL``, the team
  ``WANDB_ENTITY``, offline ``WANDB_MODE=offline``: W&B's own environment.

No secret is ever read from the config. The values of MLFLOW_TRACKING_PASSWORD, MLFLOW_TRACKING_TOKEN and
WANDB_API_KEY are redacted from everything dialogbench writes (``dialogbench.text.redact``), a tracker's error message
included.

A tracker failure (the package missing, the server down, a name refused) never fails the run nor touches its
results: ``track`` is called once everything is written, logs one WARNING line and returns a line saying what
happened (``publish_reports`` keeps it under ``tracking`` of the paths it returns, which the run's summary shows as
``report.tracking``)."""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Literal, Sequence

from dialogbench.text.redact import redact, watch_env

if TYPE_CHECKING:
    from dialogbench.run.config import TrackingConfig
    from dialogbench.run.family_spec import Family

log = logging.getLogger("dialogbench.tracking")

Tracker = Literal["mlflow", "wandb"]
PACKAGES: dict[str, str] = {"mlflow": "mlflow", "wandb": "wandb"}  # tracker -> the module (and pip package) it needs
ARTIFACTS = ("results.json", "report.html", "report.md")  # the report folder's files logged with each run
SECRET_ENV = ("MLFLOW_TRACKING_PASSWORD", "MLFLOW_TRACKING_TOKEN", "WANDB_API_KEY")
MLFLOW_KEY_LIMIT = 250  # MAX_ENTITY_KEY_LENGTH (mlflow/utils/validation.py)
MLFLOW_PARAM_LIMIT = 500  # MAX_PARAM_VAL_LENGTH of older MLflow releases (6000 in newer ones)
MLFLOW_TAG_LIMIT = 5000  # MAX_TAG_VAL_LENGTH
WANDB_KEY_LIMIT = 250  # W&B documents none for a name's length; MLflow's keeps a name the same length in both
WANDB_TAG_LIMIT = 64  # a W&B run tag's length limit
HEADLINE = "core/headline"
INTERVAL = ("_ci_low", "_ci_high")
# MLflow's run tags (W&B's run config has the same values under their params names): params name -> tag name
TAGS = {"board": "dialogbench.board", "run_id": "dialogbench.run_id", "config": "dialogbench.config",
        "config_fp": "dialogbench.config_fp", "dialogbench": "dialogbench.version", "failed": "dialogbench.failed"}


class TrackerNotInstalled(ImportError):
    """The tracker ``tracking.to`` names is not installed in this environment."""


def load_tracker(to: str) -> Any:
    """The tracker's module, imported now; TrackerNotInstalled naming the pip command when it is not installed."""
    if to not in PACKAGES:
        raise ValueError(f"tracking.to: unknown tracker {to!r} (expected one of: {', '.join(PACKAGES)})")
    name = PACKAGES[to]
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name and not (exc.name or "").startswith(name + "."):
            raise TrackerNotInstalled(f"tracking.to: {to}: importing {name} failed ({exc}); reinstall it with "
                                      f"`pip install --force-reinstall {name}`") from exc
        raise TrackerNotInstalled(f"tracking.to: {to}: the {name} package is not installed in this environment; "
                                  f"install it with `pip install {name}` (or unset tracking.to)") from None
    except ImportError as exc:
        raise TrackerNotInstalled(f"tracking.to: {to}: importing {name} failed ({exc}); reinstall it with "
                                  f"`pip install --force-reinstall {name}`") from exc


# ---- what is logged ----

def _segment(value: Any) -> str:
    """One part of a metric's name: the value as text, a ``/`` in it made ``_`` (a ``/`` separates the parts)."""
    text = "none" if value is None else str(value)
    return text.replace("/", "_") or "_"


def _slice(pairs: list[tuple[str, Any]]) -> str | None:
    """A row's keys other than the model as one name part (``judge=gpt-4,n=8``); None without any."""
    return ",".join(f"{k}={_segment(v)}" for k, v in pairs) or None


def _name(*parts: str | None) -> str:
    return "/".join(_segment(p) for p in parts if p is not None)


def _number(value: Any) -> float | None:
    """A finite number as a float; None for anything else (null, text, a flag)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _declared(families: Sequence["Family"]) -> dict[str, tuple]:
    """The metrics each leaderboard of ``families`` declares, by ``<family>/<view>``
    (``dialogbench.report.results.leaderboards``)."""
    from dialogbench.report.results import leaderboards

    return {lb.key: lb.metrics for lb in leaderboards(families=families) if lb.metrics}


def flatten(results: dict, *, families: Sequence["Family"]) -> tuple[dict[str, float], dict[str, int]]:
    """Every measured number of ``results`` (``collect_results``'s dict) by its name (the module's docstring), and
    what was left out: ``not_measured`` (numbers of rows not measured), ``undeclared`` (leaderboards ``families``, the
    run's, declare no metric of), ``duplicate`` (a second row of the same model and slice)."""
    declared = _declared(families)
    metrics: dict[str, float] = {}
    skipped = {"not_measured": 0, "undeclared": 0, "duplicate": 0}

    def put(name: str, value: Any) -> None:
        number = _number(value)
        if number is None:
            return
        if name in metrics:
            skipped["duplicate"] += 1
            return
        metrics[name] = number

    for key, table in (results.get("leaderboards") or {}).items():
        rows = table.get("rows") or []
        if key == HEADLINE:
            for row in rows:
                number = f"{_segment(row.get('leaderboard'))}.{_segment(row.get('metric'))}"
                if row.get("measured") is False:
                    skipped["not_measured"] += sum(_number(row.get(c)) is not None
                                                   for c in ("raw_value", "raw_ci_low", "raw_ci_high"))
                    continue
                pairs = [tuple(p.split("=", 1)) if "=" in p else (p, "") for p in
                         (s.strip() for s in (row.get("slice") or "").split(",")) if p]
                base = _name(*key.split("/", 1), row.get("model"), _slice(pairs))
                put(f"{base}/{number}", row.get("value"))
                for suffix, column in zip(INTERVAL, ("ci_low", "ci_high")):
                    put(f"{base}/{number}{suffix}", row.get(column))
            continue
        if key not in declared:
            skipped["undeclared"] += 1
            continue
        columns = set(table.get("columns") or [])
        for metric in declared[key]:
            if metric.name not in columns or metric.model not in columns:
                continue  # a value the view computes (TofuKingdom's win rate): in the headline
            bounds = (metric.low, metric.high) if metric.low and metric.high else \
                (metric.name + INTERVAL[0], metric.name + INTERVAL[1])
            keys = [k for k in metric.keys if k in columns]
            for row in rows:
                if row.get("measured") is False:
                    skipped["not_measured"] += sum(_number(row.get(c)) is not None for c in (metric.name, *bounds))
                    continue
                base = _name(*key.split("/", 1), row.get(metric.model), _slice([(k, row.get(k)) for k in keys]))
                put(f"{base}/{metric.name}", row.get(metric.name))
                if row.get(metric.name) is not None:
                    for suffix, column in zip(INTERVAL, bounds):
                        put(f"{base}/{metric.name}{suffix}", row.get(column))
    return metrics, skipped


def params(results: dict) -> dict[str, str]:
    """``results.json``'s provenance (and its board) as flat text values: lists joined with ", ", ``versions`` as
    ``versions.<package>``; unset values left out."""
    provenance = dict(results.get("provenance") or {})
    flat: dict[str, Any] = {"board": results.get("board"), "run_id": results.get("run_id") or provenance.get("run_id")}
    for key, value in provenance.items():
        if isinstance(value, dict):
            flat.update({f"{key}.{k}": v for k, v in value.items()})
        elif key not in flat or flat[key] is None:
            flat[key] = value
    out = {}
    for key, value in flat.items():
        if value is None or value == [] or value == {}:
            continue
        out[key] = ", ".join(map(str, value)) if isinstance(value, list) else \
            json.dumps(value) if isinstance(value, dict) else str(value)
    return out


# ---- names as each tracker takes them ----

_MLFLOW_BAD = re.compile(r"[^A-Za-z0-9_\-. /]")
_WANDB_BAD = re.compile(r"[^A-Za-z0-9_]")


def _mlflow_name(name: str) -> str:
    """A metric, param or tag name MLflow accepts (``_validate_metric_name``: ``^[/\\w.\\- ]*$``, and no part that
    a path would resolve away)."""
    name = _MLFLOW_BAD.sub("_", name.replace("=", "_").replace(",", "."))
    parts = [p if p not in ("", ".", "..") else "_" for p in name.split("/")]
    return "/".join(parts)


def _wandb_name(name: str) -> str:
    """A metric name W&B can sort and filter by: ``[_a-zA-Z][_a-zA-Z0-9]*`` in each ``/``-separated part."""
    parts = [_WANDB_BAD.sub("_", p) or "_" for p in name.split("/")]
    return "/".join(p if not p[0].isdigit() else "_" + p for p in parts)


_NAMING: dict[str, tuple[Callable[[str], str], int, Callable[[str], str]]] = {
    "mlflow": (_mlflow_name, MLFLOW_KEY_LIMIT, lambda s: s),
    "wandb": (_wandb_name, WANDB_KEY_LIMIT, str.lower),  # W&B's metric names are case-insensitive
}


def _hashed(clean: str, original: str, limit: int) -> str:
    tag = "_" + hashlib.sha1(original.encode("utf-8")).hexdigest()[:8]
    return clean[:limit - len(tag)].rstrip("/. ") + tag


def metric_names(names, to: str) -> dict[str, str]:
    """Each of ``names`` as the tracker ``to`` takes it (the module's docstring), none two the same."""
    clean_of, limit, fold = _NAMING[to]
    cleaned = {name: clean_of(name) for name in names}
    seen: dict[str, int] = {}
    for clean in cleaned.values():
        seen[fold(clean)] = seen.get(fold(clean), 0) + 1
    out = {}
    for name, clean in cleaned.items():
        if seen[fold(clean)] > 1 or len(clean) > limit:
            clean = _hashed(clean, name, limit)
        out[name] = clean
    return out


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


# ---- logging a run ----

def log_run(results: dict, *, to: Tracker, experiment: str, run_name: str, artifacts: list[Path],
            families: Sequence["Family"]) -> dict:
    """Log ``results`` (``collect_results``'s dict, as ``results.json`` holds it) and the ``artifacts`` that exist as
    one run of ``experiment`` (MLflow's experiment, W&B's project) named ``run_name`` in the tracker ``to``. Raises
    TrackerNotInstalled when its package is not installed, and whatever the tracker raises. Returns what was logged:
    tracker, experiment, run name, the tracker's run id, counts of metrics and params, artifact names, and the
    ``skipped`` counts of ``flatten`` (of the metrics ``families``, the run's, declare)."""
    watch_env(*SECRET_ENV)
    module = load_tracker(to)
    raw, skipped = flatten(results, families=families)
    names = metric_names(raw, to)
    metrics = {names[name]: value for name, value in raw.items()}
    flat = params(results)
    files = [Path(p) for p in artifacts if Path(p).is_file()]
    missing = [Path(p).name for p in artifacts if not Path(p).is_file()]
    if to == "mlflow":
        run_id = _log_mlflow(module, experiment, run_name, flat, metrics, files)
    else:
        run_id = _log_wandb(module, experiment, run_name, flat, metrics, files, board=str(results.get("board")))
    return {"to": to, "experiment": experiment, "run_name": run_name, "run_id": run_id, "metrics": len(metrics),
            "params": len(flat), "artifacts": [f.name for f in files], "missing_artifacts": missing,
            "skipped": skipped}


def _log_mlflow(mlflow: Any, experiment: str, run_name: str, flat: dict[str, str], metrics: dict[str, float],
                files: list[Path]) -> str | None:
    tags = {TAGS[k]: _clip(v, MLFLOW_TAG_LIMIT) for k, v in flat.items() if k in TAGS}
    keys = metric_names(flat, "mlflow")
    mlflow.set_experiment(experiment)
    with mlflow.start_run(run_name=run_name) as run:
        mlflow.set_tags(tags)
        mlflow.log_params({keys[k]: _clip(v, MLFLOW_PARAM_LIMIT) for k, v in flat.items()})
        if metrics:
            mlflow.log_metrics(metrics)
        for path in files:
            mlflow.log_artifact(str(path))
        info = getattr(run, "info", None)
        return getattr(info, "run_id", None)


def _log_wandb(wandb: Any, experiment: str, run_name: str, flat: dict[str, str], metrics: dict[str, float],
               files: list[Path], *, board: str) -> str | None:
    run = wandb.init(project=experiment, name=run_name, config=flat, tags=[_clip(board, WANDB_TAG_LIMIT)],
                     job_type="dialogbench", reinit="create_new")
    try:
        if metrics:
            run.log(metrics)
        if files:
            name = re.sub(r"[^A-Za-z0-9_.-]", "_", f"dialogbench-report-{board}")[:128]
            artifact = wandb.Artifact(name, type="dialogbench-report")
            for path in files:
                artifact.add_file(local_path=str(path))
            run.log_artifact(artifact)
    except BaseException:
        run.finish(exit_code=1)
        raise
    run.finish()
    return getattr(run, "id", None)


def track(settings: "TrackingConfig | None", folder: Path, *, run_id: str, board: str,
          families: Sequence["Family"]) -> str | None:
    """The run's ``results.json`` (and report files) in ``folder`` logged as ``settings`` asks (None, or
    ``to`` unset: nothing, None), its numbers named by the metrics ``families`` (the run's) declare. Never raises
    for a tracker's failure: logs one WARNING and returns a line saying what failed; else a line saying what was
    logged."""
    if settings is None or not settings.to:
        return None
    folder = Path(folder)
    watch_env(*SECRET_ENV)  # a tracker's error may quote its key: redacted from the warning too
    try:
        results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
        done = log_run(results, to=settings.to, experiment=settings.experiment, run_name=f"{board}/{run_id}",
                       artifacts=[folder / name for name in ARTIFACTS], families=families)
    except Exception as exc:  # a stop (BaseException) still stops the run
        line = redact(f"{settings.to}: not logged ({type(exc).__name__}: {exc}); the run's results are in "
                      f"{folder / 'results.json'}")
        log.warning("tracking: %s", line)
        return line
    tracker_run = f" (its run {done['run_id']})" if done["run_id"] else ""
    files = ", ".join(done["artifacts"]) or "none"
    return redact(f"{settings.to}: logged run {done['run_name']}{tracker_run} to {done['experiment']!r}: "
                  f"{done['metrics']} metrics, {done['params']} params, artifacts {files}")
