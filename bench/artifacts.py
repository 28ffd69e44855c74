"""What publishing a run's results and history costs: the seconds a run spends creating its artifacts (stage
table, leaderboards, changes, report link and Markdown, failures, progress bars) and tagging its flow run, as the
run itself measures them (``tasks/artifacts.py``, the summary's ``artifacts`` field), and snapshotting its metrics
(``tasks/history.py``, the summary's ``history`` field), beside the run's wall time; and the disk each run adds:
the history's lake tables (metric_snapshots, run_configs, canary_judgments) and Prefect's database (artifacts are
rows there).

    .venv/bin/python bench/artifacts.py [--config bench/demo_scripted.yaml] [--repeats 3] [--out FILE]
        [--override botchat.limit=137 ...] [--keep]

One first run fills a fresh lake (every stage computes: progress artifacts too), then ``--repeats`` cached reruns
(nothing to compute: no progress artifacts). Each run is ``dialogbench run`` in a subprocess on Prefect's
temporary local API (its own PREFECT_HOME). Prints the numbers and writes JSON (with each stage's seconds, from the
run's summary). ``--override PATH=VALUE`` sets a field of the config before the runs (a dotted path, a YAML value:
``--override botchat.limit=137 --override gameeval.askguess.trials=1``), to scale a config such as
bench/paper_scripted.yaml down; ``--keep`` keeps the temporary lake, Prefect home and summaries (path in the JSON).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import re
import shutil
import sqlite3
import statistics
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run as a script: bench.runs and dialogbench from this checkout

from bench.record import ended, record  # noqa: E402
from bench.runs import dialogbench_run  # noqa: E402


HISTORY_TABLES = ("metric_snapshots", "run_configs", "canary_judgments")
CANARY = "judge_canary"  # computes its cells every run, cached reruns included


def disk(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def override(data: dict, assignment: str) -> dict:
    """``data`` (a config as YAML reads it) with ``PATH=VALUE`` set: PATH dotted keys (missing mappings are made),
    VALUE read as YAML (``137``, ``[a, b]``, ``null``)."""
    path, sep, value = assignment.partition("=")
    keys = [k for k in path.strip().split(".") if k]
    if not sep or not keys:
        raise SystemExit(f"error: --override {assignment!r}: expected PATH=VALUE, e.g. botchat.limit=137")
    node = data
    for key in keys[:-1]:
        if not isinstance(node.get(key), dict):
            if key in node and node[key] is not None:
                raise SystemExit(f"error: --override {assignment!r}: {key} is not a mapping")
            node[key] = {}
        node = node[key]
    node[keys[-1]] = yaml.safe_load(value)
    return data


_CHUNK = re.compile(r"^(?:plan |record )?(.+?)(?: \d+/\d+)?$")   # "plan X", "X 3/146", "record X": stage X
_SUFFIX = re.compile(r"-[0-9a-f]{3}$")                               # Prefect's "load-config-f4d"


def _step(task: str) -> str:
    """The step a task run belongs to: its stage ("botchat_arena" for its plan, chunks and record; per-model stages
    collapsed: "generate:*"), else the task's name without Prefect's suffix ("snapshot-metrics")."""
    name = _SUFFIX.sub("", task)
    stage = _CHUNK.match(name).group(1) if (" " in name or ":" in name) else name
    return re.sub(r":.*$", ":*", stage)


def timeline(home: Path, run_id: str) -> dict | None:
    """Where the run's wall time went, from Prefect's database in ``home`` (its task runs' start and end): each step's
    span (seconds from the flow run's start to its first task's start, and first start to last end; a stage's chunks
    run a few at a time, so spans, not summed task times, are what the wall time is made of), in order. None when the
    database cannot be read (a Prefect server elsewhere)."""
    path = home / "prefect.db"
    if not path.exists():
        return None
    parse = lambda t: dt.datetime.fromisoformat(str(t).replace(" ", "T")) if t else None  # noqa: E731
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as con:
            flow = con.execute("SELECT start_time, end_time FROM flow_run WHERE name = ? AND parent_task_run_id IS "
                               "NULL", [run_id]).fetchone()
            if not flow or not flow[0] or not flow[1]:
                return None
            rows = con.execute("SELECT name, start_time, end_time FROM task_run WHERE start_time >= ? AND "
                               "start_time <= ? AND end_time IS NOT NULL ORDER BY start_time", flow).fetchall()
    except sqlite3.Error:
        return None
    start, end = parse(flow[0]), parse(flow[1])
    steps: dict[str, list] = {}
    for name, began, ended in rows:
        found = steps.setdefault(_step(name), [parse(began), parse(ended), 0])
        found[1], found[2] = max(found[1], parse(ended)), found[2] + 1
    return {"flow_s": round((end - start).total_seconds(), 2),
            "steps": [{"step": step, "start_s": round((began - start).total_seconds(), 2),
                       "span_s": round((ended - began).total_seconds(), 2), "tasks": count}
                      for step, (began, ended, count) in steps.items()]}


def run_once(config: Path, lake: Path, home: Path, out: Path) -> dict:
    loadavg = os.getloadavg()
    summary, code, wall = dialogbench_run(config, lake, home, out, tail=2000)  # exit 4 too: its artifacts are complete
    spent, history = summary["artifacts"], summary["history"]
    return {"wall_s": round(wall, 2), "exit_code": code, "loadavg_at_start": loadavg, "artifacts": spent["artifacts"], "progress_updates": spent["progress_updates"],
            "publish_s": spent["seconds"], "share_of_wall": round(spent["seconds"] / wall, 4),
            "history_s": history["seconds"], "history_rows": history["rows"],
            "history_share_of_wall": round(history["seconds"] / wall, 4),
            "history_bytes_total": sum(disk(lake / t) for t in HISTORY_TABLES), "lake_bytes_total": disk(lake),
            "prefect_bytes_total": disk(home),
            "computed": sum(s["computed"] for s in summary["stages"] if s["stage"] != CANARY),
            "canary_computed": sum(s["computed"] for s in summary["stages"] if s["stage"] == CANARY),
            "stages": len(summary["stages"]),
            "stage_seconds": {s["stage"]: s.get("seconds") for s in summary["stages"]},
            "timeline": timeline(home, summary["run_id"])}


def longest_steps(run: dict, count: int = 8) -> str:
    """The run's longest steps, "botchat_arena 54.1s, render-report 36.8s, …" (empty without a timeline)."""
    steps = sorted((s for s in (run.get("timeline") or {}).get("steps", []) if not s["step"].startswith("family-")),
                   key=lambda s: -s["span_s"])[:count]  # a family-N step is a family's whole subflow
    return ", ".join(f"{s['step']} {s['span_s']:.1f}s" for s in steps)


def summarise(*, config: str, overrides: list[str], canary: int, first: dict, reruns: list[dict],
              kept: str | None) -> dict:
    """The result from the first run's figures and each cached rerun's (``run_once``): the reruns' medians (None
    without reruns) and the disk a cached rerun adds, on average from the first run to the last."""
    median = (lambda field: round(statistics.median(r[field] for r in reruns), 4)) if reruns else (lambda field: None)
    runs = [first, *reruns]
    per_run = {field: round((runs[-1][field] - runs[0][field]) / (len(runs) - 1)) if len(runs) > 1 else None
               for field in ("history_bytes_total", "lake_bytes_total", "prefect_bytes_total")}
    return {"config": config, "overrides": overrides, "canary": canary, "first_run": first, "cached_reruns": reruns,
            "cached_median_publish_s": median("publish_s"), "cached_median_wall_s": median("wall_s"),
            "cached_median_history_s": median("history_s"),
            "bytes_per_cached_rerun": {"history_tables": per_run["history_bytes_total"],
                                       "lake": per_run["lake_bytes_total"],
                                       "prefect_home": per_run["prefect_bytes_total"]},
            "kept": kept}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", type=Path, default=REPO / "bench" / "demo_scripted.yaml")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--canary", type=int, default=4, help="judge canary size added to the config (0: none); its "
                   "threshold is 0, as scripted judges cycle their replies")
    p.add_argument("--override", action="append", default=[], metavar="PATH=VALUE",
                   help="set a config field before the runs (dotted path, YAML value), e.g. botchat.limit=137; "
                        "repeatable")
    p.add_argument("--keep", action="store_true", help="keep the temporary lake, Prefect home and run summaries")
    p.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "artifacts.json")
    args = p.parse_args(argv)
    run = record(script=__file__, argv=argv)  # the load average before the work
    work = Path(tempfile.mkdtemp(prefix="dialogbench-bench-artifacts-"))
    lake, home = work / "lake", work / "prefect"
    config = args.config.resolve()
    if args.canary or args.override:  # the canary repeats judgments every run: its cells are computed in reruns too
        data = yaml.safe_load(config.read_text())
        if args.canary:
            data["canary"] = {"size": args.canary, "min_agreement": 0.0, "every": "run"}
        for assignment in args.override:
            data = override(data, assignment)
        config = work / config.name
        config.write_text(yaml.safe_dump(data, sort_keys=False))
    first = run_once(config, lake, home, work / "first.json")
    print(f"first run:   {first['wall_s']:6.1f}s wall, {first['artifacts']} artifacts + {first['progress_updates']} "
          f"progress updates in {first['publish_s']:.3f}s ({first['share_of_wall']:.1%}); "
          f"{first['computed']} cells computed; history {first['history_rows']} rows in {first['history_s']:.3f}s "
          f"({first['history_share_of_wall']:.1%} of the wall time)")
    if longest_steps(first):
        print(f"  longest steps (flow run {first['timeline']['flow_s']:.1f}s of {first['wall_s']:.1f}s): "
              f"{longest_steps(first)}")
    reruns = []
    for i in range(args.repeats):
        rerun = run_once(config, lake, home, work / f"rerun-{i}.json")
        assert rerun["computed"] == 0, f"a cached rerun computed {rerun['computed']} cells"
        reruns.append(rerun)
        print(f"cached rerun {i + 1}/{args.repeats}: {rerun['wall_s']:6.1f}s wall, {rerun['artifacts']} artifacts in "
              f"{rerun['publish_s']:.3f}s ({rerun['share_of_wall']:.1%}); history {rerun['history_s']:.3f}s "
              f"({rerun['history_share_of_wall']:.1%})")
    ended(run)
    result = {**run, **summarise(config=str(args.config), overrides=args.override, canary=args.canary, first=first,
                                 reruns=reruns, kept=str(work) if args.keep else None)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    if reruns:
        print(f"median cached rerun: {result['cached_median_publish_s']:.3f}s publishing and "
              f"{result['cached_median_history_s']:.3f}s history of {result['cached_median_wall_s']:.1f}s wall")
        grow = result["bytes_per_cached_rerun"]
        print(f"disk per cached rerun: history tables {grow['history_tables']:,} B, whole lake {grow['lake']:,} B, "
              f"Prefect home (its database: runs, logs, artifacts) {grow['prefect_home']:,} B")
    print(f"written: {args.out}")
    if args.keep:
        print(f"kept: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
