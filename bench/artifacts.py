"""What publishing a run's results and history costs: the seconds a run spends creating its artifacts (stage
table, leaderboards, changes, report link and Markdown, failures, progress bars) and tagging its flow run, as the
run itself measures them (``tasks/artifacts.py``, the summary's ``artifacts`` field), and snapshotting its metrics
(``tasks/history.py``, the summary's ``history`` field), beside the run's wall time; and the disk each run adds:
the history's lake tables (metric_snapshots, run_configs, canary_judgments) and Prefect's database (artifacts are
rows there).

    .venv/bin/python bench/artifacts.py [--config bench/demo_scripted.yaml] [--repeats 3] [--out FILE]

One first run fills a fresh lake (every stage computes: progress artifacts too), then ``--repeats`` cached reruns
(nothing to compute: no progress artifacts). Each run is ``dialogbench run`` in a subprocess on Prefect's
temporary local API (its own PREFECT_HOME). Prints the numbers and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run as a script: bench.runs and dialogbench from this checkout

from bench.runs import dialogbench_run  # noqa: E402


HISTORY_TABLES = ("metric_snapshots", "run_configs", "canary_judgments")
CANARY = "judge_canary"  # computes its cells every run, cached reruns included


def disk(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def run_once(config: Path, lake: Path, home: Path, out: Path) -> dict:
    summary, _, wall = dialogbench_run(config, lake, home, out, tail=2000)  # exit 4 too: its artifacts are complete
    spent, history = summary["artifacts"], summary["history"]
    return {"wall_s": round(wall, 2), "artifacts": spent["artifacts"], "progress_updates": spent["progress_updates"],
            "publish_s": spent["seconds"], "share_of_wall": round(spent["seconds"] / wall, 4),
            "history_s": history["seconds"], "history_rows": history["rows"],
            "history_share_of_wall": round(history["seconds"] / wall, 4),
            "history_bytes_total": sum(disk(lake / t) for t in HISTORY_TABLES), "lake_bytes_total": disk(lake),
            "prefect_bytes_total": disk(home),
            "computed": sum(s["computed"] for s in summary["stages"] if s["stage"] != CANARY),
            "canary_computed": sum(s["computed"] for s in summary["stages"] if s["stage"] == CANARY),
            "stages": len(summary["stages"])}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", type=Path, default=REPO / "bench" / "demo_scripted.yaml")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--canary", type=int, default=4, help="judge canary size added to the config (0: none); its "
                   "threshold is 0, as scripted judges cycle their replies")
    p.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "artifacts.json")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="dialogbench-bench-artifacts-"))
    lake, home = work / "lake", work / "prefect"
    config = args.config.resolve()
    if args.canary:  # the canary repeats judgments every run: its cells are computed in cached reruns too
        data = yaml.safe_load(config.read_text())
        data["canary"] = {"size": args.canary, "min_agreement": 0.0}
        config = work / config.name
        config.write_text(yaml.safe_dump(data))
    first = run_once(config, lake, home, work / "first.json")
    print(f"first run:   {first['wall_s']:6.1f}s wall, {first['artifacts']} artifacts + {first['progress_updates']} "
          f"progress updates in {first['publish_s']:.3f}s ({first['share_of_wall']:.1%}); "
          f"{first['computed']} cells computed; history {first['history_rows']} rows in {first['history_s']:.3f}s")
    reruns = []
    for i in range(args.repeats):
        rerun = run_once(config, lake, home, work / f"rerun-{i}.json")
        assert rerun["computed"] == 0, f"a cached rerun computed {rerun['computed']} cells"
        reruns.append(rerun)
        print(f"cached rerun {i + 1}/{args.repeats}: {rerun['wall_s']:6.1f}s wall, {rerun['artifacts']} artifacts in "
              f"{rerun['publish_s']:.3f}s ({rerun['share_of_wall']:.1%}); history {rerun['history_s']:.3f}s "
              f"({rerun['history_share_of_wall']:.1%})")
    median = (lambda field: round(statistics.median(r[field] for r in reruns), 4)) if reruns else (lambda field: None)
    runs = [first, *reruns]
    per_run = {field: round((runs[-1][field] - runs[0][field]) / (len(runs) - 1)) if len(runs) > 1 else None
               for field in ("history_bytes_total", "lake_bytes_total", "prefect_bytes_total")}
    result = {"config": str(args.config), "canary": args.canary, "first_run": first, "cached_reruns": reruns,
              "cached_median_publish_s": median("publish_s"), "cached_median_wall_s": median("wall_s"),
              "cached_median_history_s": median("history_s"),
              "bytes_per_cached_rerun": {"history_tables": per_run["history_bytes_total"],
                                         "lake": per_run["lake_bytes_total"],
                                         "prefect_home": per_run["prefect_bytes_total"]},
              "loadavg": os.getloadavg(), "nproc": os.cpu_count()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    if reruns:
        print(f"median cached rerun: {result['cached_median_publish_s']:.3f}s publishing and "
              f"{result['cached_median_history_s']:.3f}s history of {result['cached_median_wall_s']:.1f}s wall")
        grow = result["bytes_per_cached_rerun"]
        print(f"disk per cached rerun: history tables {grow['history_tables']:,} B, whole lake {grow['lake']:,} B, "
              f"Prefect home (its database: runs, logs, artifacts) {grow['prefect_home']:,} B")
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
