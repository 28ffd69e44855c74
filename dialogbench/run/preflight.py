"""Checks that stop a run before any compute (and before Prefect starts): a lake, or a table folder of the run, that
cannot be written, a lake whose own files are links, a dataset with a bad line, weights that do not exist, endpoints
with no URL. Every problem is collected, not just the first, so one `dialogbench validate` shows all that needs
fixing. Notes say what is worth fixing without stopping: an endpoint with no API key set, a secret written in the
config, a candidate rated by itself as its judge (``judge_checks.self_judging``)."""

from __future__ import annotations

import logging
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from dialogbench.dispatch import placement
from dialogbench.backends.weights import PKG_SCHEME, resolve_weights
from dialogbench.judge_checks import self_judging
from dialogbench.lake import Lake
from dialogbench.run.built import Run
from dialogbench.run.config import Config, ConfigError, ModelConfig
from dialogbench.text.redact import REDACTED, SecretField, secret_fields

log = logging.getLogger("dialogbench.preflight")
_NOTED: set[str] = set()  # notes logged once per process (the CLI and the flow both run preflight)


@dataclass(frozen=True)
class Findings:
    """``inputs``: what the config points at is unusable (the lake, a dataset): the config is wrong on any
    machine. ``machine``: what this machine lacks (weights, an engine, an endpoint URL). ``notes``: worth
    saying, not stopping (an endpoint with no API key set)."""

    inputs: list[str] = field(default_factory=list)
    machine: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def models_in_use(run: Run) -> list[ModelConfig]:
    """Every model a stage of the run calls (chatbots, judges, players), each once, in run order."""
    return run.schedule.models()


def _not_a_lake(lake: Lake) -> str | None:
    """``lake.version.NotALake``'s one line for a folder that is not a lake (a run would refuse it), else None: a
    deployment's run and ``validate`` say it before the lease or a probe writes anything there."""
    from dialogbench.lake.links import LakeLinkError
    from dialogbench.lake.version import LakeFormatError, NotALake, refuse_foreign

    try:
        refuse_foreign(lake)
    except NotALake as exc:
        return f"lake: {exc}"
    except (LakeLinkError, LakeFormatError, OSError):  # said by the checks below, or by the run's own refusal
        pass
    return None


def lake_problem(lake: Lake) -> str | None:
    """Why the lake directory itself cannot be written (or holds a link it must not), or None (``lake_problems``)."""
    problems = lake_problems(lake)
    return problems[0] if problems else None


SHARED_FOLDERS = ("_state", "reports")  # written by a run besides its tables: checkpoints, the report


def tables_problems(run: Run) -> list[str]:
    """An existing lake that keeps its tables otherwise (or elsewhere) than the config asks (``lake_tables``, ``lake:
    s3://…``): what the run's ``version.ensure_current`` would refuse, said before it starts."""
    from dialogbench.lake.version import LakeFormatError, lake_format, tables_mismatch

    try:
        if lake_format(run.lake) is None:  # a new lake: the run marks it as the config asks
            return []
    except LakeFormatError as exc:
        return [f"lake: {exc}"]
    problem = tables_mismatch(run.lake, tables=run.config.lake_tables, store=run.config.lake_store)
    return [] if problem is None else [f"lake: {problem}"]


def run_folders(run: Run) -> list[str]:
    """The lake folders ``run`` writes: the shared tables (failures, plans, runs, backend calls, the history's), each
    enabled family's tables and its stages' tables, and ``SHARED_FOLDERS``."""
    from dialogbench.cells.shared_tables import SHARED_TABLES
    from dialogbench.history import HISTORY_TABLES

    names = [t.name for t in (*SHARED_TABLES, *HISTORY_TABLES)]
    for family in run.enabled:
        names += [t.name for t in family.tables]
        names += [s.table.name for s in run.family_stages(family.name) if s.table is not None]
    return list(dict.fromkeys([*names, *SHARED_FOLDERS]))


def lake_problems(lake: Lake, folders: list[str] = ()) -> list[str]:
    """Why the lake (opened with its layout: an old lake is told from a foreign folder by its tables), or any of its
    ``folders`` (a run's tables), cannot be written: each one named. An existing
    folder is tried by writing a probe file in it (what a write needs, whoever runs it: root included); a missing
    one by creating it. A lake whose own files or folders are links is refused (``lake.links``). Everything made for
    the probes is removed again (``validate`` leaves no trace)."""
    from dialogbench.lake.links import FOLLOWED, LakeLinkError, check_tree

    path = Path(lake.root)
    if (foreign := _not_a_lake(lake)) is not None:  # before a probe is written into a folder that is not a lake
        return [foreign]
    made: list[Path] = []
    try:
        parent = path
        while not parent.exists() and parent != parent.parent:
            made.append(parent)
            parent = parent.parent
        path.mkdir(parents=True, exist_ok=True)
        _probe(path)
    except OSError as exc:
        _remove(made)
        return [f"lake: cannot write in the lake directory {path} ({exc.strerror or exc})"]
    problems = []
    try:
        check_tree(path)
    except LakeLinkError as exc:
        problems.append(str(exc))
    else:  # a catalog.duckdb the run's last step cannot replace (a folder) is said now, not after every cell
        from dialogbench.lake.catalog import catalog_problem

        if (catalog := catalog_problem(path)) is not None:
            problems.append(str(catalog))
    probed: list[Path] = []
    for name in folders:
        folder = path / name
        if folder.is_symlink() and name not in FOLLOWED:
            continue  # named above; never written through
        try:
            if folder.is_dir():
                _probe(folder)
            else:  # missing (or not a folder: mkdir says so)
                folder.mkdir()
                probed.append(folder)
        except OSError as exc:
            what = "folder" if name in SHARED_FOLDERS else "table folder"
            problems.append(f"lake: cannot write in the {what} {folder} ({exc.strerror or exc})")
    for folder in probed:
        _remove([folder])
    _remove(made)
    return problems


def _probe(folder: Path) -> None:
    probe = folder / f".preflight-{uuid.uuid4().hex}.tmp"
    probe.write_bytes(b"")
    probe.unlink()


def _remove(made: list[Path]) -> None:
    for directory in made:  # deepest first; one another process wrote into meanwhile stays
        try:
            directory.rmdir()
        except OSError:
            break


def data_problems(run: Run) -> list[str]:
    """Every enabled family's own data check (``Family.check_data``): a new family brings its own."""
    return [problem for family in run.enabled if family.check_data for problem in family.check_data(run.config)]


def model_findings(model: ModelConfig) -> tuple[list[str], list[str]]:
    """(problems, notes) of one model on this machine."""
    problems, notes = [], []
    if model.backend in ("transformers", "vllm"):
        try:
            resolve_weights(model.weights or "", must_exist=model.backend == "transformers")
        except FileNotFoundError as exc:
            problems.append(f"weights: {exc}")
    if model.backend == "openai":
        if not model.base_url and not os.environ.get(model.base_url_env):
            problems.append(f"base_url_env: environment variable {model.base_url_env} is not set (or give the "
                            "endpoint's base_url in the model entry)")
        if not os.environ.get(model.api_key_env):
            # Not an error: the backend then sends the key "EMPTY", which a local server started without
            # --api-key accepts; a hosted API answers 401 and the cells land in `failures`.
            notes.append(f"api_key_env: environment variable {model.api_key_env} is not set (requests carry the "
                         "key 'EMPTY': fine for a local server without --api-key)")
    if model.backend == "vllm":
        try:
            import vllm  # noqa: F401
        except ImportError:
            problems.append("backend: vllm is not installed (pip install '.[vllm]')")
    return problems, notes


SECRET_NOTE = "looks like a secret written in the config"


def _advice(field: SecretField, model: ModelConfig | None) -> str:
    """What to do instead of writing this secret in the config, by where it is and what it is."""
    if field.kind in ("url_password", "url_user"):
        return ("keep the password or token out of the URL: a netrc entry (~/.netrc: machine <host> login <user> "
                "password …) or a credential helper supplies it")
    if field.kind == "url_query":
        return ("keep the key out of the URL's query: put it in an environment variable (for an endpoint, the one "
                "api_key_env names) and let the client add it")
    if model is not None and model.backend == "openai":
        return ("put the endpoint's key in an environment variable and name it in api_key_env (e.g. api_key_env: "
                "DIALOGBENCH_JUDGE_API_KEY); the backend sends it as the request's Bearer token")
    what = "revision names a branch, tag or commit, not a credential; " if field.path.endswith(".revision") else ""
    return (f"{what}name an environment variable instead (e.g. HF_TOKEN, which vLLM and transformers read for "
            "Hugging Face downloads): export it where the run starts and remove it from the config")


def secret_notes(config: Config, *, source: str = "config") -> list[str]:
    """One note per config field holding a secret (``dialogbench.text.redact.secret_fields``: a key naming one, a URL
    password, an Authorization value, a key-shaped token), naming the field and what to do instead, never the
    value. Not an error: the run works and stores it as [REDACTED], but a config file is copied, committed and
    shared, and the secret belongs in the environment (or a netrc)."""
    models = {"models": config.models, "judges": config.judges}
    notes = []
    for field in secret_fields(config.model_dump(mode="json")):
        head, _, index = field.path.partition(".")[0].partition("[")
        model = models[head][int(index.rstrip("]"))] if head in models and index else None
        notes.append(f"{source}: {field.path}: {SECRET_NOTE}; {_advice(field, model)} (the run stores it as "
                     f"{REDACTED})")
    return notes


def check(run: Run) -> Findings:
    """Everything ``run`` needs, checked without computing anything; its config's path prefixes each line."""
    config, source = run.config, run.source
    found = Findings()
    lake = lake_problems(run.lake, run_folders(run)) or tables_problems(run)
    found.inputs.extend(f"{source}: {p}" for p in [*lake, *data_problems(run)])
    for model in models_in_use(run):
        problems, notes = model_findings(model)
        found.machine.extend(f"{source}: model {model.name!r}: {p}" for p in problems)
        found.notes.extend(f"{source}: model {model.name!r}: {n}" for n in notes)
    found.machine.extend(f"{source}: {p}" for p in placement_problems(run))
    found.notes.extend(secret_notes(config, source=source))
    found.notes.extend(self_judging.notes(config, source=source))  # a candidate its own judge: worth saying
    found.notes.extend(f"{source}: {note}" for family in run.enabled if family.notes for note in family.notes(config))
    return found


def placement_problems(run: Run) -> list[str]:
    """Why the run's vLLM engines cannot be placed on its GPUs (``placement``), at the first stage where those
    loaded together do not fit; none on a machine without GPUs (the CPU build runs them)."""
    config = run.config
    gpus = placement.visible_devices(config.devices)
    if config.dispatch is not None and not config.dispatch.elsewhere and not gpus:
        return ["dispatch: without a deployment the units run on this box, on the run's GPUs, and it has none: give "
                "it some (--devices 0,1,...; device ids are slots even for models that run no engine here), name "
                "the work pool's deployment (dispatch.deployment) or send them to task workers "
                "(dispatch.task_workers)"]
    if not gpus:
        return []
    try:
        sent: set[str] = set()
        if config.dispatch is not None:  # each unit's models on their own: the GPUs a unit needs at once
            problems, sent = unit_placement_problems(run, gpus)
            if problems:
                return problems
        for stage, models in run.schedule.loaded():  # what the run's own process loads (all of it, undispatched)
            if stage in sent:
                continue
            try:
                placement.place(placement.asks(models), gpus)
            except placement.PlacementError as exc:
                return [f"stage {stage}: {exc}"]
    except (OSError, ValueError):  # a data file a stage reads for its groups is bad: data_problems names it
        return []
    return []


def unit_placement_problems(run: Run, gpus: list[str]) -> tuple[list[str], set[str]]:
    """Under ``dispatch:``, each unit (``dispatch.units.split``) placed alone: its models loaded together must fit
    on the GPUs a unit can get, the run's on this box. With a deployment or task workers they are a worker's, which
    this machine cannot see: nothing is checked here (the worker places its engines on its own GPUs). Returns the
    problems, naming the unit, and the stages the units run (the dispatching process loads none of them)."""
    from dialogbench.dispatch.units import split

    _, units, _ = split(run, run.stage_names())
    problems, sent = [], set()
    for unit in units:
        sent.update(unit.stages)
        if run.config.dispatch.elsewhere:
            continue
        try:
            placement.place(placement.asks([run.config.model(n) for n in unit.models]), gpus)
        except placement.PlacementError as exc:
            problems.append(f"unit {unit.name} ({', '.join(unit.stages)}): {exc}")
    return problems, sent


ENDPOINT_TIMEOUT_S = 5.0
_TRUE = ("1", "on", "yes", "true")


def hub_cache_dir(model: ModelConfig | None = None) -> Path:
    """Where Hugging Face downloads go: vLLM's ``engine.download_dir``, else HF_HUB_CACHE, HF_HOME/hub or
    ~/.cache/huggingface/hub (read now, not when huggingface_hub was imported)."""
    if model is not None and model.engine.get("download_dir"):
        return Path(str(model.engine["download_dir"])).expanduser()
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME") or "~/.cache", "huggingface")
    return Path(home).expanduser() / "hub"


def _hub_cached(repo_id: str, revision: str | None, cache: Path) -> bool:
    """``repo_id`` has a snapshot in the Hugging Face cache ``cache`` (its config.json, or any file of it);
    ValueError when it is no hub name (huggingface_hub's own check)."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(repo_id, "config.json", cache_dir=str(cache), revision=revision)
    if isinstance(found, str):
        return True
    snapshots = cache / f"models--{repo_id.replace('/', '--')}" / "snapshots"
    return snapshots.is_dir() and any(snapshots.iterdir())


def weights_findings(model: ModelConfig) -> tuple[list[str], list[str]]:
    """(problems, notes) for a local engine's hub-named weights (``org/name``), found without loading them: in the
    local Hugging Face cache, else a download the run makes (a note), or a problem when HF_HUB_OFFLINE forbids it.
    A local path or ``pkg://`` file is ``model_findings``' (which ``run`` checks too)."""
    weights = model.weights or ""
    if model.backend != "vllm" or weights.startswith(PKG_SCHEME):
        return [], []  # transformers loads local weights only: model_findings names a missing one
    try:
        resolved = resolve_weights(weights, must_exist=False)
    except FileNotFoundError:
        return [], []  # a path: model_findings names it
    if Path(resolved.path).exists():
        return [], []
    cache = hub_cache_dir(model)
    try:
        cached = _hub_cached(weights, model.revision, cache)
    except ImportError:
        return [], [f"weights: {weights!r} is no local path; huggingface_hub is not installed to look for it in "
                    "the Hugging Face cache"]
    except ValueError:  # HFValidationError: not org/name
        return [f"weights: {weights!r} is no file or folder here, nor a Hugging Face model name (org/name)"], []
    if cached:
        return [], []
    revision = f" (revision {model.revision})" if model.revision else ""
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUE:
        return [f"weights: {weights!r}{revision} is no local path and is not in the Hugging Face cache ({cache}), "
                "and HF_HUB_OFFLINE is set: download it first (huggingface-cli download "
                f"{weights}), or give a local path"], []
    return [], [f"weights: {weights!r}{revision} is not in the Hugging Face cache ({cache}) nor a local path: the "
                "run will download it from the Hub"]


def endpoint_findings(model: ModelConfig, *, timeout_s: float = ENDPOINT_TIMEOUT_S,
                      listings: dict | None = None) -> tuple[list[str], list[str]]:
    """(problems, notes) for an OpenAI-compatible model's endpoint: ``GET {base_url}/models`` within ``timeout_s``
    must answer and list the model's name (``weights``); an endpoint without that listing is a note. No base URL is
    ``model_findings``' problem. ``listings`` caches the answers by (URL, key) across models."""
    import json
    import urllib.error
    import urllib.request

    base = getattr(model, "base_url", None) or os.environ.get(model.base_url_env)
    if model.backend != "openai" or not base:
        return [], []
    url = base.rstrip("/") + "/models"
    key = os.environ.get(model.api_key_env)
    cache = listings if listings is not None else {}
    if (url, key) not in cache:
        request = urllib.request.Request(url, headers={"Accept": "application/json",
                                                       **({"Authorization": f"Bearer {key}"} if key else {})})
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as answer:  # noqa: S310 (the config's URL)
                body = answer.read(4_000_000)
            cache[(url, key)] = ("ok", body)
        except urllib.error.HTTPError as exc:
            cache[(url, key)] = ("http", exc.code)
        except (urllib.error.URLError, OSError, ValueError) as exc:  # refused, no such host, timed out, bad URL
            reason = getattr(exc, "reason", None) or exc
            cache[(url, key)] = ("down", str(reason) or type(exc).__name__)
    kind, detail = cache[(url, key)]
    name = model.weights or ""
    if kind == "down":
        return [f"endpoint: {base} is unreachable (GET {url}: {detail}): is the server running, and the URL right?"], []
    if kind == "http" and detail in (401, 403):
        return [f"endpoint: GET {url} answered HTTP {detail}: the key in {model.api_key_env} is refused"
                + ("" if key else " (it is not set)")], []
    if kind == "http" and detail in (404, 405, 501):
        return [], [f"endpoint: {base} has no model listing (GET {url}: HTTP {detail}): cannot check that it serves "
                    f"{name!r}"]
    if kind == "http":
        return [f"endpoint: GET {url} answered HTTP {detail}"], []
    try:
        served = [str(entry["id"]) for entry in json.loads(detail)["data"]]
    except (ValueError, TypeError, KeyError):
        return [], [f"endpoint: GET {url} answered no model list: cannot check that it serves {name!r}"]
    if name not in served:
        listed = ", ".join(served[:10]) + (f", … ({len(served) - 10} more)" if len(served) > 10 else "")
        return [f"endpoint: {base} does not serve {name!r} (weights); it lists: {listed or 'no model'}"], []
    return [], []


def locate(run: Run, *, timeout_s: float = ENDPOINT_TIMEOUT_S) -> Findings:
    """Where each model of the run is, without loading it (``dialogbench validate``): a vLLM model's hub name in the
    local Hugging Face cache (``weights_findings``), an endpoint answering with the model listed
    (``endpoint_findings``). A missing local path is ``check``'s, for ``run`` too."""
    found, listings, source = Findings(), {}, run.source
    for model in models_in_use(run):
        for problems, notes in (weights_findings(model),
                                endpoint_findings(model, timeout_s=timeout_s, listings=listings)):
            found.machine.extend(f"{source}: model {model.name!r}: {p}" for p in problems)
            found.notes.extend(f"{source}: model {model.name!r}: {n}" for n in notes)
    return found


def preflight(run: Run) -> None:
    """Raise ConfigError naming every problem (the CLI exits 2 with it, no traceback); log the notes once."""
    found = check(run)
    for note in found.notes:
        if note not in _NOTED:
            _NOTED.add(note)
            log.warning(note)
    if found.inputs or found.machine:
        raise ConfigError("\n".join([*found.inputs, *found.machine]))
