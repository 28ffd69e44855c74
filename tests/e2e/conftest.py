"""End-to-end helpers: run the real CLI (and so the Prefect flow) in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]


def cli_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"PREFECT_HOME": str(tmp_path / "prefect"), "PYTHONUNBUFFERED": "1"})  # no shared Prefect state
    env.pop("PREFECT_API_URL", None)  # the temporary local API, never a user's server
    return env


def run_cli(args: list[str], tmp_path: Path, *, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dialogbench.cli", *args], cwd=REPO, env=cli_env(tmp_path),
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def scripted_config(tmp_path):
    """Write a config with scripted chatbots and judge (fast, deterministic) into tmp_path."""

    def write(*, limit: int = 6, n=(4, 6), delay: float = 0.0, chunk: int = 64, name: str = "config.yaml",
              comparisons: bool = False) -> Path:
        config = {
            "lake": str(tmp_path / "lake"),
            "models": [
                {"name": "bot-a", "backend": "scripted", "script": ["Sure, see you then.", "Sounds good to me."],
                 "script_delay_s": delay},
                {"name": "bot-b", "backend": "scripted", "script": ["Okay.", "Why not?"], "script_delay_s": delay},
            ],
            "judges": [{"name": "judge", "backend": "scripted", "script_delay_s": delay,
                        "script": ["Choice: Yes\nIndex: 4\nReason: repetitive", "Choice: No\nIndex: None\nReason: fine",
                                   "I cannot tell.", "Choice: Conversation 1\nReason: the first one repeats itself"]}],
            "botchat": {"judge": "judge", "n": list(n), "limit": limit, "judge_chunk_size": chunk,
                        "arena": {"enabled": comparisons, "n": [max(n)], "elo": {"rounds": 50, "repeats": 2}},
                        "gteval": {"enabled": comparisons},
                        "dataset": str(REPO / "data_lake/raw/botchat/mutual_test.jsonl"),
                        "unieval_examples": str(REPO / "data_lake/raw/botchat/unieval_examples.json")},
            # the judge's replies are unreadable on purpose for one protocol or another (its UniEval lines are
            # garbage to GTEval and the other way round): keep its numbers measured here, no probes asked
            "judge_checks": {"max_unparsed": 0.9, "probes": 0},
        }
        path = tmp_path / name
        path.write_text(yaml.safe_dump(config))
        return path

    return write
