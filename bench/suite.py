"""How long the test suite takes: ``make test`` (the README's test command) run as it is, timed, with the CPU time of
the processes it ran, and each of its two parts' pytest summary (tests passed, failed, ... and their seconds).

    .venv/bin/python bench/suite.py [--workers N] [--log FILE] [--times FILE] [--out bench/results/suite.json]

Run it on a fresh clone after set-up (``make setup``: the target is the suite's time without the install), on a
machine nothing else uses: the suite is CPU-bound, so another process's load lengthens it one for one. It prints the
figures, writes JSON (docs/benchmarks.md shows it: ``bench/page.py``) and exits with ``make test``'s status.

``cpu_s`` is the user + system time of every process ``make test`` waited for, its pytest processes and what they
waited for in turn (engines, CLI runs, servers); a process nobody waited for (one killed with its group) is missing
from it, so it is a lower bound. ``slowest_files`` are the test files with the most CPU seconds of tests (setup, call and
teardown: the test's process and the children it waited for), with their seconds as each test's process saw them
(wall time under the others' load), from ``tests/conftest.py``'s ``DIALOGBENCH_TEST_TIMES`` log: where the suite's
time goes.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run as a script: bench.record from this checkout

from bench.record import ended, record, write  # noqa: E402

# pytest's last line: "==== 2204 passed, 1 skipped, 18 warnings, 10 errors in 1637.94s (0:27:17) ===="
SUMMARY = re.compile(r"^=+ (?P<counts>.+?) in (?P<seconds>[\d.]+)s(?: \([\d:]+\))? =+$", re.M)
COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?)")


def parts(output: str) -> list[dict]:
    """Each pytest run's summary in ``output``, in order: its counts (passed, failed, errors, skipped, deselected,
    ...) and its seconds."""
    found = []
    for match in SUMMARY.finditer(output):
        counts = {word: int(n) for n, word in COUNT.findall(match["counts"])}
        found.append({"counts": counts, "seconds": float(match["seconds"])})
    return found


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def makefile_workers() -> int:
    """The Makefile's default ``WORKERS`` (``WORKERS ?= 3``)."""
    found = re.search(r"^WORKERS \?= (\d+)$", (REPO / "Makefile").read_text(), re.M)
    if found is None:
        raise SystemExit("Makefile: no `WORKERS ?= N` line (make test's number of pytest-xdist workers)")
    return int(found[1])


def slowest_files(times: str, *, top: int = 25) -> list[dict]:
    """The ``top`` test files by CPU seconds of their tests (every phase: the test's process and the children it
    waited for), with their wall seconds, from a ``DIALOGBENCH_TEST_TIMES`` log (a line without CPU counts 0)."""
    seconds: dict[str, float] = defaultdict(float)
    cpu: dict[str, float] = defaultdict(float)
    tests: dict[str, set[str]] = defaultdict(set)
    for line in times.splitlines():
        nodeid, _, duration, *cpu_s = line.split("\t")
        path = nodeid.split("::")[0]
        seconds[path] += float(duration)
        cpu[path] += float(cpu_s[0]) if cpu_s else 0.0
        tests[path].add(nodeid)
    ranked = sorted(seconds, key=lambda path: (cpu[path], seconds[path]), reverse=True)[:top]
    return [{"file": path, "cpu_s": round(cpu[path], 1), "seconds": round(seconds[path], 1),
             "tests": len(tests[path])} for path in ranked]


def run_suite(*, workers: int | None, log: Path, times: Path | None = None) -> dict:
    """``make test`` in the repository root, its output teed to ``log`` and the terminal; its wall and CPU seconds,
    exit status, parts and slowest files. ``times``: where to keep the per-test log (default: a temporary file,
    removed)."""
    argv = ["make", "test", *([f"WORKERS={workers}"] if workers else [])]
    kept = times is not None
    if times is None:
        times = Path(tempfile.mkstemp(prefix="dialogbench-test-times-", suffix=".tsv")[1])
    else:
        times.write_text("")
    cpu, start = children_cpu_s(), time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env={**os.environ, "DIALOGBENCH_TEST_TIMES": str(times)})
        assert proc.stdout is not None
        for line in proc.stdout:
            out.write(line)
            sys.stdout.write(line)
        code = proc.wait()
    wall, cpu = time.perf_counter() - start, children_cpu_s() - cpu
    slowest = slowest_files(times.read_text())
    if not kept:
        times.unlink()
    return {"argv": argv, "workers": workers or makefile_workers(), "exit": code, "wall_s": round(wall, 1),
            "cpu_s": round(cpu, 1), "parts": parts(log.read_text()), "slowest_files": slowest}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workers", type=int, default=None, help="make test's WORKERS (default: the Makefile's)")
    p.add_argument("--log", type=Path, default=Path("/tmp/dialogbench-suite.log"), help="make test's whole output")
    p.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "suite.json")
    p.add_argument("--times", type=Path, default=None,
                   help="keep each test phase's wall and CPU seconds in this file (tab-separated)")
    args = p.parse_args(argv)
    run = record(script=__file__, argv=argv)  # the load average before the suite
    suite = run_suite(workers=args.workers, log=args.log, times=args.times)
    ended(run)
    result = {**run, **suite}
    print(f"\nmake test: exit {suite['exit']}, {suite['wall_s']:.0f} s wall, {suite['cpu_s']:.0f} CPU s")
    for number, part in enumerate(suite["parts"], 1):
        print(f"  part {number}: {part['counts']} in {part['seconds']:.0f} s")
    print("  slowest test files (CPU seconds of their tests, then wall seconds under load):")
    for found in suite["slowest_files"][:10]:
        print(f"    {found['cpu_s']:7.1f} CPU s {found['seconds']:7.1f} s  {found['tests']:4d} tests  {found['file']}")
    write(args.out, result)
    return suite["exit"]


if __name__ == "__main__":
    sys.exit(main())
