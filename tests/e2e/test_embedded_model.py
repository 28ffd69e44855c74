"""The embedded model's games replay whatever shares their batch. (The embedded default's whole run, every
protocol on, is checked on the README demo's own run: tests/e2e/test_readme_commands.py.)"""

from __future__ import annotations

import pytest
import yaml

from dialogbench.run.registry import open_lake
from tests.e2e.conftest import REPO

pytestmark = pytest.mark.slow


def test_games_replay_identically_whatever_shares_their_batch(tmp_path):
    """At the paper's temperature 1.0, each move is sampled with its own seed: the same Ask-Guess
    games played all at once and one at a time give the same transcripts."""
    from dialogbench.run.registry import load_config
    from tests import stage_runner as stage

    def play(concurrency: int) -> dict:
        data = yaml.safe_load((REPO / "configs/demo.yaml").read_text())
        data.update(lake=str(tmp_path / f"lake-{concurrency}"), botchat={"enabled": False},
                    mtbench101={"enabled": False},
                    gameeval={"enabled": True, "models": ["smollm2-135m"], "temperature": 1.0, "max_tokens": 12,
                              "concurrency": concurrency, "spyfall": {"enabled": False},
                              "tofukingdom": {"enabled": False},
                              "askguess": {"limit": 3, "max_rounds": 1, "settings": ["without_description"]}})
        path = tmp_path / f"c{concurrency}.yaml"
        path.write_text(yaml.safe_dump(data))
        config = load_config(path, root=REPO)
        assert stage.run_game(config, "askguess", "r").computed == 3
        games = open_lake(config.lake).read("gameeval_games").to_pylist()
        return {g["cell_key"]: [e["raw"] for e in g["transcript"]] for g in games}

    batched, alone = play(3), play(1)
    assert batched == alone
    assert len({tuple(t) for t in batched.values()}) == 3  # the trials differ from each other
