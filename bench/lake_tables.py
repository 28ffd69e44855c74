"""What a Delta lake (``lake_tables: delta``) costs against a folder lake (``files``), through the ``Lake`` every stage
writes and reads: ``--chunks`` commits of ``--rows`` cells each into a cell table (a stage's chunks), then the reads a
run and a query make of it: the whole table through its SQL relation (a view), the anti-join of ``--rows`` planned
keys against its computed ones (a stage's plan), and, on the Delta lake, the same read after ``compact``. One process,
one writer; a fresh lake per repeat, the median of ``--repeats``.

    .venv/bin/python bench/lake_tables.py [--chunks 200] [--rows 50] [--repeats 3] [--out bench/results/lake_tables.json]

Prints a table and the ratios of one run, writes the JSON."""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import pyarrow as pa

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run as a script: bench.record from this checkout

from bench.record import ended, record, write  # noqa: E402
from dialogbench.cells.tables import Table  # noqa: E402
from dialogbench.lake.layout import Layout  # noqa: E402
from dialogbench.lake.store import Lake  # noqa: E402
from dialogbench.lake.version import ensure_current  # noqa: E402

CELLS = Table("cells", pa.schema([("cell_key", pa.string()), ("model", pa.string()), ("text", pa.string()),
                                  ("tokens", pa.int64())]), partition=("model",), done="true")
LAYOUT = Layout(tables={"cells": CELLS})


def chunk(i: int, rows: int) -> pa.Table:
    return pa.Table.from_pylist([{"cell_key": f"c{i}-{j}", "model": f"m{i % 4}", "text": "word " * 40, "tokens": 53}
                                 for j in range(rows)], schema=CELLS.schema)


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def once(kind: str, *, chunks: int, rows: int) -> dict:
    """One fresh lake of ``kind``: its commits, then its reads (seconds)."""
    with tempfile.TemporaryDirectory(prefix=f"lake-{kind}-") as tmp:
        lake = Lake(Path(tmp) / "lake", layout=LAYOUT)
        ensure_current(lake, tables=kind)
        lake = Lake(lake.root, layout=LAYOUT)
        data = [chunk(i, rows) for i in range(chunks)]
        write_s, _ = timed(lambda: [lake.write("cells", d, partition={"model": d["model"][0].as_py()}) for d in data])
        planned = pa.table({"cell_key": [f"c{i}-{j}" for i in range(0, chunks, 2) for j in range(rows)] +
                                        [f"new-{j}" for j in range(rows)]})

        def read() -> int:
            with duckdb.connect() as con:
                return con.sql(f"SELECT count(*) FROM {Lake(lake.root, layout=LAYOUT).relation_sql('cells', CELLS.schema)}"
                               ).fetchall()[0][0]

        def plan() -> int:
            with duckdb.connect() as con:
                con.register("planned", planned)
                computed = CELLS.computed_keys_sql(Lake(lake.root, layout=LAYOUT))
                return con.sql(f"SELECT count(*) FROM planned ANTI JOIN ({computed}) c USING (cell_key)").fetchall()[0][0]

        read_s, stored = timed(read)
        plan_s, missing = timed(plan)
        result = {"write_s": write_s, "read_s": read_s, "plan_s": plan_s, "rows": stored, "missing": missing,
                  "files": len(lake.files("cells"))}
        if kind == "delta":
            compact_s, _ = timed(lambda: lake.delta("cells").store.compact("cells"))
            result.update(compact_s=compact_s, read_compacted_s=timed(read)[0],
                          files_compacted=len(Lake(lake.root, layout=LAYOUT).files("cells")))
        if stored != chunks * rows or missing != rows:
            raise SystemExit(f"{kind}: {stored} rows (expected {chunks * rows}), {missing} missing (expected {rows})")
        return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--chunks", type=int, default=200, help="commits (a stage's chunks)")
    p.add_argument("--rows", type=int, default=50, help="cells a commit")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "lake_tables.json")
    args = p.parse_args(argv)
    run = record(script=__file__, argv=argv)
    kinds = {}
    for kind in ("files", "delta"):
        runs = [once(kind, chunks=args.chunks, rows=args.rows) for _ in range(args.repeats)]
        kinds[kind] = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    files, delta = kinds["files"], kinds["delta"]
    print(f"{args.chunks} commits of {args.rows} cells, median of {args.repeats}")
    print("            files     delta   delta/files")
    for key in ("write_s", "read_s", "plan_s"):
        print(f"{key:<10} {files[key]:7.3f}s {delta[key]:7.3f}s   {delta[key] / files[key]:6.2f}x")
    print(f"delta after compact ({delta['files_compacted']:g} file(s), compact {delta['compact_s']:.3f}s): "
          f"read {delta['read_compacted_s']:.3f}s")
    ended(run)
    result = {**run, "chunks": args.chunks, "rows": args.rows, "repeats": args.repeats, "kinds": kinds,
              "ratios": {key: delta[key] / files[key] for key in ("write_s", "read_s", "plan_s")}}
    write(args.out, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
