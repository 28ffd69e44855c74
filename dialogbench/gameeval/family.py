"""GameEval as a family: Ask-Guess, SpyFall, TofuKingdom, one stage each (every game of a kind at once)."""

from dialogbench.run.family_spec import Family
from dialogbench.gameeval.legacy import LEGACY
from dialogbench.gameeval.cells import GAMES, PROMPTS
from dialogbench.gameeval.config import GameEvalConfig
from dialogbench.gameeval.explorer import explore
from dialogbench.gameeval.leaderboard import format_gameeval, gameeval_leaderboard
from dialogbench.gameeval.play_stage import PlayGames
from dialogbench.gameeval.report import REPORT
from dialogbench.gameeval.tables import TABLES
from dialogbench.gameeval.words import read_pairs, read_words
from dialogbench.history import Metric
from dialogbench.text.jsonl import data_problems


def stages(config) -> list[PlayGames]:
    return [PlayGames(game) for game in GAMES if getattr(config.gameeval, game).enabled]


def check_data(config) -> list[str]:
    """The word list and word pairs of the games that are on, read as the games will read them."""
    settings = config.gameeval
    return [*(data_problems("gameeval.words", read_words, settings.words) if settings.askguess.enabled else []),
            *(data_problems("gameeval.word_pairs", read_pairs, settings.word_pairs) if settings.spyfall.enabled
              else [])]


def prompts(config) -> dict:
    """Each game's rules version and prompt texts."""
    return {game: [cls.VERSION, PROMPTS[game]] for game, cls in GAMES.items()}


METRICS = (
    Metric(view="gameeval_askguess", name="st", keys=("setting",), n="trials", stages=("gameeval_askguess",),
           units="gameeval_units"),
    Metric(view="gameeval_askguess", name="mean_rounds", keys=("setting",), n="trials", stages=("gameeval_askguess",),
           units="gameeval_units", higher_is_better=False),
    Metric(view="gameeval_spyfall", name="spy_win_rate", model="spy_model", keys=("villager_model",), n="games",
           stages=("gameeval_spyfall",), units="gameeval_units"),
    Metric(view="gameeval_spyfall", name="spy_living_rounds", model="spy_model", keys=("villager_model",), n="games",
           stages=("gameeval_spyfall",), units="gameeval_units"),
    Metric(view="gameeval_tofukingdom", name="win_rate", value="points / nullif(games, 0)", keys=("camp",),
           n="games", stages=("gameeval_tofukingdom",), units="gameeval_units", paired=False),
)

FAMILY = Family(name="gameeval", title="GameEval", section=GameEvalConfig, stages=stages, tables=TABLES,
                sql="gameeval", check_data=check_data,
                leaderboard=gameeval_leaderboard, format_leaderboard=lambda config, rows: format_gameeval(rows),
                report=REPORT, metrics=METRICS, prompts=prompts, explorer=explore, legacy=LEGACY)
