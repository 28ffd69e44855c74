"""MT-Bench-101's config section (``mtbench101:``): the dialogues, the answering models, the judge, the context."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator

from dialogbench.run.config import FamilySection
from dialogbench.mtbench101.taxonomy import TASK_CODES

if TYPE_CHECKING:
    from dialogbench.run.config import Config, ModelConfig


class MTBench101Config(FamilySection):
    """MT-Bench-101: answer every judged turn given its context, a judge rates each turn 1–10."""

    OVERRIDES = {"limit": ("limit",), "models": ("models",), "judge": ("judge",)}
    PATHS = ("dataset",)
    dataset: str = "data_lake/raw/mtbench101/mtbench101.jsonl"
    models: list[str] | None = None  # default: every model in `models`
    judge: str | None = None  # default: botchat.judge
    # further judges of each turn: they rate the same answers, for judge agreement only (judge_pairs)
    agreement_judges: list[str] = Field(default_factory=list)
    tasks: list[str] | None = None  # task codes (CM, SI, …); default: all 13
    limit: int | None = Field(None, ge=1)  # the first K dialogues of each task
    # the last K dialogues of each task in file order, held out: no run evaluates them, the judge checks' hard
    # known-answer probes are drawn from them alone (mtbench101/probes.py). 10: 130 of the 1,388 held out (a run
    # without a limit evaluates 1,258), a probe pool of 130 items, ten a task; 0: every dialogue evaluated, the probes
    # then drawn from evaluated dialogues (docs/judge-checks.md). At most 60: the smallest task (GR) holds 71.
    reserve_for_probes: int = Field(10, ge=0, le=60)
    context: Literal["golden", "self"] = "golden"  # golden history (the paper) or the model's own answers
    # golden context: the missing answers of a model per chunk (one task and backend call each); None: all
    # at once. Self context always answers in one chunk (a dialogue's turns need its earlier answers).
    answer_chunk_size: int | None = Field(None, ge=1)
    judge_chunk_size: int = Field(64, ge=1)
    judge_max_tokens: int | None = Field(None, ge=1)  # unset: the judge model's max_tokens
    # tokens per answer (OpenCompass's MT-Bench-101 answers with up to 4096), at most half the answering model's
    # context_window (``answer_max_tokens``); null: the model's own max_tokens (the cells answered before this field)
    answer_max_tokens: int | None = Field(4096, ge=1)
    # the reference solution MR and GR are judged against: ``dialogue``, the golden dialogue up to and including the
    # judged turn's golden reply (OpenCompass's ``eval_prompt_construct``), or ``turn``, that reply alone
    reference: Literal["dialogue", "turn"] = "dialogue"

    @field_validator("tasks")
    @classmethod
    def _known_tasks(cls, values: list[str] | None) -> list[str] | None:
        for value in values or []:
            if value not in TASK_CODES:
                raise ValueError(f"unknown task code {value!r} (expected one of: {', '.join(TASK_CODES)})")
        return values

    def check(self, config: "Config", families=()) -> None:
        self._known(config, "mtbench101.models", self.models)
        botchat = config.section("botchat")
        if not (self.judge or (botchat and botchat.judge)):
            raise ValueError("mtbench101.judge: name the judge model (or set botchat.judge)")
        self._known(config, "mtbench101.judge", [self.judge] if self.judge else [], config.model_names(),
                    "a configured model")
        self._agreement_judges(config, "mtbench101.agreement_judges", self.agreement_judges,
                               self.judge or botchat.judge)


def answerers(config: "Config") -> list["ModelConfig"]:
    """The models that answer the dialogues."""
    return config.models_named(config.mtbench101.models)


def agreement_judges(config: "Config") -> list["ModelConfig"]:
    """The judges that rate the same turns for agreement only (``mtbench101.agreement_judges``)."""
    return [config.model(name) for name in config.mtbench101.agreement_judges]


def answer_max_tokens(config: "Config", model: "ModelConfig") -> int:
    """The tokens ``model`` may answer a turn with: ``mtbench101.answer_max_tokens``, clamped to half the model's
    ``context_window`` so the prompt keeps the other half (MT-Bench-101's longest golden context, about 4,000
    characters, fits in far less); the model's own ``max_tokens`` when the field is null."""
    limit = config.mtbench101.answer_max_tokens
    return model.max_tokens if limit is None else min(limit, model.context_window // 2)


def judge(config: "Config") -> "ModelConfig":
    """The judge that rates each turn: ``mtbench101.judge``, else BotChat's."""
    botchat = config.section("botchat")
    return config.model(config.mtbench101.judge or botchat.judge)
