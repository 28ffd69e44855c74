"""A writer for the kill test (``python -m tests.lake.delta.killed_writer LOCATION ROWS``): commits batch after batch
of fresh cells with ``insert_missing``, each batch ``ROWS`` rows over eight partitions (one file each), and says on
stdout when it starts writing a batch and which version committed it, until it is killed."""

from __future__ import annotations

import sys
import time

import pyarrow as pa

from dialogbench.lake.delta import DeltaCellStore

PARTITIONS = 8


def batch(number: int, rows: int) -> pa.Table:
    """Batch ``number``: keys ``number * rows …``, its number in every row, and some text so the files take time."""
    ks = range(number * rows, (number + 1) * rows)
    return pa.table({"model": [f"m{k % PARTITIONS}" for k in ks], "k": pa.array(ks, pa.int64()),
                     "batch": pa.array([number] * rows, pa.int64()),
                     "text": [f"cell {k} of batch {number}: " + "x" * (k % 97) for k in ks]})


def main(location: str, rows: int) -> None:
    store = DeltaCellStore(location, writer="killed")
    number = 0
    while True:
        data = batch(number, rows)
        print(f"writing {number} {time.monotonic()}", flush=True)
        store.insert_missing("cells", data, keys=["model", "k"], partition_by=["model"])
        print(f"committed {number} {store.version('cells')} {time.monotonic()}", flush=True)
        number += 1


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
