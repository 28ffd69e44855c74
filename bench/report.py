"""Report benchmark: a synthetic BotChat lake at the paper's scale, then ``write_report`` (report.html and
report.md) and ``write_explorer`` (explorer.html) timed on it, each against a target of 2 s.

Run from the repository root::

    .venv/bin/python bench/report.py [--models 14] [--seeds 547] [--arena-seeds 222] [--repeats 3]
        [--out bench/results/report.json]

The lake (in a temp dir): generations of 16 utterances per (model, seed), one UniEval judgment each
(with its plan), arena comparisons for every pair at N=8 and 16 on ``--arena-seeds`` seeds in both
orders, GTEval comparisons, Elo rows, CL100K lengths of every generated utterance and a run.
``synthetic_lake`` is also what the report tests use, at a small size. Importing this module does no
work. The code timed is this checkout's (its root comes first on ``sys.path``), named in the JSON. It
prints the medians and whether each is under the target; the exit status is 1 when one is not.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock


REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # run as a script: the synthetic lake's maker from this checkout

from tests.fakes.synthetic_lake import model_names, synthetic_lake  # noqa: E402

DEFAULT_OUT = REPO_ROOT / "bench" / "results" / "report.json"
TARGET_S = 2.0  # what a page may take to render at the paper's scale
def timed(write, repeats: int) -> tuple[list[float], list[float], object]:
    """``write()`` run ``repeats`` times: the wall seconds of each, the CPU seconds of each (all of this process's
    threads: less sensitive to other processes on the machine than the wall time), and the last result."""
    times, cpu, result = [], [], None
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = write()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return times, cpu, result


def run_bench(*, models: int, seeds: int, arena_seeds: int, repeats: int) -> dict:
    from dialogbench.explorer import write_explorer
    from dialogbench.run.registry import open_lake
    from dialogbench.lake.catalog import models as view_files
    from dialogbench.report.build import write_report
    from dialogbench.run import registry

    with tempfile.TemporaryDirectory(prefix="dialogbench-report-bench-") as tmp:
        start = time.perf_counter()
        counts = synthetic_lake(Path(tmp) / "lake", models=model_names(models), seeds=seeds, arena_seeds=arena_seeds)
        build_s = time.perf_counter() - start
        views = sorted(m.name for m in view_files(open_lake(Path(tmp) / "lake").layout.sql))
        times, cpu, paths = timed(lambda: write_report(open_lake(Path(tmp) / "lake"), Path(tmp) / "out",
                                                            families=registry.families()), repeats)
        with live_views():  # the same page, every query computing its views from the files (before Snapshot)
            live_times, live_cpu, live_paths = timed(
                lambda: write_report(open_lake(Path(tmp) / "lake"), Path(tmp) / "live", families=registry.families()),
                repeats)
        same_page = all(strip_times(paths[k].read_text()) == strip_times(live_paths[k].read_text()) for k in paths)
        sizes = {kind: path.stat().st_size for kind, path in paths.items()}
        explorer_times, explorer_cpu, page = timed(lambda: write_explorer(open_lake(Path(tmp) / "lake"), Path(tmp) / "out",
                                                                              families=registry.families()),
                                                   repeats)
        sizes["explorer"] = page.stat().st_size
    medians = {"write_report": statistics.median(times), "write_explorer": statistics.median(explorer_times)}
    return {"models": models, "seeds": seeds, "arena_seeds": arena_seeds, "rows": counts, "views": views,
            "lake_build_s": build_s, "write_report_s": times, "write_report_median_s": medians["write_report"],
            "write_report_cpu_s": cpu, "write_report_live_s": live_times, "write_report_live_cpu_s": live_cpu,
            "write_report_live_median_s": statistics.median(live_times), "same_page_live": same_page,
            "write_explorer_s": explorer_times,
            "write_explorer_median_s": medians["write_explorer"], "write_explorer_cpu_s": explorer_cpu,
            "target_s": TARGET_S, "under_target": {k: v < TARGET_S for k, v in medians.items()}, "bytes": sizes}


@contextlib.contextmanager
def live_views():
    """Within it, ``catalog.connect`` gives the views of ``views_database``, which DuckDB computes from the files at
    every query, instead of a ``Snapshot`` (each view computed once per connection)."""
    from dialogbench.lake import catalog

    def live(lake, sql=None, *, board=None):
        con = catalog.views_database(lake, sql)
        catalog.read_board(con, board)
        return con

    with mock.patch.object(catalog.Snapshot, "of", staticmethod(live)):
        yield


def strip_times(page: str) -> str:
    """A page without its timestamps (the two renders differ only by when they ran)."""
    return re.sub(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?( UTC)?", "<time>", page)


def code_info() -> dict:
    """The checkout whose code is timed: its path and commit (with "+ uncommitted changes"; None outside git)."""
    import dialogbench
    from dialogbench.run.environment import commit

    return {"dialogbench": str(Path(dialogbench.__file__).resolve().parent), "commit": commit(REPO_ROOT)}


def format_report(result: dict) -> str:
    lines = [f"report bench: {result['models']} models x {result['seeds']} seeds "
             f"(arena: {result['arena_seeds']} seeds, both orders)", ""]
    lines += [f"  {table:<20} {count:>9,} rows" for table, count in result["rows"].items()]
    lines += ["", f"  lake build            {result['lake_build_s']:8.2f} s",
              "  write_report          " + "  ".join(f"{t:.2f}" for t in result["write_report_s"]) + " s",
              f"  median                {result['write_report_median_s']:8.2f} s",
              "    CPU                 " + "  ".join(f"{t:.2f}" for t in result["write_report_cpu_s"]) + " s",
              "  write_report, views computed at every query (before Snapshot)",
              "                        " + "  ".join(f"{t:.2f}" for t in result["write_report_live_s"]) + " s",
              f"  median                {result['write_report_live_median_s']:8.2f} s "
              f"({result['write_report_live_median_s'] / result['write_report_median_s']:.1f}x the Snapshot's; "
              f"same page: {result['same_page_live']})",
              "  write_explorer        " + "  ".join(f"{t:.2f}" for t in result["write_explorer_s"]) + " s",
              f"  median                {result['write_explorer_median_s']:8.2f} s",
              "    CPU                 " + "  ".join(f"{t:.2f}" for t in result["write_explorer_cpu_s"]) + " s",
              f"  report.html           {result['bytes']['html'] / 1024:8.0f} KiB",
              f"  report.md             {result['bytes']['md'] / 1024:8.0f} KiB",
              f"  explorer.html         {result['bytes']['explorer'] / 1024:8.0f} KiB",
              f"  views defined: {', '.join(result['views'])}", ""]
    lines += [f"  load average at start {result['machine']['loadavg_at_start'][0]:.2f} ({result['machine']['nproc']} CPUs)"]
    lines += [f"  {page:<21} median {result[f'{page}_median_s']:.2f} s: {'under' if ok else 'OVER'} the "
              f"{result['target_s']:g} s target" for page, ok in result["under_target"].items()]
    if "code" in result:
        lines.append(f"  code timed: {result['code']['dialogbench']} (commit {result['code']['commit'] or 'unknown'})")
    return "\n".join(lines)


def size_parser(description: str | None) -> argparse.ArgumentParser:
    """A bench's argument parser with the size of its ``synthetic_lake`` (``--models``, ``--seeds``, ``--arena-seeds``;
    the paper's by default): the benches that time the report, the server and queries over that lake."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=14)
    parser.add_argument("--seeds", type=int, default=547)
    parser.add_argument("--arena-seeds", type=int, default=222)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = size_parser(__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    from bench.record import ended, record

    result = {**record(script=__file__, argv=argv), "code": code_info(),
              **run_bench(models=args.models, seeds=args.seeds, arena_seeds=args.arena_seeds, repeats=args.repeats)}
    ended(result)
    print(format_report(result))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, default=str))
    return 0 if all(result["under_target"].values()) else 1


if __name__ == "__main__":
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        sys.path[0] = str(REPO_ROOT)  # this checkout's dialogbench, not an installed one (nor bench/'s modules)
    sys.exit(main())
