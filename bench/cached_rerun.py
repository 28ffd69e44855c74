"""Cached-rerun benchmark: the orchestration cost of a run that has nothing to compute, for one or more source
trees (e.g. this checkout and an older commit's worktree), alternating so every tree sees the same machine load.

    .venv/bin/python bench/cached_rerun.py --config CONFIG [--tree DIR ...] [--repeats 3] [--out FILE]

Each tree fills its own lake once (a first `dialogbench run`), then runs `dialogbench run` ``--repeats`` times
more, all cached; the median wall time of those is the tree's number, beside the median CPU time the run's
process tree spent (user + system of the CLI and the Prefect server it starts: on a busy machine, what a run takes
from the others). Use a scripted config (every model ``backend: scripted``) to time orchestration alone. Prints the
times and writes JSON.

``--from-lake DIR`` starts each tree's lake as a copy of DIR (e.g. the ``data_lake`` a ``make demo`` filled) instead
of computing it: its first run is then the day's first rerun (the judge canary, once a day, may judge again in it),
and the repeats are the day's later cached reruns, the demo's ``make demo`` run again:

    .venv/bin/python bench/cached_rerun.py --config configs/demo.yaml --from-lake data_lake
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

if __package__:
    from .record import ended, record
else:  # run as a script: bench/ is sys.path[0]
    from record import ended, record

REPO = Path(__file__).resolve().parents[1]


def children_cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)  # every waited-for descendant: the CLI and its server
    return used.ru_utime + used.ru_stime


def run_once(tree: Path, config: Path, lake: Path, home: Path, *, rerun: bool = False) -> tuple[float, dict]:
    out = lake.parent / f"{lake.name}-summary.json"
    env = {**os.environ, "PYTHONPATH": str(tree), "PREFECT_HOME": str(home)}
    cpu, start = children_cpu_s(), time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "dialogbench.cli", "run", "--config", str(config), "--lake", str(lake),
                           "--json", str(out), *(["--rerun"] if rerun else [])], cwd=tree, env=env,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 4):  # 4: the run is complete, but failed cells or a judge check fail it
        raise SystemExit(f"{tree}: dialogbench run failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    summary = json.loads(out.read_text())
    return seconds, {"computed": sum(s.get("computed", 0) for s in summary["stages"]), "stages": len(summary["stages"]),
                     "cpu_s": children_cpu_s() - cpu, "reused": bool(summary.get("reused"))}


def summarise(*, config: str, models: list, from_lake: str | None, first_runs: dict[str, float],
              times: dict[str, list[float]], cpus: dict[str, list[float]], reruns: dict[str, list[float]],
              reused: dict[str, list[bool]]) -> dict:
    """The result from each tree's measurements (by tree, in the order they ran): its first run, its cached reruns'
    wall and CPU seconds and whether each was answered from the latest run, and its ``--rerun`` runs' seconds (none
    without --with-rerun); medians, and with several trees each one's ratios to the first."""
    trees = list(times)
    result = {"config": config, "models": models, "from_lake": from_lake,
              "trees": {t: {"first_run_s": round(first_runs[t], 2), "seconds": [round(s, 2) for s in times[t]],
                            "median_s": round(statistics.median(times[t]), 2),
                            "cpu_s": [round(c, 2) for c in cpus[t]],
                            "median_cpu_s": round(statistics.median(cpus[t]), 2),
                            "reused": reused[t],
                            **({"rerun_seconds": [round(s, 2) for s in reruns[t]],
                                "median_rerun_s": round(statistics.median(reruns[t]), 2),
                                # each pair ran back to back: the ratio holds when the machine's speed drifts
                                "paired_rerun_over_cached": round(statistics.median(
                                    r / c for r, c in zip(reruns[t], times[t])), 2)}
                               if reruns[t] else {})} for t in trees}}
    if len(trees) > 1:
        first = statistics.median(times[trees[0]])
        result["ratio_to_first"] = {t: round(statistics.median(times[t]) / first, 3) for t in trees}
        first_cpu = statistics.median(cpus[trees[0]])
        result["cpu_ratio_to_first"] = {t: round(statistics.median(cpus[t]) / first_cpu, 3) for t in trees}
        # each repeat's trees ran back to back: their ratio holds when the machine's speed drifts between repeats
        result["paired_cpu_ratio_to_first"] = {
            t: round(statistics.median(c / f for c, f in zip(cpus[t], cpus[trees[0]])), 3) for t in trees}
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", required=True, type=Path)
    p.add_argument("--tree", action="append", type=Path, help="source tree to time (default: this checkout)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--from-lake", type=Path, help="copy this lake (a filled one) instead of a first run filling it")
    p.add_argument("--with-rerun", action="store_true",
                   help="after each cached rerun, time one with --rerun too (a recorded run through Prefect that "
                   "computes nothing), back to back: reuse_unchanged_run's gain, measured as a paired ratio")
    p.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "cached_rerun.json")
    args = p.parse_args(argv)
    run = record(script=__file__, argv=argv)  # the load average before the work
    trees = [t.resolve() for t in args.tree or [REPO]]
    args.config = args.config.resolve()  # each run starts in its tree
    work = Path(tempfile.mkdtemp(prefix="dialogbench-bench-rerun-"))
    config = yaml.safe_load(args.config.read_text())
    lakes = {t: work / f"lake-{i}" for i, t in enumerate(trees)}
    homes = {t: work / f"prefect-{i}" for i, t in enumerate(trees)}
    first_runs = {}
    for tree in trees:  # the first run fills each tree's lake (its time includes compiling the tree's .pyc files)
        if args.from_lake:
            shutil.copytree(args.from_lake, lakes[tree])
        seconds, counts = run_once(tree, args.config, lakes[tree], homes[tree])
        first_runs[tree] = seconds
        print(f"{tree}: first run {seconds:.1f}s, {counts['computed']} cells computed, {counts['stages']} stages")
    times: dict[Path, list[float]] = {t: [] for t in trees}
    cpus: dict[Path, list[float]] = {t: [] for t in trees}
    reruns: dict[Path, list[float]] = {t: [] for t in trees}
    reused: dict[Path, list[bool]] = {t: [] for t in trees}
    for repeat in range(args.repeats):
        for tree in trees:
            seconds, counts = run_once(tree, args.config, lakes[tree], homes[tree])
            assert counts["computed"] == 0, f"{tree}: a cached rerun computed {counts['computed']} cells"
            times[tree].append(seconds)
            cpus[tree].append(counts["cpu_s"])
            reused[tree].append(counts["reused"])
            print(f"{tree}: cached rerun {repeat + 1}/{args.repeats}: {seconds:.1f}s, CPU {counts['cpu_s']:.1f}s "
                  f"({counts['stages']} stages{', the latest run reused' if counts['reused'] else ''})")
            if args.with_rerun:
                seconds, counts = run_once(tree, args.config, lakes[tree], homes[tree], rerun=True)
                assert counts["computed"] == 0 and not counts["reused"], f"{tree}: --rerun computed or reused"
                reruns[tree].append(seconds)
                print(f"{tree}: the same with --rerun (a recorded run): {seconds:.1f}s")
    def by_name(measured: dict) -> dict:  # JSON keys: the trees' paths
        return {str(t): measured[t] for t in trees}

    result = summarise(config=str(args.config), models=[m.get("backend") for m in config.get("models", [])],
                       from_lake=str(args.from_lake) if args.from_lake else None, first_runs=by_name(first_runs),
                       times=by_name(times), cpus=by_name(cpus), reruns=by_name(reruns), reused=by_name(reused))
    ended(run)
    result = {**run, **result}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    for tree in trees:
        found = result["trees"][str(tree)]
        print(f"median cached rerun {found['median_s']:.1f}s, CPU {found['median_cpu_s']:.1f}s  {tree}")
        if "median_rerun_s" in found:
            print(f"median with --rerun {found['median_rerun_s']:.1f}s: {found['paired_rerun_over_cached']:.1f}x the "
                  f"cached rerun's time (paired)  {tree}")
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
