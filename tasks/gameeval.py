"""GameEval tasks: play every missing game of one game (batched steps across games, per model)."""

from prefect import task
from prefect.cache_policies import NO_CACHE

from dialogbench.config import Config
from dialogbench.gameeval import stage
from dialogbench.runs import StageReport


@task(name="play-games", task_run_name="play-{game}", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=10)
def play_games(config: Config, game: str, run_id: str) -> StageReport:
    """Plan, play and store the games of ``game`` the config asks for that the lake lacks."""
    return stage.run_game(config, game, run_id)
