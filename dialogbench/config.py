"""Run configuration: YAML in, validated objects out; every error names its file and field."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from dialogbench.botchat.prompts import SYSTEM_PROMPT

BACKENDS = ("transformers", "vllm", "openai", "scripted")


class ConfigError(ValueError):
    """A configuration problem found before any compute; the message names the file and field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


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


class BotChatConfig(_Strict):
    enabled: bool = True
    dataset: str = "data_lake/raw/botchat/mutual_test.jsonl"
    unieval_examples: str = "data_lake/raw/botchat/unieval_examples.json"
    models: list[str] | None = None  # default: every model in `models`
    judge: str | None = None
    n: UtteranceCounts = Field(default_factory=lambda: [4, 8, 16])
    limit: int | None = Field(None, ge=1)
    system_prompt: str = SYSTEM_PROMPT
    judge_chunk_size: int = Field(64, ge=1)
    arena: ArenaConfig = ArenaConfig()
    gteval: GTEvalConfig = GTEvalConfig()


    @property
    def n_max(self) -> int:
        """The length every dialogue is generated to: the largest N any enabled protocol asks for
        (GTEval cuts to the human length, at most that)."""
        return max([*self.n, *(self.arena.n if self.arena.enabled else [])])


class MTBench101Config(_Strict):
    """MT-Bench-101: answer every judged turn given its context, a judge rates each turn 1–10."""

    enabled: bool = False
    dataset: str = "data_lake/raw/mtbench101/mtbench101.jsonl"
    models: list[str] | None = None  # default: every model in `models`
    judge: str | None = None  # default: botchat.judge
    tasks: list[str] | None = None  # task codes (CM, SI, …); default: all 13
    limit: int | None = Field(None, ge=1)  # the first K dialogues of each task
    context: Literal["golden", "self"] = "golden"  # golden history (the paper) or the model's own answers
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


class AskGuessConfig(_Strict):
    """Ask-Guess: both roles played by one model, each word in each setting ``trials`` times."""

    enabled: bool = True
    settings: list[Literal["with_description", "without_description"]] = Field(
        default_factory=lambda: ["with_description", "without_description"], min_length=1)
    words: list[str] | None = None  # default: every word of gameeval.words
    limit: int | None = Field(None, ge=1)  # the first K of those words
    trials: int = Field(1, ge=1)  # per word and setting (the paper: 100)
    max_rounds: int = Field(30, ge=1)  # the paper's round limit (RLE beyond it)


class SpyFallConfig(_Strict):
    """SpyFall: ordered (spy model, villager model) pairs, each word pair ``trials`` times."""

    enabled: bool = True
    pairs: list[tuple[str, str]] | None = None  # default: every ordered pair of distinct models (self-play if one)
    limit: int | None = Field(None, ge=1)  # the first K word pairs
    trials: int = Field(1, ge=1)  # per word pair and model pair (the paper plays until 30 finish)
    max_rounds: int = Field(10, ge=1)  # rounds without an end → round_limit (unfinished)


class TofuKingdomConfig(_Strict):
    """TofuKingdom: one model per camp; every assignment ``trials`` times."""

    enabled: bool = True
    # {prince, queen, spy} → model; default: every permutation of three distinct models, or with
    # fewer models every assignment that uses them all (two models: six assignments)
    assignments: list[dict[Literal["prince", "queen", "spy"], str]] | None = None
    trials: int = Field(1, ge=1)  # per assignment (the paper plays until 20 finish)


class GameEvalConfig(_Strict):
    """GameEval: models play Ask-Guess, SpyFall and TofuKingdom with a rule-driven host; outcomes are the score."""

    enabled: bool = False
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


class Config(_Strict):
    lake: str = "data_lake"
    models: list[ModelConfig] = Field(min_length=1)
    judges: list[ModelConfig] = Field(default_factory=list)
    botchat: BotChatConfig = BotChatConfig()
    mtbench101: MTBench101Config = MTBench101Config()
    gameeval: GameEvalConfig = GameEvalConfig()

    @model_validator(mode="after")
    def _references(self) -> "Config":
        names = [m.name for m in [*self.models, *self.judges]]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate model names: {', '.join(dupes)} (names must be unique across models and judges)")
        known = {m.name for m in self.models}
        for name in self.botchat.models or []:
            if name not in known:
                raise ValueError(f"botchat.models: {name!r} is not in models ({', '.join(sorted(known))})")
        playing = set(self.botchat.models or known)
        for i, pair in enumerate(self.botchat.arena.pairs or []):
            for name in pair:
                if name not in playing:
                    raise ValueError(f"botchat.arena.pairs[{i}]: {name!r} is not one of the botchat models "
                                     f"({', '.join(sorted(playing))})")
            if pair[0] == pair[1]:
                raise ValueError(f"botchat.arena.pairs[{i}]: a model cannot play itself ({pair[0]!r})")
        for name in self.mtbench101.models or []:
            if name not in known:
                raise ValueError(f"mtbench101.models: {name!r} is not in models ({', '.join(sorted(known))})")
        for name in self.gameeval.models or []:
            if name not in known:
                raise ValueError(f"gameeval.models: {name!r} is not in models ({', '.join(sorted(known))})")
        players = set(self.gameeval.models or known)
        for i, pair in enumerate(self.gameeval.spyfall.pairs or []):
            for name in pair:
                if name not in players:
                    raise ValueError(f"gameeval.spyfall.pairs[{i}]: {name!r} is not one of the gameeval models "
                                     f"({', '.join(sorted(players))})")
        for i, assignment in enumerate(self.gameeval.tofukingdom.assignments or []):
            if set(assignment) != {"prince", "queen", "spy"}:
                raise ValueError(f"gameeval.tofukingdom.assignments[{i}]: name a model for each camp: prince, queen, spy")
            for name in assignment.values():
                if name not in players:
                    raise ValueError(f"gameeval.tofukingdom.assignments[{i}]: {name!r} is not one of the gameeval "
                                     f"models ({', '.join(sorted(players))})")
        everyone = {m.name for m in [*self.judges, *self.models]}
        if self.mtbench101.enabled and not (self.mtbench101.judge or self.botchat.judge):
            raise ValueError("mtbench101.judge: name the judge model (or set botchat.judge)")
        if self.mtbench101.judge and self.mtbench101.judge not in everyone:
            raise ValueError(f"mtbench101.judge: {self.mtbench101.judge!r} is not a configured model")
        if self.botchat.enabled:
            judges = {m.name for m in [*self.judges, *self.models]}
            if not self.botchat.judge:
                raise ValueError("botchat.judge: name the judge model (one of judges or models)")
            if self.botchat.judge not in judges:
                raise ValueError(f"botchat.judge: {self.botchat.judge!r} is not a configured model ({', '.join(sorted(judges))})")
        return self

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
        if not self.botchat.enabled:
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


def apply_overrides(raw: dict[str, Any], overrides: dict[str, Any] | None) -> dict[str, Any]:
    """Apply CLI flags (``limit``, ``models``, ``n``, ``judge``, ``lake``) on top of the YAML mapping."""
    raw = {**raw, "botchat": dict(raw.get("botchat") or {})}
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if key == "lake":
            raw["lake"] = value
        elif key in ("limit", "models", "n", "judge"):
            raw["botchat"][key] = value
        else:
            raise ConfigError(f"unknown override {key!r}")
    return raw


def load_config(path: str | os.PathLike, overrides: dict[str, Any] | None = None, *, root: Path | None = None) -> Config:
    """Read, override and validate a YAML config; relative paths resolve against ``root`` (cwd)."""
    source = str(path)
    try:
        raw = yaml.safe_load(Path(path).read_text()) or {}
    except FileNotFoundError:
        raise ConfigError(f"{source}: config file not found") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: expected a mapping at the top level")
    try:
        config = Config.model_validate(apply_overrides(raw, overrides))
    except ValidationError as exc:
        raise ConfigError(_format_errors(source, exc)) from None
    return _resolve_paths(config, root or Path.cwd(), source)


def _resolve_paths(config: Config, root: Path, source: str) -> Config:
    def resolve(value: str) -> str:
        return value if os.path.isabs(value) else str((root / value).resolve())

    botchat = config.botchat.model_copy(update={
        "dataset": resolve(config.botchat.dataset),
        "unieval_examples": resolve(config.botchat.unieval_examples),
    })
    if botchat.enabled:
        for key in ("dataset", "unieval_examples"):
            path = Path(getattr(botchat, key))
            if not path.is_file() or not os.access(path, os.R_OK):
                raise ConfigError(f"{source}: botchat.{key}: cannot read dataset file {path}")
    mtbench101 = config.mtbench101.model_copy(update={"dataset": resolve(config.mtbench101.dataset)})
    if mtbench101.enabled and not Path(mtbench101.dataset).is_file():
        raise ConfigError(f"{source}: mtbench101.dataset: cannot read dataset file {mtbench101.dataset}")
    gameeval = config.gameeval.model_copy(update={"words": resolve(config.gameeval.words),
                                                  "word_pairs": resolve(config.gameeval.word_pairs)})
    if gameeval.enabled:
        for key, game in (("words", gameeval.askguess), ("word_pairs", gameeval.spyfall)):
            path = Path(getattr(gameeval, key))
            if game.enabled and not path.is_file():
                raise ConfigError(f"{source}: gameeval.{key}: cannot read dataset file {path}")
    return config.model_copy(update={"lake": resolve(config.lake), "botchat": botchat, "mtbench101": mtbench101,
                                     "gameeval": gameeval})
