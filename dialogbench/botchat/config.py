"""BotChat's config section (``botchat:``): the seeds, the chatbots, N, the judge, and its Arena and GTEval parts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import AfterValidator, Field

from dialogbench.botchat.prompts import SYSTEM_PROMPT
from dialogbench.run.config import FamilySection, Strict

if TYPE_CHECKING:
    from dialogbench.run.config import Config, ModelConfig


def _all_at_least_3(values: list[int]) -> list[int]:
    """N counts utterances, the 2-utterance ChatSEED included: N < 3 would generate nothing."""
    for value in values:
        if value < 3:
            raise ValueError(f"N must be >= 3 (a ChatSEED already has 2 utterances), got {value}")
    return sorted(set(values))


UtteranceCounts = Annotated[list[int], AfterValidator(_all_at_least_3), Field(min_length=1)]


class EloConfig(Strict):
    """Bootstrap Elo as in the BotChat paper's appendix A, plus Bradley–Terry intervals."""

    init: float = 1000.0
    scale: float = 400.0
    k: float = 32.0
    rounds: int = Field(1000, ge=1)
    repeats: int = Field(10, ge=1)
    seed: int = 0
    bt_rounds: int = Field(200, ge=1)


class ArenaConfig(Strict):
    """BotChat Arena: two models' dialogues from the same seed, judged side by side in both orders."""

    enabled: bool = False
    n: UtteranceCounts = Field(default_factory=lambda: [8, 16])
    pairs: list[tuple[str, str]] | None = None  # default: every pair of botchat models
    min_human_utterances: int = Field(4, ge=2)  # the paper's 222-seed subset
    limit: int | None = Field(None, ge=1)  # the first K seeds of that subset
    elo: EloConfig = EloConfig()


class GTEvalConfig(Strict):
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
    # further judges of UniEval, Arena and GTEval: they judge the same cells, for judge agreement only (judge_pairs)
    agreement_judges: list[str] = Field(default_factory=list)
    n: UtteranceCounts = Field(default_factory=lambda: [4, 8, 16])
    limit: int | None = Field(None, ge=1)
    system_prompt: str = SYSTEM_PROMPT
    judge_chunk_size: int = Field(64, ge=1)
    arena: ArenaConfig = ArenaConfig()
    gteval: GTEvalConfig = GTEvalConfig()

    def check(self, config: "Config", families=()) -> None:
        self._known(config, "botchat.models", self.models)
        playing = set(self.models or [m.name for m in config.models])
        for i, pair in enumerate(self.arena.pairs or []):
            self._known(config, f"botchat.arena.pairs[{i}]", pair, playing, "one of the botchat models")
            if pair[0] == pair[1]:
                raise ValueError(f"botchat.arena.pairs[{i}]: a model cannot play itself ({pair[0]!r})")
        if not self.judge:
            raise ValueError("botchat.judge: name the judge model (one of judges or models)")
        self._known(config, "botchat.judge", [self.judge], config.model_names(), "a configured model")
        self._agreement_judges(config, "botchat.agreement_judges", self.agreement_judges, self.judge)

    @property
    def n_max(self) -> int:
        """The length every dialogue is generated to: the largest N any enabled protocol asks for
        (GTEval cuts to the human length, at most that)."""
        return max([*self.n, *(self.arena.n if self.arena.enabled else [])])


def chatbots(config: "Config") -> list["ModelConfig"]:
    """The models BotChat runs (none when it is off)."""
    return config.models_named(config.botchat.models) if config.enabled("botchat") else []
