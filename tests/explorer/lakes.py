"""A lake every built-in family wrote through its real stages (tests/stage_runner.py: plan, compute, write; no
Prefect), scripted chatbots, players and judge: some judge replies parse and some do not, and one model's line
is markup that must stay text (``EVIL``)."""

from __future__ import annotations

from pathlib import Path

import yaml

from dialogbench.run.registry import load_config, open_lake
from dialogbench.run import registry
from dialogbench.backends import clear_backends
from dialogbench.run.config import Config
from dialogbench.lake import Lake
from tests import stage_runner
from tests.conftest import REPO_ROOT

EVIL = "</script><script>window.pwned = 1</script><!-- <b>bold</b> & \u2028 done"
MOVE = ('{"thought": "I think player2 sounds odd", "speak": "It is something people use daily.", "name": "player2", '
        '"question": 1, "ask": "player3"}')
JUDGE_SCRIPT = ["Choice: Yes\nIndex: 4\nReason: repetitive", "Choice: No\nIndex: None\nReason: fine",
                "I cannot tell.", "Choice: Conversation 1\nReason: the first one repeats itself", "Rating: [[7]]",
                "Choice: Neither\nReason: " + EVIL]


def staged_config(root: Path, *, seeds: int = 6) -> Config:
    data = {
        "lake": str(root / "lake"),
        "models": [{"name": "bot-a", "backend": "scripted", "script": [MOVE, "Sure, see you then.", EVIL]},
                   {"name": "bot-b", "backend": "scripted", "script": ["Okay.", MOVE, "Why not?"]}],
        "judges": [{"name": "judge", "backend": "scripted", "max_tokens": 64, "script": JUDGE_SCRIPT}],
        "botchat": {"judge": "judge", "n": [4, 6], "limit": seeds, "arena": {"enabled": True, "n": [6]},
                    "gteval": {"enabled": True}},
        "mtbench101": {"enabled": True, "judge": "judge", "tasks": ["GR", "CM"], "limit": 1},
        "gameeval": {"enabled": True, "askguess": {"limit": 1, "max_rounds": 3},
                     "spyfall": {"limit": 1, "max_rounds": 2}, "tofukingdom": {"trials": 1}},
        "judge_checks": {"probes": 0},  # the explorer shows the protocols' verdicts; probes are tests/judge_checks'
    }
    root.mkdir(parents=True, exist_ok=True)
    path = root / "config.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_config(path, root=REPO_ROOT)


def staged_lake(root: Path, *, seeds: int = 6) -> Lake:
    """Every stage of every built-in family, in pipeline order, on a fresh lake under ``root``."""
    config = staged_config(root, seeds=seeds)
    clear_backends()
    try:
        for stage in registry.stages(config):
            report = stage_runner.run(config, stage.name, "run-explorer")
            assert report.failed == 0, (stage.name, report)
    finally:
        clear_backends()
    return open_lake(config.lake)
