"""GameEval as a family: Ask-Guess, SpyFall, TofuKingdom, one stage each (every game of a kind at once)."""

from dialogbench.config import GameEvalConfig
from dialogbench.family import Family
from dialogbench.gameeval.cells import GAMES
from dialogbench.gameeval.leaderboard import format_gameeval, gameeval_leaderboard
from dialogbench.gameeval.report import REPORT
from dialogbench.gameeval.stage import PlayGames
from dialogbench.gameeval.tables import TABLES


def stages(config) -> list[PlayGames]:
    return [PlayGames(game) for game in GAMES if getattr(config.gameeval, game).enabled]


FAMILY = Family(name="gameeval", title="GameEval", section=GameEvalConfig, stages=stages, tables=TABLES,
                leaderboard=gameeval_leaderboard, format_leaderboard=lambda config, rows: format_gameeval(rows),
                report=REPORT)
