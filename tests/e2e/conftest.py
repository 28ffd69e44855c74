"""End-to-end helpers: run the real CLI (and so the Prefect flow) in a subprocess."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]


class _Shared:
    """The session's one Prefect server, started by the first run that needs it (``shared_api``) while the
    ``shared_prefect_server`` fixture is active: a temporary server costs each `dialogbench run` ~8 s to start."""

    stack: contextlib.ExitStack | None = None
    home: Path | None = None
    api: str | None = None


def shared_api() -> str | None:
    """The session's Prefect server (started on first use), or None outside the e2e session (temporary servers)."""
    if _Shared.stack is None:
        return None
    if _Shared.api is None:
        from tests.e2e.prefect_server import running_server

        env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
        _Shared.api, _ = _Shared.stack.enter_context(running_server(_Shared.home, env))
    return _Shared.api


@pytest.fixture(scope="session", autouse=True)
def shared_prefect_server(tmp_path_factory):
    """Make the e2e runs share one Prefect server (stopped at the session's end); a test that reads Prefect's own
    database or checks the temporary server passes ``temporary=True`` to ``cli_env`` / ``run_cli``."""
    with contextlib.ExitStack() as stack:
        _Shared.stack, _Shared.home = stack, tmp_path_factory.mktemp("shared-prefect")
        try:
            yield
        finally:
            _Shared.stack, _Shared.api = None, None


def polled_glob(root: Path, pattern: str) -> list[Path]:
    """``root.glob(pattern)`` for a loop that polls a running run's lake: a folder the run's preflight made to probe,
    then removed, between the look and the listing reads as nothing found yet (the loop looks again)."""
    try:
        return list(root.glob(pattern))
    except FileNotFoundError:
        return []


def cli_env(tmp_path: Path, *, temporary: bool = False) -> dict[str, str]:
    """The CLI's environment: its own PREFECT_HOME under ``tmp_path``, and the session's Prefect server (or, with
    ``temporary`` or outside the e2e tests, Prefect's temporary local server, as a user without one gets);
    never a user's server."""
    env = dict(os.environ)
    env.update({"PREFECT_HOME": str(tmp_path / "prefect"), "PYTHONUNBUFFERED": "1"})  # no shared Prefect state
    env.pop("PREFECT_API_URL", None)
    api = None if temporary else shared_api()
    if api is not None:
        env.update({"PREFECT_API_URL": api, "PREFECT_SERVER_ANALYTICS_ENABLED": "false"})
    else:  # the temporary server starts on a migrated database
        from tests.e2e.prefect_server import seeded

        seeded(tmp_path / "prefect", env)
    return env


def run_cli(args: list[str], tmp_path: Path, *, timeout: float = 600,
            temporary: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dialogbench.cli", *args], cwd=REPO,
                          env=cli_env(tmp_path, temporary=temporary), capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def scripted_config(tmp_path):
    """Write a config with scripted chatbots and judge (fast, deterministic) into tmp_path."""

    def write(*, limit: int = 6, n=(4, 6), delay: float = 0.0, chunk: int = 64, name: str = "config.yaml",
              comparisons: bool = False, tables: str | None = None) -> Path:
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
            **({"lake_tables": tables} if tables else {}),  # unset: a Delta lake
        }
        path = tmp_path / name
        path.write_text(yaml.safe_dump(config))
        return path

    return write
