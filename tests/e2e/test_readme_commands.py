"""Every command of README.md's ```bash blocks, as written, in README order: the user's first steps must work.

The commands are read from the README each time (a command added later is tested too). They run in a temporary
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
lake, and a later run of the same config (the README's quick command) computes, stage by stage, no more cells
than the first run did."""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from tests.e2e.conftest import REPO, cli_env

README = REPO / "README.md"
BIN = Path(sys.executable).parent  # what `.venv/bin/` means here: the interpreter running the tests

# (pattern searched in the command's text, without its comment; why it does not run here)
SKIP: tuple[tuple[str, str], ...] = (
    (r"^make (demo|test)\b", "the Makefile's own: make demo installs a venv then runs the demo command (run here "
                             "as written in Running), make test runs this suite"),
    (r"^make gpu-setup\b", "the GPU box's install: vLLM's CUDA build"),
    (r"\bpip install\b", "installs packages from the network"),
    (r"\brun --config configs/nightly\.yaml", "the full protocol: vLLM chatbots on a GPU box and a judge endpoint"),
    (r"\bprefect (server|worker) start\b", "a long-running Prefect service: a server to watch runs, a worker"),
    (r"\bprefect (deploy|work-pool create|automation create)\b", "registers with a Prefect server, none runs here"),
    (r"--lake /data/", "the GPU box's lake folder, which this machine has not"),
    (r"^export\s", "sets a variable of the user's shell (a Prefect server's URL, a judge endpoint)"),
    (r"^duckdb\s", "the DuckDB CLI, which the project does not install (the .venv/bin/python line reads the "
                   "same file)"),
)

# (pattern, exit code, text the output must hold, why): commands whose documented exit code is not 0 here
EXPECT: tuple[tuple[str, int, str, str], ...] = (
    (r"\bvalidate --config configs/nightly\.yaml", 1, "not runnable on this machine yet",
     "validate exits 1 when only this machine lacks something: the judge endpoint's URL (README, validate)"),
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
# command added to the README gets its line here; without one it would run in the foreground until its timeout.
BACKGROUND: tuple[tuple[str, Probe], ...] = (
    (r"\bdialogbench serve\b", http_probe(8765)),  # the lake's reports, read-only, at 127.0.0.1:8765 by default
)

STAGE_LINE = re.compile(r"^\s+(\S+)\s+planned\s+(\d+)\s+cached\s+(\d+)\s+computed\s+(\d+)\s+failed\s+(\d+)", re.M)


@dataclass(frozen=True)
class Command:
    line: int  # in README.md
    text: str  # as written, comment included
    argv: list[str]  # the words, comment left out

    @property
    def words(self) -> str:
        return shlex.join(self.argv)


def readme_commands(markdown: str) -> list[Command]:
    """The commands of the ```bash blocks: one a line (a line ending in a backslash continues), blank and
    comment-only lines left out."""
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
            commands.append(Command(start, text, argv))
    return commands


def classify(command: Command, ran: dict[str, Command]) -> tuple[str, object]:
    """("skip", reason) | ("expect", (code, text)) | ("background", probe) | ("run", None)."""
    words = command.words
    if words in ran:
        return "skip", f"repeats README line {ran[words].line}, which ran"
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


def run_background(argv: list[str], cwd: Path, env: dict, probe: Probe, log: Path) -> float:
    """Start ``argv``, probe it while it runs, then stop it (SIGINT, then SIGKILL after 30 s). Returns seconds."""
    start = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
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
    """What the slow test will do with each README command; the demo, the quick command and the elo file's maker
    run, the GPU box's do not."""
    ran: dict[str, Command] = {}
    plan = {}
    for command in readme_commands(README.read_text()):
        kind, detail = classify(command, ran)
        plan.setdefault(command.words, kind)
        if kind != "skip":
            ran.setdefault(command.words, command)
    assert plan[".venv/bin/dialogbench run --config configs/demo.yaml"] == "run"
    assert plan[".venv/bin/dialogbench run --config configs/demo.yaml --limit 4 --models smollm2-135m --n 4,8"] \
        == "run"
    assert plan[".venv/bin/dialogbench run --config configs/nightly.yaml"] == "skip"
    assert plan[".venv/bin/dialogbench validate --config configs/nightly.yaml"] == "expect"
    assert plan["make gpu-setup"] == "skip" and plan["pip install -e '.[vllm]'"] == "skip"
    makers = [w for w, kind in plan.items() if kind == "run" and "--out comparisons.csv" in w]
    elo = list(plan).index(".venv/bin/dialogbench elo comparisons.csv")
    assert makers and list(plan).index(makers[0]) < elo  # the README makes the file it rates


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
    assert seconds < 60
    with socket.socket() as s:  # stopped: nothing listens on the port (a closed connection may linger: REUSEADDR)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
    with pytest.raises(AssertionError, match="nothing answered"):
        run_background([sys.executable, "-c", "import time; time.sleep(60)"], tmp_path, dict(os.environ),
                       http_probe(default_port=port, wait_s=2), tmp_path / "sleeper.log")


# --- the README, for real ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_readme_commands_work_as_written(tmp_path):
    work = checkout(tmp_path / "checkout")
    env = command_env(tmp_path)
    repo_lake = sorted(p.name for p in (REPO / "data_lake").iterdir())
    ran: dict[str, Command] = {}
    first_run: dict[str, dict[str, int]] = {}  # config -> stage -> computed, of its first run here
    timings: list[tuple[float, str]] = []
    started = time.perf_counter()
    for command in readme_commands(README.read_text()):
        kind, detail = classify(command, ran)
        if kind == "skip":
            print(f"skip  README:{command.line}  {command.words}  ({detail})")
            continue
        ran[command.words] = command
        argv = local_argv(command.argv)
        where = f"README line {command.line}: {command.text}"
        if kind == "background":
            timings.append((run_background(argv, work, env, detail, tmp_path / f"bg-{command.line}.log"), where))
            continue
        start = time.perf_counter()
        result = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True,
                                timeout=1800 if "run" in command.argv[1:2] else 600)
        timings.append((time.perf_counter() - start, where))
        code, text = detail if kind == "expect" else (0, "")
        output = f"\n--- stdout ---\n{result.stdout[-3000:]}\n--- stderr ---\n{result.stderr[-5000:]}"
        assert result.returncode == code, f"{where}: exit {result.returncode}, expected {code}{output}"
        assert "Traceback (most recent call last)" not in result.stderr, f"{where}: a traceback{output}"
        assert text in result.stdout + result.stderr, f"{where}: no {text!r} in its output{output}"
        if command.argv[1:2] == ["run"] and "--config" in command.argv:
            config = command.argv[command.argv.index("--config") + 1]
            computed = stage_counts(result.stdout)
            assert computed, f"{where}: no stage table{output}"
            if config not in first_run:
                first_run[config] = computed
                continue
            first = first_run[config]  # a later run of the same config (narrowed by flags) reuses the lake
            more = {s: (n, first.get(s, 0)) for s, n in computed.items() if n > first.get(s, 0)}
            assert not more, f"{where}: computed more than the first run of {config} (stage: (now, then)): {more}"
            assert sum(computed.values()) <= sum(first.values())
            print(f"{command.words}: computed {sum(computed.values())} cells "
                  f"({', '.join(f'{s} {n}' for s, n in computed.items() if n)}); the first run "
                  f"{sum(first.values())}")
    total = time.perf_counter() - started
    for seconds, where in timings:
        print(f"{seconds:7.1f}s  {where}")
    print(f"{total:7.1f}s  in all")
    assert (work / "data_lake" / "catalog.duckdb").is_file() and (work / "comparisons.csv").is_file()
    assert sorted(p.name for p in (REPO / "data_lake").iterdir()) == repo_lake  # no lake in the repository
    assert first_run, "the README runs no config"
