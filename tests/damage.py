"""Test helpers that damage a lake file the ways disks and people do: truncate it, or flip bytes so that it still
reads but holds other values (the silent kind: only a checksum sees it)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest


def truncate(path: Path, keep: float = 0.5) -> None:
    with open(path, "r+b") as handle:
        handle.truncate(int(path.stat().st_size * keep))


def flip_keeping_readable(path: Path) -> int:
    """Flip the first byte (from the start of the data pages) whose flip leaves the file readable with other
    values; returns its offset. Same size, new mtime: found by a checksum, not by a size or footer check."""
    original = path.read_bytes()
    expected = pq.read_table(path)
    footer = int.from_bytes(original[-8:-4], "little") + 8
    for offset in range(4, len(original) - footer):
        for mask in (0x01, 0x10, 0x80):
            data = bytearray(original)
            data[offset] ^= mask
            path.write_bytes(bytes(data))
            try:
                if not pq.read_table(path).equals(expected):
                    return offset
            except Exception:  # this flip breaks the file: try another
                pass
    path.write_bytes(original)
    raise AssertionError(f"{path}: no byte flip keeps it readable")


def same_mtime(path: Path, stat: os.stat_result) -> None:
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


@contextlib.contextmanager
def killed_before_the_data_rename(monkeypatch, why: str = "killed"):
    """A lake writer killed between its commit's two renames: its record is in place, its Parquet file's rename
    raises ``KeyboardInterrupt`` (raised out of the block, then ``os.replace`` is itself again)."""
    real = os.replace

    def killed(src, dst):
        if str(dst).endswith(".parquet"):
            raise KeyboardInterrupt(why)
        return real(src, dst)

    monkeypatch.setattr(os, "replace", killed)
    try:
        with pytest.raises(KeyboardInterrupt):
            yield
    finally:
        monkeypatch.undo()
