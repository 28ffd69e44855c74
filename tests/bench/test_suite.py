"""bench/suite.py says where the suite's time goes: each test phase's seconds, logged once by the process that
reports it (pytest-xdist's controller, not its workers too), summed per test file and ranked."""

from __future__ import annotations

import os
import subprocess
import sys

from bench.suite import slowest_files
from tests.conftest import REPO_ROOT, TEST_TIMES


def test_files_are_ranked_by_the_cpu_seconds_of_their_tests():
    log = "\n".join(["tests/a.py::t1\tsetup\t1.0\t4.0", "tests/a.py::t1\tcall\t2.0\t1.5",
                     "tests/b.py::t1\tcall\t5.0\t0.5", "tests/a.py::t2\tcall\t0.5\t0.5",
                     "tests/c.py::t[x]\tcall\t0.1\t0.1", "tests/d.py::t\tcall\t9.0"])  # an old line: no CPU
    assert slowest_files(log, top=3) == [{"file": "tests/a.py", "cpu_s": 6.0, "seconds": 3.5, "tests": 2},
                                         {"file": "tests/b.py", "cpu_s": 0.5, "seconds": 5.0, "tests": 1},
                                         {"file": "tests/c.py", "cpu_s": 0.1, "seconds": 0.1, "tests": 1}]


def test_each_phase_of_each_test_is_logged_once_under_xdist(tmp_path):
    (tmp_path / "test_three.py").write_text("import pytest\n\n@pytest.mark.parametrize('x', [1, 2, 3])\n"
                                            "def test_x(x):\n    assert x\n")
    (tmp_path / "conftest.py").write_text("from tests.conftest import (  # noqa: F401\n"
                                          "    pytest_configure, pytest_runtest_logreport, pytest_runtest_makereport,\n"
                                          "    pytest_runtest_protocol)\n")
    times = tmp_path / "times.tsv"
    env = {**os.environ, TEST_TIMES: str(times), "PYTHONPATH": str(REPO_ROOT)}  # (PYTEST_XDIST_WORKER too, in make test)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]
    rows = [line.split("\t") for line in times.read_text().splitlines()]
    assert sorted((r[0].split("::")[-1], r[1]) for r in rows) == sorted(
        (f"test_x[{x}]", when) for x in (1, 2, 3) for when in ("setup", "call", "teardown"))
    assert all(float(r[3]) >= 0 for r in rows)  # each phase's CPU seconds, from the worker that ran it


def test_make_test_hands_out_the_longest_files_first(tmp_path):
    """Part 1's workers take files in collection order, where ``START_FIRST`` (the README demo's, the dispatch runs)
    leads: xdist's default order (most tests first) started these few-test files last, and the suite waited on them."""
    import re

    from tests.conftest import START_FIRST

    parallel = re.search(r"^PARALLEL := (.+)$", (REPO_ROOT / "Makefile").read_text(), re.M)
    assert parallel and "--dist loadfile" in parallel[1] and "--no-loadscope-reorder" in parallel[1]
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "-m", "not alone", "tests/e2e", "tests/text"], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=300)
    files = list(dict.fromkeys(line.split("::")[0] for line in done.stdout.splitlines() if "::" in line))
    e2e_first = [f"tests/{name}" for name in START_FIRST if name.startswith("e2e/")]
    assert files[:len(e2e_first)] == e2e_first, files[:8]
