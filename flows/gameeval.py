"""The GameEval flow: Ask-Guess, SpyFall, TofuKingdom, one after another (each plays all its games at
once, batched per model). Wiring only; a disabled game plays nothing."""

from __future__ import annotations

from prefect import flow

from dialogbench.config import Config
from dialogbench.gameeval.cells import GAMES
from tasks.gameeval import play_games
from tasks.lake import record


@flow(name="gameeval", log_prints=True)
def gameeval(config: Config, run_id: str, config_path: str) -> list[dict]:
    stages = [record(config, run_id, [play_games(config, game, run_id)], config_path) for game in GAMES]
    return [s.to_dict() for s in stages]
