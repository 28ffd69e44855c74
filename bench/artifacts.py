"""What publishing a run's results to the Prefect UI costs: the seconds a run spends creating its artifacts
(stage table, leaderboards, report link and Markdown, failures, progress bars) and tagging its flow run, as the
run itself measures them (``tasks/artifacts.py``, the summary's ``artifacts`` field), beside the run's wall time.

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
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_once(config: Path, lake: Path, home: Path, out: Path) -> dict:
    env = {**os.environ, "PREFECT_HOME": str(home)}
    env.pop("PREFECT_API_URL", None)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "dialogbench.cli", "run", "--config", str(config), "--lake", str(lake),
                           "--json", str(out)], cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 4):  # 4: cells failed; the run and its artifacts are still complete
        raise SystemExit(f"dialogbench run failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    summary = json.loads(out.read_text())
    spent = summary["artifacts"]
    return {"wall_s": round(wall, 2), "artifacts": spent["artifacts"], "progress_updates": spent["progress_updates"],
            "publish_s": spent["seconds"], "share_of_wall": round(spent["seconds"] / wall, 4),
            "computed": sum(s["computed"] for s in summary["stages"]), "stages": len(summary["stages"])}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", type=Path, default=REPO / "bench" / "demo_scripted.yaml")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "artifacts.json")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="dialogbench-bench-artifacts-"))
    lake, home = work / "lake", work / "prefect"
    first = run_once(args.config.resolve(), lake, home, work / "first.json")
    print(f"first run:   {first['wall_s']:6.1f}s wall, {first['artifacts']} artifacts + {first['progress_updates']} "
          f"progress updates in {first['publish_s']:.3f}s ({first['share_of_wall']:.1%}); "
          f"{first['computed']} cells computed")
    reruns = []
    for i in range(args.repeats):
        rerun = run_once(args.config.resolve(), lake, home, work / f"rerun-{i}.json")
        assert rerun["computed"] == 0, f"a cached rerun computed {rerun['computed']} cells"
        reruns.append(rerun)
        print(f"cached rerun {i + 1}/{args.repeats}: {rerun['wall_s']:6.1f}s wall, {rerun['artifacts']} artifacts in "
              f"{rerun['publish_s']:.3f}s ({rerun['share_of_wall']:.1%})")
    median = (lambda field: round(statistics.median(r[field] for r in reruns), 4)) if reruns else (lambda field: None)
    result = {"config": str(args.config), "first_run": first, "cached_reruns": reruns,
              "cached_median_publish_s": median("publish_s"), "cached_median_wall_s": median("wall_s"),
              "loadavg": os.getloadavg(), "nproc": os.cpu_count()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    if reruns:
        print(f"median cached rerun: {result['cached_median_publish_s']:.3f}s publishing of "
              f"{result['cached_median_wall_s']:.1f}s wall")
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
