"""GameEval's config section (``gameeval:``): the players, the sampling the appendix sets, and one part per game."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from dialogbench.run.config import FamilySection, Strict

if TYPE_CHECKING:
    from dialogbench.run.config import Config, ModelConfig


class AskGuessConfig(Strict):
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


class SpyFallConfig(Strict):
    """SpyFall: ordered (spy model, villager model) pairs, each word pair ``trials`` times."""

    enabled: bool = True
    pairs: list[tuple[str, str]] | None = None  # default: every ordered pair of distinct models (self-play if one)
    limit: int | None = Field(None, ge=1)  # the first K word pairs
    trials: int = Field(1, ge=1)  # per word pair and model pair (the paper plays until 30 finish)
    max_rounds: int = Field(10, ge=1)  # rounds without an end → round_limit (unfinished)
    # a description that says the speaker's own word: false (the authors) the others hear it as said; true: they
    # hear it masked as *** and it is a chat error (dialogbench's rule before spyfall-v3)
    mask_own_word: bool = False


class TofuKingdomConfig(Strict):
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

    def check(self, config: "Config", families=()) -> None:
        self._known(config, "gameeval.models", self.models)
        players = set(self.models or [m.name for m in config.models])
        for i, pair in enumerate(self.spyfall.pairs or []):
            self._known(config, f"gameeval.spyfall.pairs[{i}]", pair, players, "one of the gameeval models")
        for i, assignment in enumerate(self.tofukingdom.assignments or []):
            if set(assignment) != {"prince", "queen", "spy"}:
                raise ValueError(f"gameeval.tofukingdom.assignments[{i}]: name a model for each camp: prince, queen, spy")
            self._known(config, f"gameeval.tofukingdom.assignments[{i}]", assignment.values(), players,
                        "one of the gameeval models")


def players(config: "Config") -> list["ModelConfig"]:
    """The models that play the games."""
    return config.models_named(config.gameeval.models)
