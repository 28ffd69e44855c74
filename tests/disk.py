"""A small real disk for full-disk tests: a tmpfs of a few hundred KiB or MiB mounted on a folder (root only: where
mounting is not allowed the test is skipped, saying so), and a filler file that leaves a given amount free."""

from __future__ import annotations

import os
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest


@contextmanager
def tmpfs(folder: Path, options: str, unavailable: str) -> Iterator[Path]:
    """``folder`` (it exists) as the mount point of a tmpfs mounted with ``options`` (``size=512k``, ``ro,size=64k``)
    for the ``with`` block; where it cannot be mounted the test is skipped with ``unavailable`` (``{error}``: what
    mount said)."""
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
                             capture_output=True, text=True)
    if mounted.returncode:
        pytest.skip(unavailable.format(error=mounted.stderr.strip()))
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


@contextmanager
def small_disk(folder: Path, size: str) -> Iterator[Path]:
    """``folder`` as the mount point of a tmpfs of ``size`` (``512k``, ``4m``) for the ``with`` block."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a real full disk needs a tmpfs mount (root); tests/lake/test_disk_full.py fakes ENOSPC instead")
    with tmpfs(folder, f"size={size}", "cannot mount a tmpfs here ({error}); the faked ENOSPC tests still run"):
        yield folder


def fill(disk: Path, leave_kib: int) -> Path:
    """A file filling ``disk`` but for about ``leave_kib`` KiB; returns it (remove it to free the space)."""
    filler = disk / "filler"
    free = shutil.disk_usage(disk).free // 1024
    with open(filler, "wb") as handle:
        handle.write(b"\0" * max(free - leave_kib, 0) * 1024)
    return filler
