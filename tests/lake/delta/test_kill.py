"""A writer killed (SIGKILL) in the middle of a commit of eight files (once the first of them is on the store, before
its commit) leaves a table that reads whole: every batch it holds is there with all its rows, none in part; the last
version the writer saw committed reads as it was; the next writer goes on; and a full vacuum clears the files the dead
writer had written for the commit it never made."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
import time

import pyarrow.compute as pc

from dialogbench.lake.delta import DeltaCellStore
from tests.lake.delta import killed_writer
from tests.lake.delta.conftest import REPO
from tests.lake.delta.objects import parquet_files

ROWS = 300_000  # a batch: its eight files take long enough to write (a few hundred ms) to be caught at it
KILL_IN = 2  # the batch whose write is killed (the ones before it commit)


def lines_of(process: subprocess.Popen) -> "queue.Queue[list[str]]":
    """The process's stdout lines as they come, read by a thread (a kill ends them)."""
    found: "queue.Queue[list[str]]" = queue.Queue()

    def read() -> None:
        for line in process.stdout:
            found.put(line.split())

    threading.Thread(target=read, daemon=True).start()
    return found


def test_a_writer_killed_mid_commit_leaves_the_table_whole(location):
    store = DeltaCellStore(location)
    writer = subprocess.Popen([sys.executable, "-m", "tests.lake.delta.killed_writer", location, str(ROWS)],
                              cwd=REPO, stdout=subprocess.PIPE, text=True)
    said = lines_of(writer)
    committed: dict[int, int] = {}  # batch -> the version that committed it
    try:
        while True:
            word, number, *rest = said.get(timeout=120)
            if word == "committed":
                committed[int(number)] = int(rest[0])
            elif int(number) == KILL_IN:
                break
        before = parquet_files(store, "cells")
        deadline = time.monotonic() + 60
        while not parquet_files(store, "cells") - before and said.empty() and time.monotonic() < deadline:
            time.sleep(0.002)  # until its first file of the batch is written: the commit comes after all eight
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)

    table = store.read("cells", columns=["batch", "k"])
    per_batch = dict(zip(*[c.to_pylist() for c in pc.value_counts(table.column("batch")).flatten()]))
    assert set(per_batch.values()) == {ROWS}, f"a batch is there in part: {per_batch}"
    assert sorted(per_batch) in (list(range(KILL_IN)), list(range(KILL_IN + 1)))
    assert len(set(table.column("k").to_pylist())) == table.num_rows
    last = committed[KILL_IN - 1]
    assert store.read("cells", version=last, columns=["batch"]).num_rows == KILL_IN * ROWS
    assert store.version("cells") in (last, last + 1)

    again = killed_writer.batch(KILL_IN, ROWS)  # the next writer: inserts what the dead one did not commit
    inserted = store.insert_missing("cells", again, keys=["model", "k"])
    assert inserted == (0 if KILL_IN in per_batch else ROWS)
    assert store.read("cells", columns=["k"]).num_rows == (KILL_IN + 1) * ROWS

    on_store = parquet_files(store, "cells")
    assert store.vacuum("cells", retention_hours=0) == []  # only what a version removed: nothing here
    store.vacuum("cells", retention_hours=0, full=True)  # also what no version references (no one else writes it)
    referenced = set(store.files("cells"))
    left = parquet_files(store, "cells")
    assert left == referenced and referenced <= on_store
    if KILL_IN not in per_batch:  # killed between its files and its commit (the usual case): they were there
        assert on_store - referenced, "the dead writer's files of its last batch were not found"
    assert store.read("cells", columns=["k"]).num_rows == (KILL_IN + 1) * ROWS
