"""Run configuration: YAML in, validated objects out; every error names its file and field."""

from __future__ import annotations

import collections.abc
import difflib
import logging
import math
import os
import re
import typing
from pathlib import Path
from typing import Any, ClassVar, Literal, NamedTuple, Protocol, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from dialogbench.run.boards import OVERRIDE_FLAGS, run_board
from dialogbench.text.redact import register, secret_values, watch_env
from dialogbench.text.yamlbounds import read_yaml_file


log = logging.getLogger("dialogbench.config")

BACKENDS = ("transformers", "vllm", "openai", "scripted")


class FamilyLike(Protocol):
    """What a config reads of a family (``dialogbench.run.family_spec.Family`` is one): its section's name and class,
    and whether it is on in every config. A protocol, so this module does not import the family spec, which imports
    the stages and tables that read a ``Config``."""

    @property
    def name(self) -> str: ...

    @property
    def section(self) -> type: ...

    @property
    def always(self) -> bool: ...


class ConfigError(ValueError):
    """A configuration problem found before any compute; the message names the file and field."""


class Strict(BaseModel):
    """A config mapping that refuses unknown keys and is immutable once loaded. Every number in it is finite: YAML
    reads ``.inf`` and ``.nan`` as floats, and a price, a timeout or a share of infinity passes ``ge=0`` bounds
    (a cost of ``inf``, a sleep that overflows)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class FamilySection(Strict):
    """A family's section of the config. Present means it runs (``enabled: false`` turns it off, the
    same for every family); absent means it does not, and leaves no trace in a run. ``OVERRIDES`` maps
    each CLI flag (limit, models, n, judge) to the section fields it sets (``apply_overrides`` says how).
    ``MATCHUPS`` names the fields that seat several models at once (Arena pairs, SpyFall pairs, TofuKingdom
    assignments): ``field -> (part, k)``, ``part`` being the sub-section that plays them (its ``enabled`` turns
    it off) and ``k`` how many distinct models each of the part's default matchups seats (fewer only when the
    section has fewer models), so that ``--models`` can drop the matchups naming other models and turn off a
    part left with none."""

    OVERRIDES: ClassVar[dict[str, tuple[str, ...]]] = {}
    MATCHUPS: ClassVar[dict[str, tuple[str, int]]] = {}
    PATHS: ClassVar[tuple[str, ...]] = ()  # fields holding file paths (resolved against the working directory)
    enabled: bool = True

    def required_files(self) -> tuple[str, ...]:
        """The ``PATHS`` this section reads when it runs (each must be a readable file)."""
        return self.PATHS

    def check(self, config: "Config", families: Sequence[FamilyLike] = ()) -> None:
        """Cross-references to the rest of the config (``families``: the ones it is validated against); raise
        ValueError("<section>.<field>: …")."""

    @classmethod
    def _agreement_judges(cls, config: "Config", field: str, names: list[str], judge: str | None) -> None:
        """``names`` (a section's ``agreement_judges``) are configured models, each once, none the section's ``judge``."""
        cls._known(config, field, names, config.model_names(), "a configured model")
        if len(set(names)) != len(names):
            raise ValueError(f"{field}: each judge once ({', '.join(names)})")
        if judge in names:
            raise ValueError(f"{field}: {judge!r} is the judge; list only the other judges whose verdicts are "
                             "compared with its (a CLI --judge that picks one of them: drop it from the list)")

    @staticmethod
    def _known(config: "Config", field: str, names, among=None, what: str = "in models") -> None:
        known = set(among if among is not None else (m.name for m in config.models))
        for name in names or []:
            if name not in known:
                raise ValueError(f"{field}: {name!r} is not {what} ({', '.join(sorted(known))})")


class ChatTemplateConfig(Strict):
    """How conversations are fitted to a model's chat template.

    ``system``: ``native`` sends a system message, ``merge`` folds it into the first user message,
    ``auto`` probes the template (transformers, vllm) and falls back to ``merge``.
    ``leading_assistant``: ``native`` lets a conversation start with an assistant message,
    ``user_filler`` puts a user message first (the system text when merged, else ``filler``).
    """

    system: Literal["auto", "native", "merge"] = "auto"
    leading_assistant: Literal["auto", "native", "user_filler"] = "auto"
    filler: str = "(The conversation continues.)"


class SamplingConfig(Strict):
    temperature: float = Field(0.0, ge=0.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    seed: int | None = 0


MAX_PRICE = 1_000_000.0  # per million tokens: far above any list price, low enough that a run's cost stays finite


class PricesConfig(Strict):
    """What a model's tokens cost, per million (an endpoint's list price, or what a GPU hour buys): ``usage`` gives
    each run's cost per model and role from them."""

    prompt_per_million: float = Field(ge=0.0, le=MAX_PRICE)
    completion_per_million: float = Field(ge=0.0, le=MAX_PRICE)


class ModelConfig(Strict):
    """One model (a chatbot under test or a judge) and how to reach it."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    backend: str
    weights: str | None = None
    revision: str | None = None
    chat_template: ChatTemplateConfig = ChatTemplateConfig()
    sampling: SamplingConfig = SamplingConfig()
    max_tokens: int = Field(64, ge=1)
    context_window: int = Field(2048, ge=16)
    # Engine settings: passed through, not part of the cell key (they do not change outputs).
    batch_size: int = Field(16, ge=1)
    device: str = "auto"
    engine: dict[str, Any] = Field(default_factory=dict)
    # vLLM settings it reads only from the environment, set while the engine starts (VLLM_ENABLE_V1_MULTIPROCESSING:
    # "0" runs it in the run's own process: configs/demo.yaml, on 2 CPU cores). Part of the engine's identity.
    engine_env: dict[str, str] = Field(default_factory=dict)
    # An OpenAI-compatible endpoint's base URL, given here (no secret in it) or read from the variable base_url_env
    # names when unset.
    base_url: str | None = None
    base_url_env: str = "DIALOGBENCH_OPENAI_BASE_URL"
    api_key_env: str = "DIALOGBENCH_OPENAI_API_KEY"
    concurrency: int = Field(8, ge=1)
    timeout_s: float = Field(120.0, gt=0)
    max_retries: int = Field(5, ge=0)
    # Constrained decoding of the formats protocols ask for (see dialogbench/backends/formats.py):
    # auto: local engines enforce regexes and JSON schemas, OpenAI-compatible endpoints JSON schemas.
    structured_outputs: Literal["auto", "off", "json", "all"] = "auto"
    prices: PricesConfig | None = None  # per million tokens: the cost columns of `usage` (not part of any cell key)
    # generated tokens a second of this model's engine where it runs (bench/gpu.py measures it): `plan`'s hours and
    # the GPUs `plan --hours N` asks for; unset: the lake's measure of past runs (not part of any cell key)
    throughput_tok_s: float | None = Field(None, gt=0, allow_inf_nan=False)
    # scripted backend only (tests): the replies, cycled, and a pause per backend call, plus one per conversation in
    # it (an engine whose time grows with the work it is given: bench/scale_out.py's judge)
    script: list[str] | None = None
    script_delay_s: float = Field(0.0, ge=0.0)
    script_delay_per_conversation_s: float = Field(0.0, ge=0.0)

    @field_validator("engine")
    @classmethod
    def _finite_engine_numbers(cls, value: dict[str, Any]) -> dict[str, Any]:
        """The engine's settings pass through untyped, so the finite rule of ``Strict`` is checked here, at any
        depth (``.inf`` or ``.nan`` for a memory share would reach vLLM, the fingerprint and Prefect's JSON)."""
        def walk(node: Any, where: str) -> None:
            if isinstance(node, float) and not math.isfinite(node):
                raise ValueError(f"{where.lstrip('.')}: {node} is not a finite number")
            if isinstance(node, dict):
                for key, child in node.items():
                    walk(child, f"{where}.{key}")
            elif isinstance(node, list):
                for index, child in enumerate(node):
                    walk(child, f"{where}[{index}]")

        walk(value, "")
        return value

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, value: str) -> str:
        if value not in BACKENDS:
            raise ValueError(f"unknown backend {value!r} (expected one of: {', '.join(BACKENDS)})")
        return value

    @model_validator(mode="after")
    def _needs_weights(self) -> "ModelConfig":
        if self.backend in ("transformers", "vllm", "openai") and not self.weights:
            raise ValueError(f"backend {self.backend!r} needs 'weights' (a path, pkg:// file or model name)")
        if self.backend == "scripted" and not self.script:
            raise ValueError("backend 'scripted' needs 'script' (a list of replies)")
        if self.base_url is not None:
            if self.backend != "openai":
                raise ValueError(f"base_url is an OpenAI-compatible endpoint's: backend {self.backend!r} has none")
            from dialogbench.run.model_spec import SpecError, check_url

            try:
                check_url(self.base_url, what="base_url")
            except SpecError as exc:
                raise ValueError(str(exc)) from None
        if self.engine_env and self.backend != "vllm":
            raise ValueError(f"engine_env sets vLLM's environment variables: backend {self.backend!r} has none")
        if bad := [name for name in self.engine_env if not re.fullmatch(r"[A-Z][A-Z0-9_]*", name)]:
            raise ValueError(f"engine_env: {bad[0]!r} is not an environment variable's name (e.g. VLLM_CPU_KVCACHE_SPACE)")
        watch_env(self.api_key_env)  # its value (never stored here) is redacted from everything written
        register(*secret_values(self.model_dump(mode="json")))  # a token or password written here: redacted too
        return self

    def fingerprint_fields(self) -> dict[str, Any]:
        """What determines this model's outputs (engine settings and endpoints left out)."""
        return self.model_dump(include={"name", "backend", "weights", "revision", "chat_template",
                                        "sampling", "max_tokens", "context_window", "script"})


class ReportConfig(Strict):
    """What the report warns about (README, "The report"): a rate or rating resting on fewer than ``min_cells``
    cells (dialogues, games, comparisons) is marked and listed under its section's Warnings."""

    min_cells: int = Field(10, ge=1)
    # Where `dialogbench serve` serves this lake's reports (http://gpu-box:8765): the run's Prefect artifacts and its
    # failure message link <url>/runs/<run_id>/report.html. Unset: the artifacts say how to serve them.
    url: str | None = Field(None, pattern=r"^https?://[^\s/?#]+(/[^\s?#]*)?$")


class FailOn(Strict):
    """When a run whose cells failed (a backend error, after the stage's retries) ends Failed in Prefect and
    exits 4 from the CLI, once its catalog, data tests and report are done (the results are published either
    way; the failed cells are in ``failures`` and the next run retries them).

    ``cells``: ``any`` (default): one failed cell fails the run; ``share``: a stage fails the run when more
    than ``share`` of the cells it tried to compute this run failed (failed / (computed + failed); cached
    cells are not tried); ``never``: failed cells never fail the run (the warnings and the failures
    artifact stay)."""

    cells: Literal["any", "share", "never"] = "any"
    share: float = Field(0.05, ge=0.0, lt=1.0)

    @model_validator(mode="after")
    def _share_only_with_share(self) -> "FailOn":
        if "share" in self.model_fields_set and self.cells != "share":
            raise ValueError(f"share is read only with cells: share (cells is {self.cells!r})")
        return self


DEAD_AFTER_MIN_S = 15.0  # three heartbeats (dialogbench.dispatch.units.BEAT_S)


class DispatchConfig(Strict):
    """``dispatch:``: a run spreads its model work (dialogbench/dispatch/units.py, flows/work.py): each model's generation,
    answers and Ask-Guess games, and each group of a game's players, become a flow run of ``deployment`` that a worker of its work pool picks up; without
    a deployment, a process of this box on GPUs of the run's own (dialogbench/dispatch/box.py), as many at once as they hold."""

    # "<flow>/<deployment>": prefect.yaml's dialogbench-work/gpu; none: units run on this box's GPUs
    deployment: str | None = Field(None, pattern=r"^[^/]+/[^/]+$")
    # true: each unit is a task run that a task worker takes (`python -m flows.unit_worker`, one per GPU slot on any
    # box, subscribed to the run's Prefect server): a long-lived process that takes unit after unit, so Python,
    # Prefect and the run's modules start once per worker, not once per unit as a work pool's process worker does.
    # Not with a deployment (units go to one or the other)
    task_workers: bool = False
    retries: int = Field(2, ge=0, le=20)  # a unit whose worker (or process) died or crashed is sent again
    # no heartbeat this long after a worker took it: presumed dead. At least three of a unit's beats (every
    # dispatch.BEAT_S = 5 s), so a healthy unit is never presumed dead between two of them.
    dead_after_s: float = Field(120.0, ge=DEAD_AFTER_MIN_S)
    poll_s: float = Field(2.0, gt=0)  # how often the dispatching run looks at its units
    # judge what the units finished while others still run: a "judging" unit on the judges' GPUs (dialogbench/dispatch/units.py)
    judge_while_generating: bool = True
    # on this box (no deployment): one long-lived process per GPU takes unit after unit, so Python, Prefect and the
    # run's modules start once per GPU, not once per unit (dialogbench/dispatch/box.py's WarmBox); a unit on several
    # GPUs still starts a process of its own. false: a process per unit
    warm: bool = True
    # a model's own unit split in this many (data parallel): its stages whose cells are independent (MT-Bench-101
    # golden-context answers, Ask-Guess games) are computed a share each by every part at once; the rest (BotChat
    # generation, whose resume checkpoint is the model's) whole by its first part (dialogbench/dispatch/units.py)
    shards: int = Field(1, ge=1, le=64)

    @model_validator(mode="after")
    def _one_place(self) -> "DispatchConfig":
        if self.task_workers and self.deployment:
            raise ValueError("dispatch.task_workers and dispatch.deployment both set: units go to task workers "
                             "(flows/unit_worker.py) or to the deployment's work pool, not both; drop one")
        return self

    @property
    def elsewhere(self) -> bool:
        """The units run on workers of their own (a work pool's, or task workers), whose GPUs this process cannot
        see; else on this box's."""
        return bool(self.deployment) or self.task_workers


class LakeUpkeepConfig(Strict):
    """``lake_upkeep:``: what a run does to a Delta lake at its end (dialogbench/lake/delta/upkeep.py), so nightly
    chunks do not pile up as files every read lists. Nothing on a folder lake. Not part of any cell key."""

    # a table whose latest version has more files than this is compacted (its small files rewritten into few, no row
    # changed); null: never (then `dialogbench compact` by hand)
    compact_above_files: int | None = Field(200, ge=1)
    # files no version needs (what a compaction replaced, a killed writer's) older than this are deleted; null: never.
    # Keep it longer than the longest run and the longest read (a file is on disk before its commit names it)
    vacuum_after_hours: float | None = Field(168.0, ge=1)


class TrackingConfig(Strict):
    """``tracking:``: each run's results also logged to an experiment tracker (dialogbench/run/tracking.py), once its
    report and results.json are written: ``to`` names it (its package installed: ``pip install mlflow`` /
    ``pip install wandb``); unset: nothing is logged. ``experiment``: MLflow's experiment, W&B's project. Where to
    log and its credentials come from the tracker's own environment (MLFLOW_TRACKING_URI, WANDB_API_KEY…), never from
    the config. A tracker's failure is a warning: the run's results stand."""

    to: Literal["mlflow", "wandb"] | None = None
    experiment: str = Field("dialogbench", min_length=1, max_length=500)


class Config(Strict):
    """The run's config: the lake, the models and judges, and one section per family that runs. The sections are
    validated by the classes of the families it is validated against (``validate_config``: the registered ones,
    ``dialogbench.run.registry``): each family's ``section``, in its own folder."""

    model_config = ConfigDict(extra="allow", frozen=True)
    lake: str = "data_lake"
    # The board the run publishes to (dialogbench/run/boards.py): as loaded, the config's own (this field, else the
    # file's stem) or the one CLI overrides give ("demo+limit=4"); --board NAME picks one.
    board: str | None = None
    models: list[ModelConfig] = Field(min_length=1)
    judges: list[ModelConfig] = Field(default_factory=list)
    fail_on: FailOn = FailOn()  # what failed cells do to the run's final state (and the CLI's exit code)
    # `dialogbench run` says in seconds that the board's latest run holds this config's results when nothing changed
    # since (config, code, lake) and nothing is left to compute, instead of recording a run that computes nothing
    # (dialogbench/run/reuse.py); `run --rerun` records one anyway. Scheduled (Prefect) runs always record their run.
    reuse_unchanged_run: bool = False
    # SIGTERM / SIGINT: how long the chunk in flight may go on before its calls are abandoned (dialogbench/run/stopping.py);
    # the process is gone a few seconds later. Under a Prefect worker's 30 s grace before its SIGKILL.
    stop_timeout_s: float = Field(20.0, gt=0, le=3600)
    report: ReportConfig = ReportConfig()  # the report's warnings (not a family)
    # The GPUs the run's vLLM engines go on (dialogbench/dispatch/placement.py), "0,1,2,3" or a list; "none": no GPU. Unset:
    # CUDA_VISIBLE_DEVICES, else every GPU nvidia-smi lists. Not part of any cell key (outputs do not depend on it).
    devices: list[str] | None = None
    # How the lake stores its tables (docs/lake-format.md): "delta" (Delta Lake tables: each commit atomic, a cell
    # stored once by its key whoever writes it) or "files" (the older format: Parquet files, each with a checksummed
    # record, one writer at a time under the lake's lease). Unset: a new lake is "delta", an existing one keeps its
    # own; a config naming one that an existing lake is not is refused, naming `dialogbench convert`. Not part of any
    # cell key.
    lake_tables: Literal["files", "delta"] | None = None
    # Set when `lake:` is s3://bucket/prefix (docs/lake-format.md): the Delta tables are there, and `lake` becomes the
    # local folder beside them (lake.delta.mirror: marker, lease, checkpoints, reports, the files readers read).
    lake_store: str | None = None
    lake_upkeep: LakeUpkeepConfig = LakeUpkeepConfig()  # a Delta lake's compaction and vacuum at each run's end
    dispatch: DispatchConfig | None = None  # unset: the run computes everything itself (dialogbench/dispatch/units.py)
    tracking: TrackingConfig = TrackingConfig()  # off unless tracking.to names a tracker (dialogbench/run/tracking.py)

    @field_validator("devices", mode="before")
    @classmethod
    def _device_list(cls, value):
        """The string "0,1" and the list [0, 1] both name GPUs 0 and 1."""
        if isinstance(value, (str, int)):
            value = str(value).split(",")
        return value if value is None else [str(v).strip() for v in value if str(v).strip()]

    @field_validator("board")
    @classmethod
    def _board_name(cls, value: str | None) -> str | None:
        """A board name; a run's own ('demo+limit=4', from overrides) too, since a loaded config carries it (a YAML
        ``board:`` without '+' is checked by ``load_config``)."""
        from dialogbench.run.boards import check_name

        return value if value is None else check_name(value, what="board", adhoc=True)

    @model_validator(mode="after")
    def _references(self, info: ValidationInfo) -> "Config":
        names = self.model_names()
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate model names: {', '.join(dupes)} (names must be unique across models and judges)")
        context = info.context or {}
        if "families" not in context and all(isinstance(v, FamilySection) for v in self.sections().values()):
            return self  # an already validated config, validated again as it is (Prefect checks a flow's parameters)
        families = context.get("families", ())
        sections = {f.name: f.section for f in families}
        for name, value in list((self.__pydantic_extra__ or {}).items()):
            if name not in sections:
                raise ValueError(f"{name}: unknown section (families: {', '.join(sections) or 'none'}; or a "
                                 f"top-level key: {', '.join(type(self).model_fields)})")
            self.__pydantic_extra__[name] = value if isinstance(value, sections[name]) else \
                sections[name].model_validate(value or {})
        for family in families:
            if family.always and family.name not in self.__pydantic_extra__:
                self.__pydantic_extra__[family.name] = family.section()
        for name in sections if context.get("checks", True) else ():
            section = self.section(name)
            if section is not None and section.enabled:
                section.check(self, families)
        # A secret written in any field (a family section's, report.url's) is redacted from everything written,
        # wherever it turns up: an engine's error quoting it, a log line (dialogbench.text.redact).
        register(*secret_values(self.model_dump(mode="json")))
        return self

    def with_sections(self, *, lake: str, sections: dict) -> "Config":
        """A copy with ``lake`` and family sections replaced."""
        copy = self.model_copy(update={"lake": lake})
        copy.__pydantic_extra__.update(sections)
        return copy

    def sections(self) -> dict[str, FamilySection]:
        """Every family section the config has (enabled or not), by name."""
        return dict(self.__pydantic_extra__ or {})

    def model_names(self) -> list[str]:
        return [m.name for m in [*self.models, *self.judges]]

    def enabled(self, family: str) -> bool:
        section = self.section(family)
        return section is not None and section.enabled

    def section(self, name: str):
        """A family's config section (``botchat``, ``mtbench101``, ``gameeval``, or a registered family's), or None."""
        return (self.__pydantic_extra__ or {}).get(name)

    def model(self, name: str) -> ModelConfig:
        for model in [*self.models, *self.judges]:
            if model.name == name:
                return model
        raise KeyError(name)

    def models_named(self, names: list[str] | None) -> list[ModelConfig]:
        """The models a section lists, in its order (None: every model of ``models``)."""
        return [self.model(n) for n in names] if names else list(self.models)



def _format_errors(source: str, error: ValidationError, families: Sequence[FamilyLike] = (),
                   raw: dict[str, Any] | None = None) -> str:
    """One line per problem, ``<file>: <field path>: <message>``. A misspelled key says which key it was likely meant
    to be (``botchat.limt: unknown key; did you mean 'limit'?``), else the keys allowed there; ``raw`` (the YAML
    mapping) names misspelled top-level keys even when another error stops the checks that would."""
    lines, unknown = [], _unknown_top_level(raw, families)
    lines += [f"{source}: {key}: {hint}" for key, hint in unknown.items()]
    for item in error.errors():
        loc = ""
        for part in item["loc"]:
            loc += f"[{part}]" if isinstance(part, int) else (f".{part}" if loc else str(part))
        msg = item["msg"].removeprefix("Value error, ")
        if not item["loc"] and any(msg.startswith(f"{key}: unknown section") for key in unknown):
            continue  # said above, with a suggestion
        if item["type"] == "extra_forbidden" and item["loc"]:
            msg = unknown_key(str(item["loc"][-1]), _keys_at(item["loc"], families))
        lines.append(f"{source}: {loc or '(top level)'}: {msg}")
    return "\n".join(lines)


def unknown_key(key: str, allowed: Sequence[str] | None, *, listing: str | None = None) -> str:
    """What to say about ``key``, which is none of ``allowed``: the closest of them, else all of them (``listing``:
    how to list them instead)."""
    if not allowed:
        return "unknown key"
    close = difflib.get_close_matches(key, list(allowed), n=1) or \
        difflib.get_close_matches(key.lower(), [a.lower() for a in allowed], n=1)
    if close:
        match = next(a for a in allowed if a.lower() == close[0].lower())
        return f"unknown key; did you mean {match!r}?"
    return f"unknown key ({listing or 'allowed keys: ' + ', '.join(allowed)})"


def _unknown_top_level(raw: dict[str, Any] | None, families: Sequence[FamilyLike]) -> dict[str, str]:
    """Each key of the YAML's top level that is neither a Config field nor a family's section, with its hint."""
    names = [f.name for f in families]
    if not isinstance(raw, dict) or not names:
        return {}
    fields = list(Config.model_fields)
    listing = f"top-level keys: {', '.join(fields)}; family sections: {', '.join(names)}"
    return {str(key): unknown_key(str(key), [*fields, *names], listing=listing)
            for key in raw if key not in fields and key not in names}


def _models_in(annotation: Any) -> tuple[list[type[BaseModel]], bool]:
    """The BaseModel classes an annotation holds (``X | None``, ``list[X]``, ``dict[str, X]``), and whether they sit
    under a mapping's keys (a location then names the key before the field)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation], False
    origin, found, keyed = typing.get_origin(annotation), [], False
    for arg in typing.get_args(annotation):
        models, inner = _models_in(arg)
        found += models
        keyed = keyed or inner
    return found, keyed or (origin in (dict, collections.abc.Mapping) and bool(found))


def _keys_at(loc: Sequence[Any], families: Sequence[FamilyLike]) -> list[str] | None:
    """The keys the mapping at ``loc[:-1]`` allows (its classes' field names), or None when the path is not followed."""
    sections = {f.name: f.section for f in families}
    candidates: list[type[BaseModel]] = [Config]
    keyed = False
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        named = [c for c in candidates if c.__name__ == part]  # a union's member, as pydantic names it
        if named:
            candidates = named
            continue
        following: list[type[BaseModel]] = []
        inner = False
        for cls in candidates:
            if part in cls.model_fields:
                models, inner = _models_in(cls.model_fields[part].annotation)
                following += models
            elif cls is Config and part in sections:
                following.append(sections[part])
        if not following:
            if keyed:  # a mapping's key: the same classes below it
                keyed = False
                continue
            return None
        candidates, keyed = following, inner
    return list(dict.fromkeys(name for cls in candidates for name in cls.model_fields))


_MISSING = object()
_NOTED: set[str] = set()  # override notes logged once per process (the CLI and the flow both load the config)


class Overridden(NamedTuple):
    """The YAML mapping with the flags applied, and what the flags turned off or dropped (one note a flag)."""

    raw: dict[str, Any]
    notes: list[str]


def apply_overrides(raw: dict[str, Any], overrides: dict[str, Any] | None, *, families: Sequence[FamilyLike],
                    source: str = "the config") -> Overridden:
    """Apply CLI flags (or a deployment's parameters) on top of the YAML mapping, in every family section of the
    config that maps the flag to a field (``FamilySection.OVERRIDES`` of the section classes of ``families``); a flag
    left None changes nothing.

    - ``limit``: each mapped field becomes min(its value, K) (unset means unlimited, so K): it narrows, never widens.
    - ``models``: each mapped models list becomes its intersection with the flag, in the config's order (so the
      order the flag is typed in changes nothing); a section left with no model is turned off. Matchups naming
      another model (``FamilySection.MATCHUPS``) are dropped; a part left with none, or whose default matchups
      need more of its models than the flag keeps, is turned off rather than playing what the config never asked
      for. A name the config's ``models`` do not define is a ConfigError naming ``--models`` and ``source``.
    - ``n``, ``judge``: set the field; ``lake``, ``stop_timeout_s``: the top-level field."""
    raw, notes = dict(raw), []
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if key in ("lake", "stop_timeout_s", "devices"):  # top-level fields: no section, no board of their own
            raw[key] = value
        elif key == "canary":  # --no-canary: the section, when the config has one, is off for this run
            if not value and isinstance(raw.get("canary"), dict):
                raw["canary"] = {**raw["canary"], "enabled": False}
        elif key == "board":
            continue  # the board is decided once the config is valid (load_config)
        elif key not in OVERRIDE_FLAGS:
            raise ConfigError(f"unknown override {key!r}")
        elif key == "limit" and (_not_int(value) or value < 1):
            raise ConfigError(f"--limit: expected a positive integer, got {value!r}")
        elif key == "model":
            if overrides.get("models") is not None:
                raise ConfigError("--model and --models: give one (--model adds models to evaluate, --models picks "
                                  "among the config's)")
            raw, note = _add_models(raw, list(value), source, families)
            notes.extend([note] if note else [])
        elif key == "models":
            raw, note = _keep_models(raw, list(value), source, families)
            notes.extend([note] if note else [])
        else:
            for name, section in _sections(raw, families):
                for path in section.OVERRIDES.get(key, ()):
                    keys = path.split(".")
                    new = value
                    if key == "limit":
                        old = _get(raw[name], keys, _default(section, keys))
                        new = old if _not_int(old) else value if old is None else min(old, value)
                    raw[name] = _set(raw[name], keys, new)
    return Overridden(raw, notes)


def _add_models(raw: dict, specs: list[str], source: str, families: Sequence[FamilyLike]) -> tuple[dict, str | None]:
    """``--model SPEC`` (``dialogbench.run.model_spec``): each model is added to the config's models with the settings of
    its first model of the same backend, and every family evaluates exactly these models (as ``--models`` would
    pick them: matchups naming the config's own models are dropped, a part left with too few is off)."""
    from dialogbench.run.model_spec import SpecError, parse

    if not specs:
        raise ConfigError("--model: name at least one model (vllm:PATH_OR_NAME or openai:NAME@URL)")
    try:
        parsed = [parse(spec) for spec in specs]
    except SpecError as exc:
        raise ConfigError(str(exc)) from None
    models = list(raw.get("models") or []) if isinstance(raw.get("models"), list) else []
    judges = raw.get("judges") if isinstance(raw.get("judges"), list) else []
    entries = [m for m in [*models, *judges] if isinstance(m, dict)]
    added = []
    for spec in dict((p.name, p) for p in parsed).values():
        same = next((m for m in entries if m.get("name") == spec.name), None)
        if same is not None and (same.get("weights"), same.get("base_url")) != (spec.weights, spec.base_url):
            raise ConfigError(f"--model {spec.backend}:{spec.weights}: the name {spec.name!r} is already a model of "
                              f"{source} with other weights: put ALIAS= before it (--model my-name={spec.backend}:…)")
        if same is None or same not in models:
            template = next((m for m in entries if m.get("backend") == spec.backend), None)
            models.append(spec.entry(template))
        added.append(spec.name)
    raw = {**raw, "models": models}
    for name, section in _sections(raw, families):
        body = raw[name]
        for path in section.OVERRIDES.get("models", ()):
            keys = path.split(".")
            mine = _get(body, keys, _default(section, keys))
            if isinstance(mine, list):  # a section naming its models plays the added ones instead
                body = _set(body, keys, [*mine, *[n for n in added if n not in mine]])
        raw[name] = body
    raw, note = _keep_models(raw, added, source, families)
    return raw, (note.replace("--models ", "--model ", 1) if note else None)


def _keep_models(raw: dict, wanted: list[str], source: str, families: Sequence[FamilyLike]) -> tuple[dict, str | None]:
    """``--models``: every section keeps only ``wanted`` (see ``apply_overrides``); returns the note saying what
    the flag turned off and dropped, or None."""
    flag = "--models " + ",".join(wanted)
    if not wanted:
        raise ConfigError("--models: name at least one of the config's models")
    defined = _names(raw.get("models"))
    if defined is not None:  # a malformed models list is the config's own error, reported by validation
        judges = set(_names(raw.get("judges")) or [])
        problems = [f"--models: {name!r} is not a model of {source} ({', '.join(defined)})"
                    + (f"; {name!r} is one of its judges: --judge picks the judge" if name in judges else "")
                    for name in dict.fromkeys(wanted) if name not in defined]
        if problems:
            raise ConfigError("\n".join(problems))
    everyone = defined if defined is not None else wanted
    off, dropped = [], []
    for name, section in _sections(raw, families):
        if not _get(raw[name], ["enabled"], _default(section, ["enabled"])):
            continue  # a family that does not run is left as it is
        body, full, players = raw[name], list(everyone), [n for n in everyone if n in wanted]
        for path in section.OVERRIDES.get("models", ()):
            keys = path.split(".")
            mine = _get(body, keys, _default(section, keys))
            if not isinstance(mine, (list, type(None))):
                continue  # not a list: the config's own error
            full = list(everyone) if mine is None else list(mine)
            players = [n for n in full if n in wanted]
            body = _set(body, keys, players)
        if not players:
            off.append(f"{name} (it plays none of them; its models: {', '.join(full)})")
            raw[name] = _set(body, ["enabled"], False)
            continue
        for field, (part, k) in section.MATCHUPS.items():
            keys, part_keys = field.split("."), [*part.split("."), "enabled"]
            running = _get(body, part_keys, _default(section, part_keys))
            listed = _get(body, keys, _default(section, keys))
            if listed:  # the config lists its matchups: keep those seating only kept models
                if not isinstance(listed, list):
                    continue
                kept = [entry for entry in listed if set(_seated(entry)) <= set(players)]
                body = _set(body, keys, kept)
                if running and not kept:
                    off.append(f"{name}.{part} (each of its listed {field.rsplit('.', 1)[-1]} names another model)")
                    body = _set(body, part_keys, False)
                elif running and len(kept) < len(listed):
                    dropped.append(f"{len(listed) - len(kept)} of {len(listed)} {name}.{field}")
            elif running and len(players) < min(k, len(full)):  # its default matchups each seat a dropped model
                off.append(f"{name}.{part} (by default its {field.rsplit('.', 1)[-1]} seat {min(k, len(full))} "
                           f"distinct models; the flag keeps {len(players)} of {name}'s)")
                body = _set(body, part_keys, False)
        raw[name] = body
    parts = ([f"turned off for this run: {'; '.join(off)}"] if off else []) + \
            ([f"dropped {', '.join(dropped)} naming other models"] if dropped else [])
    return raw, (f"{flag}: {'; '.join(parts)}" if parts else None)


def _sections(raw: dict, families: Sequence[FamilyLike]):
    """(name, section class) of each family section present in ``raw`` as a mapping."""
    return [(f.name, f.section) for f in families if isinstance(raw.get(f.name), dict)]


def _names(models: Any) -> list[str] | None:
    """The names of a YAML models list, or None when it is not a list of named mappings."""
    if not isinstance(models, list) or not all(isinstance(m, dict) and isinstance(m.get("name"), str) for m in models):
        return None
    return [m["name"] for m in models]


def _seated(entry: Any) -> list[Any]:
    """The model names a matchup seats: a pair's two, an assignment's values."""
    if isinstance(entry, dict):
        return list(entry.values())
    return list(entry) if isinstance(entry, (list, tuple)) else [entry]


def _not_int(value: Any) -> bool:
    return value is not None and (isinstance(value, bool) or not isinstance(value, int))


def _get(mapping: Any, path: list[str], default: Any) -> Any:
    for key in path:
        if not isinstance(mapping, dict) or key not in mapping:
            return default
        mapping = mapping[key]
    return mapping


def _default(section: type[BaseModel], path: list[str]) -> Any:
    """The value a section class gives ``path`` when the YAML leaves it out."""
    value: Any = section
    for key in path:
        if isinstance(value, type) and issubclass(value, BaseModel):
            value = value.model_fields[key].get_default(call_default_factory=True)
        else:
            value = getattr(value, key, None)
    return value


def _set(mapping: dict, path: list[str], value: Any) -> dict:
    head, rest = path[0], path[1:]
    inner = value if not rest else _set(dict(mapping.get(head) or {}), rest, value)
    return {**mapping, head: inner}


def validate_config(raw: dict[str, Any], *, families: Sequence[FamilyLike]) -> Config:
    """``raw`` as a Config whose sections are those of ``families``. Raises pydantic's ValidationError with every
    problem located (``botchat.n``), the sections' and the top level's; the cross-references between sections
    (``FamilySection.check``) are checked once every part is valid."""
    families = tuple(families)
    errors, ready = [], dict(raw)
    for family in families:
        value = raw.get(family.name)
        if family.name in raw and not isinstance(value, family.section):
            try:
                ready[family.name] = family.section.model_validate(value or {})
            except ValidationError as exc:
                errors += [_located(error, family.name) for error in exc.errors()]
                del ready[family.name]
    if not errors:
        return Config.model_validate(ready, context={"families": families})
    try:
        Config.model_validate(ready, context={"families": families, "checks": False})
    except ValidationError as exc:
        errors = [_located(error) for error in exc.errors()] + errors
    raise ValidationError.from_exception_data("Config", errors)


def _located(error: dict, *prefix: str) -> dict:
    """A pydantic error as a line error of a new ValidationError, its location under ``prefix``."""
    return {"type": error["type"], "loc": (*prefix, *error["loc"]), "input": error.get("input"),
            **({"ctx": error["ctx"]} if "ctx" in error else {})}


def load_config(path: str | os.PathLike, overrides: dict[str, Any] | None = None, *, families: Sequence[FamilyLike],
                root: Path | None = None) -> Config:
    """Read (within ``yamlbounds.LIMITS``), override and validate a YAML config whose family sections are those of
    ``families`` (``dialogbench.run.registry.load_config``: the registered ones); relative paths resolve against ``root``
    (cwd)."""
    source = str(path)
    try:
        raw = read_yaml_file(path, source) or {}  # within bounds: an alias bomb is refused while it is composed
    except FileNotFoundError:
        raise ConfigError(_not_found(source)) from None
    except OSError as exc:
        raise ConfigError(f"{source}: cannot read the config file ({exc.strerror or exc})") from None
    except ValueError as exc:  # not YAML, not UTF-8, or over a bound: one line naming the file and line
        raise ConfigError(str(exc)) from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: expected a mapping at the top level")
    overridden = apply_overrides(raw, overrides, families=families, source=source)
    try:
        config = validate_config(overridden.raw, families=families)
        board = run_board(config_path=path, declared=config.board, overrides=overrides)
    except ValidationError as exc:
        raise ConfigError(_blame(source, raw, overrides, exc, families)) from None
    except ValueError as exc:  # a --board flag that is no board name
        raise ConfigError(f"{source}: {exc}") from None
    for note in overridden.notes:
        if note not in _NOTED:
            _NOTED.add(note)
            log.warning(note)
    return _resolve_paths(config.model_copy(update={"board": board}), root or Path.cwd(), source)


def _not_found(source: str) -> str:
    """A config file that is not there: the closest YAML file's name in its folder (``configs/demo.yml`` ->
    ``configs/demo.yaml``), else the YAML files the folder holds, else that the folder is missing."""
    path = Path(source)
    folder = path.parent
    if not folder.is_dir():
        return f"{source}: config file not found (no folder {folder})"
    try:
        names = sorted(p.name for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
    except OSError:
        names = []
    close = difflib.get_close_matches(path.name, names, n=1, cutoff=0.6)
    if close:
        return f"{source}: config file not found; did you mean {folder / close[0]}?"
    if names:
        shown = ", ".join(names[:10]) + (f", … ({len(names) - 10} more)" if len(names) > 10 else "")
        return f"{source}: config file not found (YAML files in {folder}: {shown})"
    return f"{source}: config file not found"


def _blame(source: str, raw: dict, overrides: dict[str, Any] | None, error: ValidationError,
           families: Sequence[FamilyLike]) -> str:
    """The validation errors, each prefixed with the flags that caused it when the config alone is valid: the
    flag that fails alone (``--n 2``), else every flag given."""
    message = _format_errors(source, error, families, raw)
    given = {k: v for k, v in (overrides or {}).items() if v is not None and k not in ("lake", "board", "stop_timeout_s")}
    if not given or not _valid(raw, families):
        return message
    culprits = [k for k in given
                if not _valid(apply_overrides(raw, {k: given[k]}, families=families, source=source).raw, families)] \
        or list(given)
    flags = ", ".join(f"--{k} " + (",".join(map(str, v)) if isinstance(v, list) else str(v)) for k, v in given.items()
                      if k in culprits)
    return "\n".join(f"{flags}: {line}" for line in message.splitlines())


def _valid(raw: dict, families: Sequence[FamilyLike]) -> bool:
    try:
        validate_config(raw, families=families)
    except ValidationError:
        return False
    return True


def _resolve_paths(config: Config, root: Path, source: str) -> Config:
    """Relative paths against ``root``; each enabled family checks that its data files are readable."""
    def resolve(value: str) -> str:
        return value if os.path.isabs(value) else str((root / value).resolve())

    sections = {}
    for name, section in config.sections().items():
        section = section.model_copy(update={key: resolve(getattr(section, key)) for key in section.PATHS})
        if section.enabled:
            for key in section.required_files():
                path = Path(getattr(section, key))
                if not path.is_file() or not os.access(path, os.R_OK):
                    raise ConfigError(f"{source}: {name}.{key}: cannot read dataset file {path}")
        sections[name] = section
    from dialogbench.lake.delta.mirror import is_store_uri, mirror_folder

    if is_store_uri(config.lake):  # the tables on the store, everything else in the folder beside them
        try:
            folder = mirror_folder(config.lake)
        except ValueError as exc:
            raise ConfigError(f"{source}: lake: {exc}") from None
        config = config.model_copy(update={"lake_store": config.lake.rstrip("/"), "lake_tables": "delta"})
        return config.with_sections(lake=str(folder), sections=sections)
    return config.with_sections(lake=resolve(config.lake), sections=sections)
