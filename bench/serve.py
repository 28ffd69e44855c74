"""Serve benchmark: how fast ``dialogbench serve`` answers a paper-scale report, its explorer and its index.

Run from the repository root::

    .venv/bin/python bench/serve.py [--models 14] [--seeds 547] [--arena-seeds 222] [--runs 200] [--requests 50]
        [--out bench/results/serve.json]

A synthetic BotChat lake (``bench/report.py``'s ``synthetic_lake``) in a temp dir; the report and the explorer are
rendered once into ``<lake>/reports`` and linked (hard links, no copies) into ``boards/nightly/`` and ``--runs`` run
folders with a ``run.json`` each, so the index lists that many runs. Then ``dialogbench serve --port 0`` runs as a
subprocess, as a user starts it, and each page is fetched over a fresh connection (what a browser's first request
does), timed from connect to the last byte: the first request (cold) and ``--requests`` more (median, p95, max).
Target: the report answers in under 100 ms.
"""

from __future__ import annotations

import datetime as dt
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # run as a script: bench.report and dialogbench from this checkout

from bench.record import ended, record  # noqa: E402
from bench.report import model_names, size_parser, synthetic_lake  # noqa: E402

DEFAULT_OUT = REPO_ROOT / "bench" / "results" / "serve.json"
PAGES = ("report.html", "explorer.html", "report.md", "run.json")
TARGET_MS = 100


def build_reports(lake: Path, *, models: int, seeds: int, arena_seeds: int, runs: int) -> dict:
    """The lake, its report and explorer rendered once, and the board and run folders linking them."""
    from dialogbench.explorer import write_explorer
    from dialogbench.run import registry
    from dialogbench.run.registry import open_lake
    from dialogbench.report.build import write_report

    start = time.perf_counter()
    synthetic_lake(lake, models=model_names(models), seeds=seeds, arena_seeds=arena_seeds)
    lake_s, reports = time.perf_counter() - start, lake / "reports"
    start = time.perf_counter()
    write_report(open_lake(lake), reports, families=registry.families())
    write_explorer(open_lake(lake), reports, families=registry.families())
    render_s, t0 = time.perf_counter() - start, dt.datetime(2026, 1, 1, 1, tzinfo=dt.timezone.utc)
    run_ids = [f"{t0 + dt.timedelta(days=i):%Y%m%dT%H%M%SZ}-{i:06x}" for i in range(runs)]
    for i, run_id in enumerate(run_ids + run_ids[-1:]):  # the runs, then the board (its latest run)
        when = t0 + dt.timedelta(days=min(i, runs - 1))
        folder = reports / (f"runs/{run_id}" if i < runs else "boards/nightly")
        folder.mkdir(parents=True)
        for name in ("report.html", "report.md", "explorer.html"):
            os.link(reports / name, folder / name)
        (folder / "run.json").write_text(json.dumps({
            "run_id": run_id, "board": "nightly", "config": "configs/nightly.yaml", "started_at": when.isoformat(),
            "finished_at": (when + dt.timedelta(minutes=40)).isoformat(), "failed": "judge down" if i % 9 == 0 else None}))
    return {"lake_build_s": lake_s, "render_s": render_s, "latest_run": run_ids[-1],
            "bytes": {name: (reports / name).stat().st_size for name in ("report.html", "explorer.html", "report.md")}}


def get(port: int, path: str) -> tuple[float, int, int]:
    """One GET over a fresh connection: seconds to the last byte, status, body bytes."""
    start = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
    finally:
        connection.close()
    return time.perf_counter() - start, response.status, len(body)


def time_paths(port: int, paths: list[str], requests: int) -> dict:
    """Per path: the first request (cold), then ``requests`` more, round-robin over the paths."""
    timings: dict[str, list[float]] = {path: [] for path in paths}
    sizes = {}
    for round_ in range(requests + 1):
        for path in paths:
            seconds, status, size = get(port, path)
            if status != 200:
                raise SystemExit(f"GET {path} answered {status}")
            timings[path].append(seconds)
            sizes[path] = size
    result = {}
    for path, times in timings.items():
        warm = sorted(times[1:])
        result[path] = {"bytes": sizes[path], "cold_ms": times[0] * 1000, "median_ms": statistics.median(warm) * 1000,
                        "p95_ms": warm[max(0, round(0.95 * len(warm)) - 1)] * 1000, "max_ms": warm[-1] * 1000,
                        "requests": len(warm)}
    return result


def serve(lake: Path) -> tuple[subprocess.Popen, int, float]:
    """``dialogbench serve`` on a free port: the process, its port, seconds until it printed its address."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "dialogbench.cli", "serve", "--lake", str(lake), "--port", "0"],
                            cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if not found:
        proc.kill()
        raise SystemExit(f"dialogbench serve did not start: {line}{proc.stderr.read()}")
    return proc, int(found[1]), time.perf_counter() - start


def code_info() -> dict:
    """The checkout whose server is timed: its commit (with "+ uncommitted changes"; None outside git)."""
    from dialogbench.run.environment import commit

    return {"commit": commit(REPO_ROOT)}


def run_bench(*, models: int, seeds: int, arena_seeds: int, runs: int, requests: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="dialogbench-serve-bench-") as tmp:
        lake = Path(tmp) / "lake"
        built = build_reports(lake, models=models, seeds=seeds, arena_seeds=arena_seeds, runs=runs)
        paths = ["/report.html", "/explorer.html", "/", f"/runs/{built['latest_run']}/report.html"]
        proc, port, startup_s = serve(lake)
        try:
            timed = time_paths(port, paths, requests)
        finally:
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=30)
        if proc.returncode != 0 or err:
            raise SystemExit(f"dialogbench serve exited {proc.returncode}: {out}{err}")
    return {"models": models, "seeds": seeds, "arena_seeds": arena_seeds, "runs": runs, **built,
            "serve_startup_s": startup_s, "paths": timed,
            "report_under_target": timed["/report.html"]["p95_ms"] < TARGET_MS}


def format_report(result: dict) -> str:
    lines = [f"serve bench: {result['models']} models x {result['seeds']} seeds, {result['runs']} runs listed; "
             f"lake {result['lake_build_s']:.1f} s, report + explorer rendered in {result['render_s']:.1f} s, "
             f"server up in {result['serve_startup_s']:.2f} s", "",
             f"  {'GET':<44} {'bytes':>10} {'cold ms':>8} {'median':>8} {'p95':>8} {'max':>8}"]
    for path, t in result["paths"].items():
        lines.append(f"  {path:<44} {t['bytes']:>10,} {t['cold_ms']:8.1f} {t['median_ms']:8.1f} {t['p95_ms']:8.1f} "
                     f"{t['max_ms']:8.1f}")
    verdict = "under" if result["report_under_target"] else "NOT under"
    lines += ["", f"  /report.html p95 {verdict} the {TARGET_MS} ms target "
                  f"({next(iter(result['paths'].values()))['requests']} requests after the cold one, each path)"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = size_parser(__doc__)
    parser.add_argument("--runs", type=int, default=200, help="run folders the index lists (at least 1)")
    parser.add_argument("--requests", type=int, default=50, help="timed requests per path after the cold one")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    run = record(script=__file__, argv=argv)  # the load average before the work
    result = run_bench(models=args.models, seeds=args.seeds, arena_seeds=args.arena_seeds, runs=args.runs,
                       requests=args.requests)
    ended(run)
    result = {**run, "code": code_info(), **result}
    print(format_report(result))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
