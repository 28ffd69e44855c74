"""A real Prefect server in a subprocess for the end-to-end tests: start one (its own PREFECT_HOME, no analytics, no
UI), wait until it answers, stop it with everything it started. ``running_server`` is what the tests use;
``tests/e2e/conftest.py`` keeps one for the whole session (``shared_api``). ``deploy_work`` registers the work
flow on a process pool of it, for the dispatch tests and ``bench/scale_out.py`` (the one copy of those steps)."""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

import httpx
import prefect
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
PREFECT = str(Path(sys.executable).parent / "prefect")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    """Start a long-running process in its own process group (so it and its children can be killed)."""
    with log.open("wb") as out:
        return subprocess.Popen(args, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)


def kill(proc: subprocess.Popen) -> None:
    """Terminate the process group (a worker's flow-run subprocesses are in it too), then kill it."""
    for sig, grace in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            continue
        try:  # the leader is gone; make sure no child of it is left
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        break


def tail(log: Path, chars: int = 3000) -> str:
    text = log.read_text(errors="replace") if log.exists() else "(no log)"
    return f"--- {log.name} ---\n{text[-chars:]}"


def wait_healthy(api: str, server: subprocess.Popen, log: Path, timeout: float = 150) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert server.poll() is None, f"prefect server exited ({server.returncode})\n{tail(log)}"
        try:
            if httpx.get(f"{api}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail(f"prefect server not healthy after {timeout:.0f}s\n{tail(log)}")


def server_env(env: dict[str, str], api: str) -> dict[str, str]:
    """``env`` pointed at the server ``api``, with analytics (no network in CI) and the UI off."""
    return {**env, "PREFECT_API_URL": api, "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "PREFECT_SERVER_UI_ENABLED": "false"}


@functools.cache
def migrated_database() -> Path:
    """An empty Prefect database at this Prefect's schema, made once per test process: a server starting on a new
    PREFECT_HOME spends ~8 s of CPU migrating its SQLite database, ~3/4 of its start (``seeded``)."""
    folder = Path(tempfile.mkdtemp(prefix="dialogbench-prefect-db-"))
    atexit.register(shutil.rmtree, folder, True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API_")}
    env.update({"PREFECT_HOME": str(folder), "PREFECT_SERVER_ANALYTICS_ENABLED": "false"})
    done = subprocess.run([PREFECT, "server", "database", "upgrade", "-y"], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and (folder / "prefect.db").exists(), done.stdout[-2000:] + done.stderr[-2000:]
    return folder / "prefect.db"


def seeded(home: Path, env: dict[str, str] | None = None) -> Path:
    """``home`` made, holding a copy of the migrated empty database unless it has one or ``env`` names another
    database (PostgreSQL): the server that Prefect (the CLI's temporary one, or ``running_server``) starts on it skips
    the migrations, and what it records is this test's alone."""
    home.mkdir(parents=True, exist_ok=True)
    if not (env or {}).get("PREFECT_API_DATABASE_CONNECTION_URL") and not (home / "prefect.db").exists():
        shutil.copyfile(migrated_database(), home / "prefect.db")
    return home


def untouched(home: Path) -> bool:
    """No Prefect ran on ``home``: it does not exist, or holds only the ``seeded`` database, byte for byte."""
    if not home.exists():
        return True
    return [p.name for p in home.iterdir()] == ["prefect.db"] and \
        (home / "prefect.db").read_bytes() == migrated_database().read_bytes()


@contextlib.contextmanager
def running_server(home: Path, env: dict[str, str]) -> Iterator[tuple[str, dict[str, str]]]:
    """A Prefect server with its database under ``home`` (``env``'s PREFECT_HOME, else ``home``; ``seeded``); yields
    (api url, ``env`` for clients of it) and stops it, its children included."""
    home.mkdir(parents=True, exist_ok=True)
    port = free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = server_env({"PREFECT_HOME": str(home), **env}, api)
    seeded(Path(env["PREFECT_HOME"]), env)
    log = home / "server.log"
    proc = spawn([PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port)], env, log)
    try:
        wait_healthy(api, proc, log)
        yield api, env
    finally:
        kill(proc)


@contextlib.contextmanager
def postgres() -> Iterator[str]:
    """A PostgreSQL server of its own (Debian's postgresql, in a folder the postgres user owns; skipped where it is not
    installed); yields the database URL a Prefect server takes (PREFECT_API_DATABASE_CONNECTION_URL)."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not found:
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
    bin_dir, folder = found[-1].parent, Path(tempfile.mkdtemp(prefix="dialogbench-pg-"))
    data, port = folder / "data", free_port()
    as_postgres = (lambda cmd: ["su", "postgres", "-c", cmd]) if os.geteuid() == 0 else (lambda cmd: ["sh", "-c", cmd])
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
    steps = [f"{bin_dir}/initdb -D {data} -A trust -U prefect",
             f"{bin_dir}/pg_ctl -D {data} -o '-p {port} -k {folder} -c listen_addresses=' -l {folder}/log -w start",
             f"{bin_dir}/createdb -h {folder} -p {port} -U prefect prefect"]
    try:
        for step in steps:
            done = subprocess.run(as_postgres(step), capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, f"{step}: {done.stdout[-1500:]}{done.stderr[-1500:]}"
        yield f"postgresql+asyncpg://prefect@/prefect?host={folder}&port={port}"
    finally:
        subprocess.run(as_postgres(f"{bin_dir}/pg_ctl -D {data} -m immediate stop"), capture_output=True, timeout=60)
        shutil.rmtree(folder, ignore_errors=True)


def deploy_work(env: dict[str, str], folder: Path, *, pool: str, name: str) -> str:
    """The work flow (``flows/work.py:work``, a unit of a dispatched run) deployed as ``dialogbench-work/<name>`` on a
    new process work pool ``pool`` of the server ``env`` points at: the steps the docs give for the GPU pool
    (``prefect work-pool create``, then ``prefect deploy`` of a prefect.yaml, written to ``folder``, that runs the work
    flow from this checkout). Returns the deployment's name, what a config's ``dispatch.deployment`` names; raises
    RuntimeError with Prefect's output when a step fails."""
    spec = {"name": f"dialogbench-{name}", "prefect-version": prefect.__version__,
            "pull": [{"prefect.deployments.steps.set_working_directory": {"directory": str(REPO)}}],
            "deployments": [{"name": name, "entrypoint": "flows/work.py:work", "work_pool": {"name": pool}}]}
    (folder / "prefect.yaml").write_text(yaml.safe_dump(spec))
    for args in (["work-pool", "create", pool, "--type", "process"],
                 ["--no-prompt", "deploy", "--all", "--prefect-file", str(folder / "prefect.yaml")]):
        done = subprocess.run([PREFECT, *args], cwd=REPO, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=300)
        if done.returncode != 0:
            raise RuntimeError(f"prefect {' '.join(args)}: exit {done.returncode}\n{done.stdout[-2000:]}"
                               f"{done.stderr[-2000:]}")
    return f"dialogbench-work/{name}"
