"""Shared fixtures: a tmp lake, scripted-model configs written to tmp_path, and the pipeline run
through ``dialogbench.botchat.stages`` (what the Prefect tasks call), without Prefect."""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from dialogbench.backends import clear_backends
from dialogbench.config import Config
from dialogbench.registry import load_config
from dialogbench.botchat.config import chatbots

REPO_ROOT = Path(__file__).resolve().parents[1]

# Under pytest-xdist (make test) the workers share this machine's 2 cores, and each vLLM-CPU engine, the tests' own and
# those of the CLI runs they start, computes on one OpenMP thread, unbound. vLLM's default binds one thread to each
# core, and the two wait for each other at every op: beside one busy process (another worker) its generation took
# 17.2 s against 8.8 s on one unbound thread, for 2.5 times the CPU (bench/omp_threads.py, 2026-11-27; on a quiet
# machine the default is 1.7 times faster, so the demo keeps it). A setting of the user's own stays; the `alone`
# tests (one at a time, no xdist) run vLLM's default.
XDIST_ENGINE_ENV = {"VLLM_CPU_OMP_THREADS_BIND": "nobind", "OMP_NUM_THREADS": "1"}
XDIST_ENGINE_ENV_PRESET = {name: os.environ.get(name) for name in XDIST_ENGINE_ENV}  # what the user had set
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _name, _value in XDIST_ENGINE_ENV.items():
        os.environ.setdefault(_name, _value)
DATASET = REPO_ROOT / "data_lake" / "raw" / "botchat" / "mutual_test.jsonl"
EXAMPLES = REPO_ROOT / "data_lake" / "raw" / "botchat" / "unieval_examples.json"

# Judge replies, cycled: pass at N <= 4 (first AI utterance is the 5th), pass always, unparseable,
# fail at every N >= 3.
VERDICT_YES_5 = "Choice: Yes\nIndex: 5\nReason: the fifth chat is far too long."
VERDICT_NO = "Choice: No\nIndex: None\nReason: The conversation is smooth."
VERDICT_GARBAGE = "I am not sure what you are asking me to do here."
VERDICT_YES_3 = "**Choice:** Yes\n**Index:** 3\n**Reason:** a sudden change of topic."
JUDGE_SCRIPT = [VERDICT_YES_5, VERDICT_NO, VERDICT_GARBAGE, VERDICT_YES_3]


def chatbot(name: str, script: list[str] | None = None, **extra: Any) -> dict:
    return {"name": name, "backend": "scripted", "script": script or [f"{name} says hi ({{n}} before me)"], **extra}


def config_dict(lake: Path, *, models: list[dict] | None = None, judge_script: list[str] | None = None,
                judge_extra: dict | None = None, n: list[int] | None = None, limit: int | None = 3,
                **botchat: Any) -> dict:
    """A valid config: two scripted chatbots, a scripted judge, the vendored dataset, ``lake`` in tmp."""
    data = {
        "lake": str(lake),
        "models": models if models is not None else [chatbot("bot-a"), chatbot("bot-b")],
        "judges": [{"name": "judge", "backend": "scripted", "script": judge_script or JUDGE_SCRIPT,
                    "max_tokens": 64, **(judge_extra or {})}],
        "botchat": {"judge": "judge", "n": n or [4, 8], **({"limit": limit} if limit else {}), **botchat},
        # The scripted judge answers unreadably on purpose (a quarter or more of JUDGE_SCRIPT, and YES_5 past a
        # short dialogue): its numbers stay measured here, and it is asked no known-answer probes; tests/judge_checks
        # checks the thresholds and the probes.
        "judge_checks": {"max_unparsed": 0.6, "probes": 0},
    }
    return data


# Files that take longest (minutes: the README's demo on the real model, the dispatch runs): started first when make
# test hands files to its workers (pytest-xdist, --dist loadfile, in collection order), so none starts last.
START_FIRST = ("e2e/test_readme_commands.py", "e2e/test_dispatch_box.py", "e2e/test_dispatch.py",
               "e2e/test_kill_resume_vllm.py", "e2e/test_lake_integrity.py", "e2e/test_lake_files.py")


def pytest_collection_modifyitems(config, items):
    """Collection order: the files of ``START_FIRST`` in that order, then the other files with a slow test, then the
    rest (stable within each; the same order in every xdist worker)."""
    files = {item: item.path.relative_to(REPO_ROOT / "tests").as_posix() for item in items}
    slow = {files[item] for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: (0, START_FIRST.index(files[item])) if files[item] in START_FIRST
               else (1 if files[item] in slow else 2, 0))


@pytest.fixture(autouse=True)
def _fresh_backends():
    """Backends are cached per process (by config); a scripted one also keeps its place in its script."""
    clear_backends()
    yield
    clear_backends()


@pytest.fixture
def lake_dir(tmp_path: Path) -> Path:
    return tmp_path / "lake"


@pytest.fixture
def config_file(tmp_path: Path, lake_dir: Path) -> Callable[..., Path]:
    """Write a YAML config into tmp_path: ``config_file(data)`` or ``config_file(**config_dict kwargs)``. Each call
    writes its own file, always named ``config.yaml`` (in its own folder), so every config of a test publishes to the
    same board, ``config``, as successive versions of one config file do (dialogbench/boards.py)."""
    counter = itertools.count()

    def write(data: dict | str | None = None, **kwargs: Any) -> Path:
        if data is None:
            data = config_dict(lake_dir, **kwargs)
        path = tmp_path / f"config-{next(counter)}" / "config.yaml"
        path.parent.mkdir()
        path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
        return path

    return write


@pytest.fixture
def make_config(config_file) -> Callable[..., Config]:
    """Write a config (as ``config_file``) and load it with the repo root for the dataset paths."""

    def make(data: dict | None = None, *, overrides: dict | None = None, **kwargs: Any) -> Config:
        return load_config(config_file(data, **kwargs), overrides, root=REPO_ROOT)

    return make


def run_pipeline(config: Config, run_id: str | None = None, *, record: bool = False) -> dict:
    """The flow's stages in order, as a fresh process would run them (backends rebuilt).
    Returns {"seeds": report, "<model>": generation report, "unieval": merged judging report}."""
    from tests import stage_runner as stages
    from dialogbench.registry import open_lake
    from dialogbench.runs import new_run_id, record_stage, sum_reports

    run_id = run_id or new_run_id()
    clear_backends()
    reports = {"seeds": stages.extract_seeds(config)}
    for model in chatbots(config):
        reports[model.name] = stages.generate(config, model.name, run_id)
    chunks, planned = stages.plan_unieval(config, run_id)
    reports["unieval"] = sum_reports([planned, *(stages.judge_unieval(config, c, run_id) for c in chunks)])
    reports["unieval_chunks"] = len(chunks)
    if record:
        for report in reports.values():
            if not isinstance(report, int):
                record_stage(open_lake(config.lake), run_id=run_id, report=report, config="test.yaml")
    return reports


@pytest.fixture
def pipeline() -> Callable[..., dict]:
    return run_pipeline


@pytest.fixture
def backend_calls(monkeypatch) -> dict[str, list[int]]:
    """Every scripted backend call, as {model name: [conversations per call]} (robust to backends
    being released or rebuilt between stages)."""
    from dialogbench.backends.scripted import ScriptedBackend

    calls: dict[str, list[int]] = {}
    real = ScriptedBackend.generate

    def generate(self, conversations, *, sampling, seeds=None, formats=None):
        calls.setdefault(self.model.name, []).append(len(conversations))
        return real(self, conversations, sampling=sampling, seeds=seeds, formats=formats)

    monkeypatch.setattr(ScriptedBackend, "generate", generate)
    return calls
