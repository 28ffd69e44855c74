"""bench/omp_threads.py's pieces that need no engine: each variant's environment, the ratios to vLLM's default at the
same load, the table; and the suite's own setting that the benchmark backs (tests/conftest.py)."""

from __future__ import annotations

import os

import pytest

from bench import omp_threads as bench
from tests import conftest


def test_each_variant_sets_only_its_own_thread_settings(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    monkeypatch.setenv("VLLM_CPU_OMP_THREADS_BIND", "0-1")
    bound = bench.variant_env("bound")
    assert "OMP_NUM_THREADS" not in bound and "VLLM_CPU_OMP_THREADS_BIND" not in bound  # vLLM's default
    one = bench.variant_env("unbound1")
    assert (one["OMP_NUM_THREADS"], one["VLLM_CPU_OMP_THREADS_BIND"]) == ("1", "nobind")
    assert str(bench.REPO_ROOT) in one["PYTHONPATH"].split(os.pathsep)


def test_ratios_are_to_the_default_at_the_same_load():
    rows = [{"variant": "bound", "hogs": 0, "gen_s_median": 5.0, "gen_cpu_s_median": 10.0},
            {"variant": "unbound1", "hogs": 0, "gen_s_median": 8.0, "gen_cpu_s_median": 8.0},
            {"variant": "bound", "hogs": 2, "gen_s_median": 20.0, "gen_cpu_s_median": 40.0},
            {"variant": "unbound1", "hogs": 2, "gen_s_median": 13.0, "gen_cpu_s_median": 16.0},
            {"variant": "unbound2", "hogs": 3, "gen_s_median": 1.0, "gen_cpu_s_median": 1.0}]
    rows = bench.with_ratios(rows)
    assert [(r["time_vs_bound"], r["cpu_vs_bound"]) for r in rows] == [
        (1.0, 1.0), (1.6, 0.8), (1.0, 1.0), (0.65, 0.4), (None, None)]
    for row in rows:
        row.update(load_s=1.0, tok_per_s=10.0)
    text = bench.table(rows)
    assert text.splitlines()[0].split()[:2] == ["hogs", "variant"] and len(text.splitlines()) == 2 + len(rows)


def test_unknown_variants_are_refused_by_name():
    with pytest.raises(SystemExit, match="unknown \\['fast'\\]"):
        bench.main(["--variants", "bound,fast", "--hogs", ""])


def test_the_suite_s_workers_run_vllm_on_one_thread_unbound():
    """Under pytest-xdist each engine computes on one unbound thread (a setting of the user's own stays)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        pytest.skip("the setting is for pytest-xdist's workers (make test's first part)")
    for name, value in conftest.XDIST_ENGINE_ENV.items():
        assert os.environ[name] == (conftest.XDIST_ENGINE_ENV_PRESET[name] or value), name
