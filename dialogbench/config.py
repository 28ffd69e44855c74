"""Run configuration: YAML in, validated objects out; every error names its file and field."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, NamedTuple

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from dialogbench.boards import run_board
from dialogbench.redact import register, secret_values, watch_env
from dialogbench.yamlbounds import read_yaml_file

log = logging.getLogger(__name__)

BACKENDS = ("transformers", "vllm", "openai", "scripted")


class ConfigError(ValueError):
    """A configuration problem found before any compute; the message names the file and field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FamilySection(_Strict):
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

    def check(self, config: "Config") -> None:
        """Cross-references to the rest of the config; raise ValueError("<section>.<field>: …")."""

    @staticmethod
    def _known(config: "Config", field: str, names, among=None, what: str = "in models") -> None:
        known = set(among if among is not None else (m.name for m in config.models))
        for name in names or []:
            if name not in known:
                raise ValueError(f"{field}: {name!r} is not {what} ({', '.join(sorted(known))})")


class ChatTemplateConfig(_Strict):
    """How conversations are fitted to a model's chat template.

    ``system``: ``native`` sends a system message, ``merge`` folds it into the first user message,
    ``auto`` probes the template (transformers, vllm) and falls back to ``merge``.
    ``leading_assistant``: ``native`` lets a conversation start with an assistant message,
    ``user_filler`` puts a user message first (the system text when merged, else ``filler``).
    """

    system: Literal["auto", "native", "merge"] = "auto"
    leading_assistant: Literal["auto", "native", "user_filler"] = "auto"
    filler: str = "(The conversation continues.)"


class SamplingConfig(_Strict):
    temperature: float = Field(0.0, ge=0.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    seed: int | None = 0


class PricesConfig(_Strict):
    """What a model's tokens cost, per million (an endpoint's list price, or what a GPU hour buys): ``usage`` gives
    each run's cost per model and role from them."""

    prompt_per_million: float = Field(ge=0.0)
    completion_per_million: float = Field(ge=0.0)


class ModelConfig(_Strict):
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
    base_url_env: str = "DIALOGBENCH_OPENAI_BASE_URL"
    api_key_env: str = "DIALOGBENCH_OPENAI_API_KEY"
    concurrency: int = Field(8, ge=1)
    timeout_s: float = Field(120.0, gt=0)
    max_retries: int = Field(5, ge=0)
    # Constrained decoding of the formats protocols ask for (see dialogbench/backends/formats.py):
    # auto: local engines enforce regexes and JSON schemas, OpenAI-compatible endpoints JSON schemas.
    structured_outputs: Literal["auto", "off", "json", "all"] = "auto"
    prices: PricesConfig | None = None  # per million tokens: the cost columns of `usage` (not part of any cell key)
    # scripted backend only (tests): the replies, cycled, and a pause per backend call.
    script: list[str] | None = None
    script_delay_s: float = Field(0.0, ge=0.0)

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
        watch_env(self.api_key_env)  # its value (never stored here) is redacted from everything written
        register(*secret_values(self.model_dump(mode="json")))  # a token or password written here: redacted too
        return self

    def fingerprint_fields(self) -> dict[str, Any]:
        """What determines this model's outputs (engine settings and endpoints left out)."""
        return self.model_dump(include={"name", "backend", "weights", "revision", "chat_template",
                                        "sampling", "max_tokens", "context_window", "script"})


def _all_at_least_3(values: list[int]) -> list[int]:
    """N counts utterances, the 2-utterance ChatSEED included: N < 3 would generate nothing."""
    for value in values:
        if value < 3:
            raise ValueError(f"N must be >= 3 (a ChatSEED already has 2 utterances), got {value}")
    return sorted(set(values))


UtteranceCounts = Annotated[list[int], AfterValidator(_all_at_least_3), Field(min_length=1)]


class EloConfig(_Strict):
    """Bootstrap Elo as in the BotChat paper's appendix A, plus Bradley–Terry intervals."""

    init: float = 1000.0
    scale: float = 400.0
    k: float = 32.0
    rounds: int = Field(1000, ge=1)
    repeats: int = Field(10, ge=1)
    seed: int = 0
    bt_rounds: int = Field(200, ge=1)


class ArenaConfig(_Strict):
    """BotChat Arena: two models' dialogues from the same seed, judged side by side in both orders."""

    enabled: bool = False
    n: UtteranceCounts = Field(default_factory=lambda: [8, 16])
    pairs: list[tuple[str, str]] | None = None  # default: every pair of botchat models
    min_human_utterances: int = Field(4, ge=2)  # the paper's 222-seed subset
    limit: int | None = Field(None, ge=1)  # the first K seeds of that subset
    elo: EloConfig = EloConfig()



class GTEvalConfig(_Strict):
    """GTEval: each model's dialogue, cut to the human dialogue's length, against the human one."""

    enabled: bool = False
    min_human_utterances: int = Field(4, ge=3)
    limit: int | None = Field(None, ge=1)


class BotChatConfig(FamilySection):
    OVERRIDES = {"limit": ("limit",), "models": ("models",), "n": ("n",), "judge": ("judge",)}
    MATCHUPS = {"arena.pairs": ("arena", 2)}  # default: every unordered pair of distinct models
    PATHS = ("dataset", "unieval_examples")
    dataset: str = "data_lake/raw/botchat/mutual_test.jsonl"
    unieval_examples: str = "data_lake/raw/botchat/unieval_examples.json"
    models: list[str] | None = None  # default: every model in `models`
    judge: str | None = None
    n: UtteranceCounts = Field(default_factory=lambda: [4, 8, 16])
    limit: int | None = Field(None, ge=1)
    system_prompt: str = Field(default_factory=lambda: __import__("dialogbench.botchat.prompts",
                                                               fromlist=["SYSTEM_PROMPT"]).SYSTEM_PROMPT)
    judge_chunk_size: int = Field(64, ge=1)
    arena: ArenaConfig = ArenaConfig()
    gteval: GTEvalConfig = GTEvalConfig()


    def check(self, config: "Config") -> None:
        self._known(config, "botchat.models", self.models)
        playing = set(self.models or [m.name for m in config.models])
        for i, pair in enumerate(self.arena.pairs or []):
            self._known(config, f"botchat.arena.pairs[{i}]", pair, playing, "one of the botchat models")
            if pair[0] == pair[1]:
                raise ValueError(f"botchat.arena.pairs[{i}]: a model cannot play itself ({pair[0]!r})")
        if not self.judge:
            raise ValueError("botchat.judge: name the judge model (one of judges or models)")
        self._known(config, "botchat.judge", [self.judge], config.model_names(), "a configured model")

    @property
    def n_max(self) -> int:
        """The length every dialogue is generated to: the largest N any enabled protocol asks for
        (GTEval cuts to the human length, at most that)."""
        return max([*self.n, *(self.arena.n if self.arena.enabled else [])])


class MTBench101Config(FamilySection):
    """MT-Bench-101: answer every judged turn given its context, a judge rates each turn 1–10."""

    OVERRIDES = {"limit": ("limit",), "models": ("models",), "judge": ("judge",)}
    PATHS = ("dataset",)
    dataset: str = "data_lake/raw/mtbench101/mtbench101.jsonl"
    models: list[str] | None = None  # default: every model in `models`
    judge: str | None = None  # default: botchat.judge
    tasks: list[str] | None = None  # task codes (CM, SI, …); default: all 13
    limit: int | None = Field(None, ge=1)  # the first K dialogues of each task
    context: Literal["golden", "self"] = "golden"  # golden history (the paper) or the model's own answers
    # golden context: the missing answers of a model per chunk (one task and backend call each); None: all
    # at once. Self context always answers in one chunk (a dialogue's turns need its earlier answers).
    answer_chunk_size: int | None = Field(None, ge=1)
    judge_chunk_size: int = Field(64, ge=1)
    judge_max_tokens: int | None = Field(None, ge=1)  # unset: the judge model's max_tokens

    @field_validator("tasks")
    @classmethod
    def _known_tasks(cls, values: list[str] | None) -> list[str] | None:
        from dialogbench.mtbench101.taxonomy import TASK_CODES

        for value in values or []:
            if value not in TASK_CODES:
                raise ValueError(f"unknown task code {value!r} (expected one of: {', '.join(TASK_CODES)})")
        return values

    def check(self, config: "Config") -> None:
        self._known(config, "mtbench101.models", self.models)
        botchat = config.section("botchat")
        if not (self.judge or (botchat and botchat.judge)):
            raise ValueError("mtbench101.judge: name the judge model (or set botchat.judge)")
        self._known(config, "mtbench101.judge", [self.judge] if self.judge else [], config.model_names(),
                    "a configured model")


class AskGuessConfig(_Strict):
    """Ask-Guess: both roles played by one model, each word in each setting ``trials`` times."""

    enabled: bool = True
    settings: list[Literal["with_description", "without_description"]] = Field(
        default_factory=lambda: ["with_description", "without_description"], min_length=1)
    words: list[str] | None = None  # default: every word of gameeval.words
    limit: int | None = Field(None, ge=1)  # the first K of those words
    trials: int = Field(1, ge=1)  # per word and setting (the paper: 100)
    max_rounds: int = Field(30, ge=1)  # the authors' round limit, the description counting as one (RLE beyond it)
    # how the host tells a guess and a mentioned word: "authors" (their code: substring guess, " word " mention)
    # or "whole_word" (whole word, plural allowed); see dialogbench/gameeval/askguess.py
    matcher: Literal["authors", "whole_word"] = "authors"


class SpyFallConfig(_Strict):
    """SpyFall: ordered (spy model, villager model) pairs, each word pair ``trials`` times."""

    enabled: bool = True
    pairs: list[tuple[str, str]] | None = None  # default: every ordered pair of distinct models (self-play if one)
    limit: int | None = Field(None, ge=1)  # the first K word pairs
    trials: int = Field(1, ge=1)  # per word pair and model pair (the paper plays until 30 finish)
    max_rounds: int = Field(10, ge=1)  # rounds without an end → round_limit (unfinished)
    # a description that says the speaker's own word: false (the authors) the others hear it as said; true: they
    # hear it masked as *** and it is a chat error (dialogbench's rule before spyfall-v3)
    mask_own_word: bool = False


class TofuKingdomConfig(_Strict):
    """TofuKingdom: one model per camp; every assignment ``trials`` times."""

    enabled: bool = True
    # {prince, queen, spy} → model; default: every permutation of three distinct models, or with
    # fewer models every assignment that uses them all (two models: six assignments)
    assignments: list[dict[Literal["prince", "queen", "spy"], str]] | None = None
    trials: int = Field(1, ge=1)  # per assignment (the paper plays until 20 finish)


class GameEvalConfig(FamilySection):
    """GameEval: models play Ask-Guess, SpyFall and TofuKingdom with a rule-driven host; outcomes are the score."""

    OVERRIDES = {"limit": ("askguess.limit", "spyfall.limit"), "models": ("models",)}
    # defaults: SpyFall every ordered pair of distinct models (self-play with one model), TofuKingdom every
    # permutation of three distinct models (with fewer, every assignment seating them all)
    MATCHUPS = {"spyfall.pairs": ("spyfall", 2), "tofukingdom.assignments": ("tofukingdom", 3)}
    PATHS = ("words", "word_pairs")

    def required_files(self) -> tuple[str, ...]:
        return tuple(key for key, game in (("words", self.askguess), ("word_pairs", self.spyfall)) if game.enabled)
    words: str = "data_lake/raw/gameeval/askguess_words.json"
    word_pairs: str = "data_lake/raw/gameeval/spyfall_word_pairs.txt"
    models: list[str] | None = None  # default: every model in `models`
    temperature: float | None = Field(1.0, ge=0.0)  # appendix D: 1.0; null: each model's own sampling
    top_p: float | None = Field(None, gt=0.0, le=1.0)  # null: each model's own
    max_tokens: int | None = Field(None, ge=1)  # null: each model's own
    seed: int = 0  # trial seeds (roles, speaking order, tie-breaks, sampling) derive from it
    concurrency: int = Field(256, ge=1)  # games in flight at once per game (one batch per model per step)
    max_retries: int = Field(2, ge=0)  # re-asks of a move whose backend call failed, then the game ends
    askguess: AskGuessConfig = AskGuessConfig()
    spyfall: SpyFallConfig = SpyFallConfig()
    tofukingdom: TofuKingdomConfig = TofuKingdomConfig()

    def check(self, config: "Config") -> None:
        self._known(config, "gameeval.models", self.models)
        players = set(self.models or [m.name for m in config.models])
        for i, pair in enumerate(self.spyfall.pairs or []):
            self._known(config, f"gameeval.spyfall.pairs[{i}]", pair, players, "one of the gameeval models")
        for i, assignment in enumerate(self.tofukingdom.assignments or []):
            if set(assignment) != {"prince", "queen", "spy"}:
                raise ValueError(f"gameeval.tofukingdom.assignments[{i}]: name a model for each camp: prince, queen, spy")
            self._known(config, f"gameeval.tofukingdom.assignments[{i}]", assignment.values(), players,
                        "one of the gameeval models")


class ReportConfig(_Strict):
    """What the report warns about (README, "The report"): a rate or rating resting on fewer than ``min_cells``
    cells (dialogues, games, comparisons) is marked and listed under its section's Warnings."""

    min_cells: int = Field(10, ge=1)
    # Where `dialogbench serve` serves this lake's reports (http://gpu-box:8765): the run's Prefect artifacts and its
    # failure message link <url>/runs/<run_id>/report.html. Unset: the artifacts say how to serve them.
    url: str | None = Field(None, pattern=r"^https?://[^\s/?#]+(/[^\s?#]*)?$")


class FailOn(_Strict):
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


def family_sections() -> dict[str, type[FamilySection]]:
    """Config section name → its class, for every registered family (built-in and added)."""
    from dialogbench import registry

    return {f.name: f.section for f in registry.families()}


def always_on() -> set[str]:
    """The sections every config has (their defaults when it names none): families registered with ``always``."""
    from dialogbench import registry

    return {f.name for f in registry.families() if f.always}


class Config(_Strict):
    """The run's config: the lake, the models and judges, and one section per family that runs.
    Sections of families registered at run time (``dialogbench.registry.register``) are accepted and
    validated by their family's section class."""

    model_config = ConfigDict(extra="allow", frozen=True)
    lake: str = "data_lake"
    # The board the run publishes to (dialogbench/boards.py): as loaded, the config's own (this field, else the
    # file's stem) or the one CLI overrides give ("demo+limit=4"); --board NAME picks one.
    board: str | None = None
    models: list[ModelConfig] = Field(min_length=1)
    judges: list[ModelConfig] = Field(default_factory=list)
    fail_on: FailOn = FailOn()  # what failed cells do to the run's final state (and the CLI's exit code)
    # SIGTERM / SIGINT: how long the chunk in flight may go on before its calls are abandoned (dialogbench/stopping.py);
    # the process is gone a few seconds later. Under a Prefect worker's 30 s grace before its SIGKILL.
    stop_timeout_s: float = Field(20.0, gt=0, le=3600)
    # The families' sections: present (and not `enabled: false`) means the family runs.
    botchat: BotChatConfig | None = None
    mtbench101: MTBench101Config | None = None
    gameeval: GameEvalConfig | None = None
    report: ReportConfig = ReportConfig()  # the report's warnings (not a family)

    @field_validator("board")
    @classmethod
    def _board_name(cls, value: str | None) -> str | None:
        """A board name; a run's own ('demo+limit=4', from overrides) too, since a loaded config carries it (a YAML
        ``board:`` without '+' is checked by ``load_config``)."""
        from dialogbench.boards import check_name

        return value if value is None else check_name(value, what="board", adhoc=True)

    @model_validator(mode="after")
    def _references(self) -> "Config":
        names = self.model_names()
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate model names: {', '.join(dupes)} (names must be unique across models and judges)")
        sections = family_sections()
        for name, value in list((self.__pydantic_extra__ or {}).items()):
            if name not in sections:
                raise ValueError(f"{name}: unknown section (families: {', '.join(sections)}; or a top-level key: "
                                 f"{', '.join(type(self).model_fields)})")
            self.__pydantic_extra__[name] = value if isinstance(value, sections[name]) else \
                sections[name].model_validate(value or {})
        for name in always_on() - set(self.__pydantic_extra__ or {}) - set(type(self).model_fields):
            self.__pydantic_extra__[name] = sections[name]()
        for name in sections:
            section = self.section(name)
            if section is not None and section.enabled:
                section.check(self)
        # A secret written in any field (a family section's, report.url's) is redacted from everything written,
        # wherever it turns up: an engine's error quoting it, a log line (dialogbench.redact).
        register(*secret_values(self.model_dump(mode="json")))
        return self

    def with_sections(self, *, lake: str, sections: dict) -> "Config":
        """A copy with ``lake`` and family sections replaced (built-in fields and added families alike)."""
        builtin = {k: v for k, v in sections.items() if k in type(self).model_fields}
        copy = self.model_copy(update={"lake": lake, **builtin})
        copy.__pydantic_extra__.update({k: v for k, v in sections.items() if k not in builtin})
        return copy

    def model_names(self) -> list[str]:
        return [m.name for m in [*self.models, *self.judges]]

    def enabled(self, family: str) -> bool:
        section = self.section(family)
        return section is not None and section.enabled

    def section(self, name: str):
        """A family's config section (``botchat``, ``mtbench101``, ``gameeval``, or a registered family's)."""
        return getattr(self, name, None)

    def model(self, name: str) -> ModelConfig:
        for model in [*self.models, *self.judges]:
            if model.name == name:
                return model
        raise KeyError(name)

    def mtbench101_models(self) -> list[ModelConfig]:
        names = self.mtbench101.models or [m.name for m in self.models]
        return [self.model(n) for n in names]

    def mtbench101_judge(self) -> ModelConfig:
        return self.model(self.mtbench101.judge or self.botchat.judge)

    def gameeval_models(self) -> list[ModelConfig]:
        names = self.gameeval.models or [m.name for m in self.models]
        return [self.model(n) for n in names]

    def botchat_models(self) -> list[ModelConfig]:
        """The models BotChat runs (none when it is off)."""
        if not self.enabled("botchat"):
            return []
        names = self.botchat.models or [m.name for m in self.models]
        return [self.model(n) for n in names]


def _format_errors(source: str, error: ValidationError) -> str:
    lines = []
    for item in error.errors():
        loc = ""
        for part in item["loc"]:
            loc += f"[{part}]" if isinstance(part, int) else (f".{part}" if loc else str(part))
        msg = item["msg"].removeprefix("Value error, ")
        lines.append(f"{source}: {loc or '(top level)'}: {msg}")
    return "\n".join(lines)


OVERRIDE_FLAGS = ("limit", "models", "n", "judge")
_MISSING = object()
_NOTED: set[str] = set()  # override notes logged once per process (the CLI and the flow both load the config)


class Overridden(NamedTuple):
    """The YAML mapping with the flags applied, and what the flags turned off or dropped (one note a flag)."""

    raw: dict[str, Any]
    notes: list[str]


def apply_overrides(raw: dict[str, Any], overrides: dict[str, Any] | None, *, source: str = "the config") -> Overridden:
    """Apply CLI flags (or a deployment's parameters) on top of the YAML mapping, in every family section of the
    config that maps the flag to a field (``FamilySection.OVERRIDES``); a flag left None changes nothing.

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
        if key in ("lake", "stop_timeout_s"):  # top-level fields: no section, no board of their own
            raw[key] = value
        elif key == "board":
            continue  # the board is decided once the config is valid (load_config)
        elif key not in OVERRIDE_FLAGS:
            raise ConfigError(f"unknown override {key!r}")
        elif key == "limit" and (_not_int(value) or value < 1):
            raise ConfigError(f"--limit: expected a positive integer, got {value!r}")
        elif key == "models":
            raw, note = _keep_models(raw, list(value), source)
            notes.extend([note] if note else [])
        else:
            for name, section in _sections(raw):
                for path in section.OVERRIDES.get(key, ()):
                    keys = path.split(".")
                    new = value
                    if key == "limit":
                        old = _get(raw[name], keys, _default(section, keys))
                        new = old if _not_int(old) else value if old is None else min(old, value)
                    raw[name] = _set(raw[name], keys, new)
    return Overridden(raw, notes)


def _keep_models(raw: dict, wanted: list[str], source: str) -> tuple[dict, str | None]:
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
    for name, section in _sections(raw):
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


def _sections(raw: dict):
    """(name, section class) of each family section present in ``raw`` as a mapping."""
    return [(name, section) for name, section in family_sections().items() if isinstance(raw.get(name), dict)]


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


def load_config(path: str | os.PathLike, overrides: dict[str, Any] | None = None, *, root: Path | None = None) -> Config:
    """Read (within ``yamlbounds.LIMITS``), override and validate a YAML config; relative paths resolve against
    ``root`` (cwd)."""
    source = str(path)
    try:
        raw = read_yaml_file(path, source) or {}  # within bounds: an alias bomb is refused while it is composed
    except FileNotFoundError:
        raise ConfigError(f"{source}: config file not found") from None
    except OSError as exc:
        raise ConfigError(f"{source}: cannot read the config file ({exc.strerror or exc})") from None
    except ValueError as exc:  # not YAML, not UTF-8, or over a bound: one line naming the file and line
        raise ConfigError(str(exc)) from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: expected a mapping at the top level")
    overridden = apply_overrides(raw, overrides, source=source)
    try:
        config = Config.model_validate(overridden.raw)
        board = run_board(config_path=path, declared=config.board, overrides=overrides)
    except ValidationError as exc:
        raise ConfigError(_blame(source, raw, overrides, exc)) from None
    except ValueError as exc:  # a --board flag that is no board name
        raise ConfigError(f"{source}: {exc}") from None
    for note in overridden.notes:
        if note not in _NOTED:
            _NOTED.add(note)
            log.warning(note)
    return _resolve_paths(config.model_copy(update={"board": board}), root or Path.cwd(), source)


def _blame(source: str, raw: dict, overrides: dict[str, Any] | None, error: ValidationError) -> str:
    """The validation errors, each prefixed with the flags that caused it when the config alone is valid: the
    flag that fails alone (``--n 2``), else every flag given."""
    message = _format_errors(source, error)
    given = {k: v for k, v in (overrides or {}).items() if v is not None and k not in ("lake", "board", "stop_timeout_s")}
    if not given or not _valid(raw):
        return message
    culprits = [k for k in given if not _valid(apply_overrides(raw, {k: given[k]}, source=source).raw)] or list(given)
    flags = ", ".join(f"--{k} " + (",".join(map(str, v)) if isinstance(v, list) else str(v)) for k, v in given.items()
                      if k in culprits)
    return "\n".join(f"{flags}: {line}" for line in message.splitlines())


def _valid(raw: dict) -> bool:
    try:
        Config.model_validate(raw)
    except ValidationError:
        return False
    return True


def _resolve_paths(config: Config, root: Path, source: str) -> Config:
    """Relative paths against ``root``; each enabled family checks that its data files are readable."""
    def resolve(value: str) -> str:
        return value if os.path.isabs(value) else str((root / value).resolve())

    sections = {}
    for name in family_sections():
        section = config.section(name)
        if section is None:
            continue
        section = section.model_copy(update={key: resolve(getattr(section, key)) for key in section.PATHS})
        if section.enabled:
            for key in section.required_files():
                path = Path(getattr(section, key))
                if not path.is_file() or not os.access(path, os.R_OK):
                    raise ConfigError(f"{source}: {name}.{key}: cannot read dataset file {path}")
        sections[name] = section
    return config.with_sections(lake=resolve(config.lake), sections=sections)
