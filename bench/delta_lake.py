"""What "each cell once, no lease" costs on the Delta cell store (``dialogbench.lake.delta``): ``--writers`` processes
race ``insert_missing`` for ``--rounds`` rounds, each round every writer offering ``--per-writer`` of the round's
``--keys`` new cells (two models, partitioned by model, so the writers overlap and conflict), on a local folder and on
S3 (a local moto server, started here: ``tests/lake/delta/s3server.py``; it needs the ``test`` extra). Each writer is a
process of its own (spawned), and the rounds start together (a barrier).

    .venv/bin/python bench/delta_lake.py [--rounds 10] [--repeats 3] [--out bench/results/delta_lake.json]

Per backend: the race's wall time (from the first round's start to the last writer's end, process start-up left
out; median of ``--repeats`` fresh tables), per round, the commits (MERGEs) and the conflicts the writers lost and
ran again, and a check that the table holds each offered cell once. Prints a table, writes the JSON. Importing this
module does no work (``page_rows`` is what bench/page.py's extractor for it would show)."""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO_ROOT / "bench" / "results" / "delta_lake.json"


def writer(location: str, number: int, rounds: int, keys: int, per_writer: int, barrier: Any, results: Any) -> None:
    """One racing writer (a spawned process): ``rounds`` rounds of ``insert_missing``; puts its times and counts."""
    import pyarrow as pa

    from dialogbench.lake.delta import DeltaCellStore

    store = DeltaCellStore(location, writer=f"w{number}")
    rnd = random.Random(number)
    out: dict[str, Any] = {"offered": set(), "inserted": 0, "error": None}
    try:
        for round_ in range(rounds):
            ks = [round_ * 100_000 + k for k in rnd.sample(range(keys), per_writer)]
            data = pa.table({"model": [f"m{k % 2}" for k in ks], "k": pa.array(ks, pa.int64()),
                             "value": [f"writer {number}"] * len(ks)})
            barrier.wait(timeout=300)
            if round_ == 0:
                out["start"] = time.monotonic()  # one clock for every process (CLOCK_MONOTONIC)
            out["inserted"] += store.insert_missing("cells", data, keys=["model", "k"], partition_by=["model"])
            out["offered"] |= set(ks)
    except BaseException as exc:  # noqa: BLE001 - reported, and the bench fails on it
        out["error"] = f"{type(exc).__name__}: {exc}"
    out["end"], out["conflicts"] = time.monotonic(), store.conflicts
    results.put(out)


def race(location: str, args: argparse.Namespace) -> dict[str, Any]:
    """One race on a fresh table at ``location``: its wall time, commits, conflicts and the once-check."""
    import multiprocessing

    from dialogbench.lake.delta import DeltaCellStore

    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(args.writers), ctx.Queue()
    procs = [ctx.Process(target=writer, args=(location, i, args.rounds, args.keys, args.per_writer, barrier, results))
             for i in range(args.writers)]
    for proc in procs:
        proc.start()
    outs = [results.get(timeout=600) for _ in procs]
    for proc in procs:
        proc.join()
    errors = [o["error"] for o in outs if o["error"]]
    if errors:
        raise RuntimeError(f"{location}: a writer failed: {errors[0]}")
    store = DeltaCellStore(location)
    stored = store.read("cells", columns=["k"]).column("k").to_pylist()
    offered = set().union(*(o["offered"] for o in outs))
    merges = [c for c in store.history("cells") if c["operation"] == "MERGE"]
    return {"wall_s": max(o["end"] for o in outs) - min(o["start"] for o in outs), "cells": len(stored),
            "each_cell_once": len(stored) == len(set(stored)) and set(stored) == offered,
            "inserted_reported": sum(o["inserted"] for o in outs), "merge_commits": len(merges),
            "conflicts_retried": sum(o["conflicts"] for o in outs)}


def s3_server() -> tuple[subprocess.Popen, str]:
    """A moto server in a process of its own (the tests' ``s3server``) on a free port, and its endpoint."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "tests.lake.delta.s3server", str(port)], cwd=REPO_ROOT,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    if server.stdout is None or server.stdout.readline().strip() != "ready":
        raise RuntimeError("the moto server did not start")
    return server, f"http://127.0.0.1:{port}"


def backend(name: str, location: Any, args: argparse.Namespace) -> dict[str, Any]:
    """``--repeats`` races, each on a fresh table; the median wall time and the last race's counts."""
    races = [race(location(i), args) for i in range(args.repeats)]
    wall = statistics.median(r["wall_s"] for r in races)
    print(f"{name:6} {wall:7.2f} s  {wall / args.rounds * 1000:7.0f} ms/round  "
          f"{races[-1]['merge_commits']:4d} commits  {races[-1]['conflicts_retried']:4d} conflicts retried  "
          f"each cell once: {all(r['each_cell_once'] for r in races)}", flush=True)
    return {"wall_s_median": wall, "wall_s": [r["wall_s"] for r in races], "round_ms_median": wall / args.rounds * 1000,
            "each_cell_once": all(r["each_cell_once"] for r in races), "last": races[-1]}


def main(argv: list[str] | None = None) -> int:
    from bench.record import ended, record

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--keys", type=int, default=40, help="new cells each round")
    parser.add_argument("--per-writer", type=int, default=25, help="cells each writer offers each round")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    result = record(script=__file__, argv=argv)
    import deltalake

    result["machine"]["deltalake"] = deltalake.__version__
    result.update(writers=args.writers, rounds=args.rounds, keys=args.keys, per_writer=args.per_writer,
                  repeats=args.repeats, backends={})
    print(f"{args.writers} writers x {args.rounds} rounds, {args.per_writer} of {args.keys} new cells each, "
          f"median of {args.repeats}", flush=True)
    with tempfile.TemporaryDirectory(prefix="dialogbench-delta-bench-") as tmp:
        result["backends"]["local"] = backend("local", lambda i: f"{tmp}/lake-{i}", args)
        server, endpoint = s3_server()
        try:
            import boto3

            os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench-secret", AWS_REGION="us-east-1",
                              AWS_ENDPOINT_URL=endpoint)  # the spawned writers inherit them
            boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(Bucket="bench")
            result["backends"]["s3"] = backend("s3", lambda i: f"s3://bench/lake-{i}", args)
        finally:
            server.stdin.close()
            server.wait(timeout=30)
    ended(result)
    ok = all(b["each_cell_once"] for b in result["backends"].values())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, default=str) + "\n")
    return 0 if ok else 1


def page_rows(data: dict) -> list[tuple[str, str]]:
    """The (figure, value) rows docs/benchmarks.md would show for a result of this bench (bench/page.py's
    ``EXTRACTORS`` takes one such function per bench)."""
    race_of = f"{data['writers']} writers x {data['rounds']} rounds of `insert_missing`, median of {data['repeats']}"
    return [(f"Delta store race on {name} ({race_of})", f"{b['wall_s_median']:.2f} s")
            for name, b in data["backends"].items()]


if __name__ == "__main__":
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        sys.path[0] = str(REPO_ROOT)  # this checkout's dialogbench, not an installed one (nor bench/'s modules)
    sys.exit(main())
