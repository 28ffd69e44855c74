"""The CLI in a subprocess under an OS memory limit and a timeout: a test of a bound fails, rather than freezing the
machine, when the bound regresses (the process hits RLIMIT_AS and dies, or the timeout kills it)."""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

from tests.e2e.conftest import REPO, cli_env

MEMORY = 1 << 30  # 1 GiB of address space: `validate` of a good config needs about 0.6 GiB


def run_limited(args: list[str], tmp_path: Path, *, memory: int = MEMORY,
                timeout: float = 60) -> tuple[subprocess.CompletedProcess, float]:
    """(the finished process, its wall seconds) of ``python -m dialogbench.cli *args``."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    env = cli_env(tmp_path)  # before the clock starts: seeding its Prefect database is not the CLI's time
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "dialogbench.cli", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout, preexec_fn=limit)
    return done, time.monotonic() - start
