"""What every bench result says about how it was made: which bench, the command that produced it, when (UTC) and on
what machine. ``bench/page.py`` builds docs/benchmarks.md from these fields of each ``bench/results/*.json``, so a
figure on that page always carries its machine, date and command, and nobody has to type them by hand.

Stdlib only, so a bench can import it before anything heavy (and a bench timing another checkout's code through
PYTHONPATH still records itself)."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import shlex
import sys
from pathlib import Path
from typing import Sequence


def command(*, script: str, argv: Sequence[str] | None = None) -> str:
    """The command line that gives this result again from the repository root: ``.venv/bin/python bench/<script>``
    and the arguments the bench parsed (``sys.argv[1:]`` when ``argv`` is None, as argparse reads them)."""
    args = list(sys.argv[1:] if argv is None else argv)
    return shlex.join([".venv/bin/python", f"bench/{Path(script).name}", *args])


def machine() -> dict:
    """The facts that make two timings comparable or not: cores, load average (1, 5, 15 min) when the bench
    started, Python and the platform. A bench adds what it depends on (numpy, torch, …) beside them."""
    return {"nproc": os.cpu_count(), "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
            "python": platform.python_version(), "platform": platform.platform()}


def utc_now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def record(*, script: str, argv: Sequence[str] | None = None) -> dict:
    """The fields docs/benchmarks.md needs of every result, taken when the bench starts (so the load average is the
    one its work met): ``bench`` (the script's name), ``command``, ``utc`` and ``machine``. A bench merges its own
    machine facts into ``machine`` and may add ``machine["loadavg_at_end"]``."""
    return {"bench": Path(script).stem, "command": command(script=script, argv=argv), "utc": utc_now(),
            "machine": machine()}


def ended(run: dict) -> dict:
    """``run`` (what ``record`` gave) with the load average as the bench ends (``machine["loadavg_at_end"]``), which
    docs/benchmarks.md shows beside the one at its start."""
    run["machine"]["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    return run


def write(out: Path, result: dict) -> None:
    """Write a bench's ``result`` to ``out`` (its folder made) as indented JSON, and say where."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
