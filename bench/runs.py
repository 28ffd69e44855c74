"""What the benches that time whole runs share: ``dialogbench run`` in a subprocess, on Prefect's temporary local API
(its own PREFECT_HOME), with the run's ``--json`` summary."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def dialogbench_run(config: Path, lake: Path, home: Path, out: Path, *, tail: int) -> tuple[dict, int, float]:
    """``dialogbench run --config config --lake lake --json out`` from the repository root, with ``home`` as its
    PREFECT_HOME and never a user's Prefect server; returns the summary, the exit code and the wall seconds. Exits with
    the last ``tail`` characters of its stderr unless the run completed (exit 0, or 4: failed cells or a judge check
    fail a complete run)."""
    env = {**os.environ, "PREFECT_HOME": str(home)}
    env.pop("PREFECT_API_URL", None)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "dialogbench.cli", "run", "--config", str(config), "--lake", str(lake),
                           "--json", str(out)], cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 4):
        raise SystemExit(f"dialogbench run failed (exit {done.returncode}):\n{done.stderr[-tail:]}")
    return json.loads(out.read_text()), done.returncode, wall
