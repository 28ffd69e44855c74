"""What the lake's integrity records cost: ``Lake.write`` per file, building every view (what each run does several
times and every ``dialogbench query`` once), the run-start ``quick_check`` and the full ``verify``, on a synthetic
lake of demo size (every registered table that holds cells gets ``--files`` files of ``--rows`` rows).

    .venv/bin/python bench/lake_integrity.py          # prints the numbers, writes bench/results/lake_integrity.json
    PYTHONPATH=/tmp/base .venv/bin/python bench/lake_integrity.py --out before.json   # another checkout

On a checkout without ``dialogbench.lake.verify`` the check timings are left out (what "before" measures)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

from dialogbench.run import registry
from dialogbench.lake import Lake
from dialogbench.run.registry import open_lake
from dialogbench.lake.catalog import connect

if __package__:
    from .record import ended, record
else:  # run as a script: bench/ is sys.path[0], and PYTHONPATH may put another checkout's dialogbench first
    from record import ended, record

T0 = dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc)


def fake_rows(table, file: int, rows: int) -> pa.Table:
    """Rows of ``table``'s schema: strings, numbers, the cell key unique per row; nested columns null."""
    out = []
    for r in range(rows):
        row = {}
        for f in table.schema:
            if f.name == table.key:
                row[f.name] = f"{table.name}-{file}-{r}"
            elif pa.types.is_string(f.type):
                row[f.name] = f"{f.name} {file} {r} " * 4
            elif pa.types.is_integer(f.type):
                row[f.name] = r
            elif pa.types.is_floating(f.type):
                row[f.name] = r / 3
            elif pa.types.is_boolean(f.type):
                row[f.name] = True
            elif pa.types.is_timestamp(f.type):
                row[f.name] = T0
            else:
                row[f.name] = None
        for col in table.partition:
            row[col] = f"p{file % 2}"
        out.append(row)
    return pa.Table.from_pylist(out, schema=table.schema)


def timed(fn, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=8, help="files per cell table")
    parser.add_argument("--rows", type=int, default=24, help="rows per file")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "lake_integrity.json"))
    args = parser.parse_args(argv)
    run = record(script=__file__, argv=argv)  # the load average before the work
    tables = [t for t in registry.tables() if t.done is not None or t.name in ("plans", "runs", "failures")]
    with tempfile.TemporaryDirectory() as tmp:
        lake = open_lake(tmp)
        data = {t.name: [fake_rows(t, i, args.rows) for i in range(args.files)] for t in tables}
        writes = []
        for t in tables:
            for i, part in enumerate(data[t.name]):
                start = time.perf_counter()
                lake.write(t.name, part, partition={c: f"p{i % 2}" for c in t.partition})
                writes.append(time.perf_counter() - start)
        files = sum(len(lake.files(t.name)) for t in tables)
        result = {"files": files, "rows_per_file": args.rows, "write_ms_median": statistics.median(writes) * 1000,
                  "views_s_median": timed(lambda: connect(lake).close(), args.repeats)}
        try:
            from dialogbench.lake.verify import quick_check, verify
        except ImportError:
            pass
        else:
            result["quick_check_s_median"] = timed(lambda: quick_check(lake), args.repeats)
            result["verify_s_median"] = timed(lambda: verify(lake), args.repeats)
    for key, value in result.items():
        print(f"{key:24} {value:.4f}" if isinstance(value, float) else f"{key:24} {value}")
    ended(run)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({**run, **result}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
