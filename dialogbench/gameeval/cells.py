"""The cells a config asks for: one per (game, item, setting, trial, role → model assignment).

A cell's key covers what decides the game: the game's rules and prompt texts, the item, setting and
trial, the trial seed, every role's model config, the sampling games use and the limits. The trial
seed depends on the item and trial only, so every model pair meets the same draws (roles, speaking
order) on a trial — common random numbers for the comparison.
"""

from __future__ import annotations

import itertools

from dialogbench.backends import Sampling, sampling_for
from dialogbench.backends.formats import enforced_kinds
from dialogbench.run.config import Config, ModelConfig
from dialogbench.gameeval import askguess, spyfall, tofukingdom
from dialogbench.gameeval.config import players
from dialogbench.gameeval.game import GameSetup
from dialogbench.gameeval.words import read_pairs, read_words
from dialogbench.cells.keys import fingerprint, model_fingerprint

PROTOCOL = "gameeval"
GAMES = {"askguess": askguess.AskGuess, "spyfall": spyfall.SpyFall, "tofukingdom": tofukingdom.TofuKingdom}
PROMPTS = {name: [v for k, v in vars(module).items() if k.isupper() and isinstance(v, str)]
           for name, module in (("askguess", askguess), ("spyfall", spyfall), ("tofukingdom", tofukingdom))}


def game_sampling(config: Config, model: ModelConfig) -> Sampling:
    """The model's sampling with the games' overrides (the paper samples at temperature 1.0)."""
    settings, own = config.gameeval, sampling_for(model)
    return Sampling(temperature=own.temperature if settings.temperature is None else settings.temperature,
                    top_p=own.top_p if settings.top_p is None else settings.top_p,
                    max_tokens=settings.max_tokens or own.max_tokens, seed=own.seed)


def limits(config: Config, game: str) -> dict:
    settings = config.gameeval
    extra = {"max_rounds": getattr(settings, game).max_rounds} if game != "tofukingdom" else {}
    if game == "askguess":
        extra["matcher"] = settings.askguess.matcher
    if game == "spyfall":
        extra["mask_own_word"] = settings.spyfall.mask_own_word
    return {"max_retries": settings.max_retries, **extra}


def trial_seed(base: int, game: str, item: str, setting: str, trial: int) -> int:
    return int(fingerprint("trial", base, game, item, setting, trial)[:8], 16) & 0x7FFFFFFF


def _setup(config: Config, game: str, item: str, setting: str, trial: int, item_id: str,
           assignment: dict[str, str]) -> GameSetup:
    seed = trial_seed(config.gameeval.seed, game, item, setting, trial)
    keys = {role: [model_fingerprint(config.model(name)), game_sampling(config, config.model(name)),
                   *_formats_key(game, config.model(name))] for role, name in assignment.items()}
    key = fingerprint(PROTOCOL, GAMES[game].VERSION, PROMPTS[game], game, item, setting, trial, seed, keys,
                      limits(config, game))
    return GameSetup(key, game, item_id, item, setting, trial, seed, dict(assignment))


def _formats_key(game: str, model: ModelConfig) -> list[str]:
    """The game's move shapes, when the model's backend holds its moves to them (else nothing, so the
    keys of free-text games are what they were)."""
    formats = GAMES[game].FORMATS
    return [formats] if formats and "json" in enforced_kinds(model) else []


def spyfall_pairs(config: Config) -> list[tuple[str, str]]:
    names = [m.name for m in players(config)]
    if config.gameeval.spyfall.pairs:
        return [tuple(p) for p in config.gameeval.spyfall.pairs]
    return [(a, b) for a in names for b in names if a != b] or [(names[0], names[0])]


def tofukingdom_assignments(config: Config) -> list[dict[str, str]]:
    if config.gameeval.tofukingdom.assignments:
        return [dict(a) for a in config.gameeval.tofukingdom.assignments]
    names, camps = [m.name for m in players(config)], ("prince", "spy", "queen")
    if len(names) >= 3:
        chosen = itertools.permutations(names, 3)
    else:
        chosen = (c for c in itertools.product(names, repeat=3) if set(c) == set(names))
    return [dict(zip(camps, c)) for c in chosen]


def game_models(config: Config, game: str) -> list[ModelConfig]:
    """The models ``game`` seats (what the pool keeps loaded while it plays)."""
    if game == "spyfall":
        names = [n for pair in spyfall_pairs(config) for n in pair]
    elif game == "tofukingdom":
        names = [n for assignment in tofukingdom_assignments(config) for n in assignment.values()]
    else:
        names = [m.name for m in players(config)]
    return [config.model(n) for n in dict.fromkeys(names)]


def plan_setups(config: Config, game: str) -> list[GameSetup]:
    """Every cell of ``game`` the config asks for, in a stable order (items, then assignments, then trials)."""
    settings = config.gameeval
    if not settings.enabled or not getattr(settings, game).enabled:
        return []
    cells = []
    if game == "askguess":
        words = read_words(settings.words)
        if settings.askguess.words:
            unknown = sorted(set(settings.askguess.words) - set(words))
            if unknown:
                raise ValueError(f"gameeval.askguess.words: not in {settings.words}: {', '.join(unknown)}")
            words = [w for w in words if w in set(settings.askguess.words)]
        for word in words[: settings.askguess.limit]:
            for setting in settings.askguess.settings:
                for model in players(config):
                    for trial in range(settings.askguess.trials):
                        cells.append(_setup(config, game, word, setting, trial, f"{word}/{setting}/{trial}",
                                            {"questioner": model.name, "answerer": model.name}))
    elif game == "spyfall":
        for pair in read_pairs(settings.word_pairs)[: settings.spyfall.limit]:
            for spy, villager in spyfall_pairs(config):
                for trial in range(settings.spyfall.trials):
                    cells.append(_setup(config, game, pair.item, "default", trial, f"{pair.item}/{trial}",
                                        {"spy": spy, "villager": villager}))
    else:
        for assignment in tofukingdom_assignments(config):
            for trial in range(settings.tofukingdom.trials):
                cells.append(_setup(config, game, "", "default", trial, f"trial{trial}", assignment))
    return cells
