"""What the judges' known-answer probes cost (docs/judge-checks.md): a first run of a config on a fresh lake, then
a cached rerun, each ``dialogbench run`` in a subprocess on Prefect's temporary local API. For each run: the wall
time, the probe stages' seconds (their plan and chunks, as the stage table records them), their cells computed and
cached, and the judge calls they made (``usage``: backend calls and conversations of the ``judge_probe:*`` stages),
beside the whole run's judge calls. Prints the numbers and writes JSON.

    .venv/bin/python bench/probes.py [--config configs/demo.yaml] [--out bench/results/probes.json]

With the default, the embedded demo on vLLM's CPU build: several minutes a run on 2 cores.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import duckdb

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run as a script: bench.runs and dialogbench from this checkout

from bench.record import ended, record, write  # noqa: E402
from bench.runs import dialogbench_run  # noqa: E402

PREFIX = "judge_probe:"


def run_once(config: Path, lake: Path, home: Path) -> dict:
    out = lake.parent / f"summary-{time.monotonic_ns()}.json"
    summary, exit_code, wall = dialogbench_run(config, lake, home, out, tail=3000)
    with duckdb.connect(str(lake / "catalog.duckdb"), read_only=True) as con:
        calls = con.execute("select stage like ? as probe, sum(batches), sum(conversations), sum(seconds) from usage "
                            "where run_id = ? and role = 'judge' group by all", [PREFIX + "%", summary["run_id"]]
                            ).fetchall()
    return run_figures(summary=summary, exit_code=exit_code, wall=wall, judge_calls=calls)


def run_figures(*, summary: dict, exit_code: int, wall: float, judge_calls: list[tuple]) -> dict:
    """One run's figures from its ``--json`` summary, exit code, wall seconds and its judge calls in the lake's
    ``usage`` table (rows of: a probe stage's or not, backend calls, conversations, seconds)."""
    probes = [s for s in summary["stages"] if s["stage"].startswith(PREFIX)]
    by = {bool(probe): (int(b or 0), int(c or 0), float(s or 0.0)) for probe, b, c, s in judge_calls}
    probe_calls, other_calls = by.get(True, (0, 0, 0.0)), by.get(False, (0, 0, 0.0))
    return {"wall_s": round(wall, 2), "exit": exit_code,
            "probe_stage_s": round(sum(s["seconds"] for s in probes), 2),
            "probe_cells_computed": sum(s["computed"] for s in probes),
            "probe_cells_cached": sum(s["cached"] for s in probes),
            "probe_judge_calls": probe_calls[0], "probe_judge_conversations": probe_calls[1],
            "probe_call_s": round(probe_calls[2], 2),
            "other_judge_calls": other_calls[0], "other_judge_conversations": other_calls[1],
            "other_judge_call_s": round(other_calls[2], 2),
            "stages": {s["stage"]: {k: s[k] for k in ("planned", "cached", "computed", "seconds")} for s in probes}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", type=Path, default=REPO / "configs" / "demo.yaml")
    p.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "probes.json")
    args = p.parse_args(argv)
    run = record(script=__file__, argv=argv)  # the load average before the work
    with tempfile.TemporaryDirectory(prefix="bench-probes-") as tmp:
        lake, home = Path(tmp) / "lake", Path(tmp) / "prefect"
        first = run_once(args.config, lake, home)
        print(f"first run:  {first['wall_s']:7.1f} s wall; probes {first['probe_stage_s']:6.1f} s, "
              f"{first['probe_cells_computed']} cells computed in {first['probe_judge_calls']} judge calls "
              f"({first['probe_judge_conversations']} conversations; the rest of the run's judging: "
              f"{first['other_judge_conversations']} in {first['other_judge_calls']} calls, "
              f"{first['other_judge_call_s']:.1f} s)")
        rerun = run_once(args.config, lake, home)
        print(f"cached rerun: {rerun['wall_s']:7.1f} s wall; probes {rerun['probe_stage_s']:6.1f} s, "
              f"{rerun['probe_cells_computed']} computed, {rerun['probe_cells_cached']} cached, "
              f"{rerun['probe_judge_calls']} judge calls")
    ended(run)
    result = {**run, "config": str(args.config), "first_run": first, "cached_rerun": rerun}
    write(args.out, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
