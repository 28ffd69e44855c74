"""Scaling out: wall time of one dispatched run (dialogbench/dispatch/units.py) with 1, 2 and 3 workers of one Prefect
process work pool, each a "GPU slot" (its own CUDA_VISIBLE_DEVICES; one per box, or several on one); with 1, 2 and 4
task workers (``dispatch.task_workers``: ``python -m flows.unit_worker`` processes started before the run, each taking
unit after unit, warm); and with 1, 2 and 4 GPUs of this box and no work pool (``dispatch:`` without a deployment:
each unit a process of the run's on its own device, dialogbench/dispatch/box.py), then the same with warm slots
(``dispatch.warm``: one process per GPU takes unit after unit, so Python and Prefect start once per GPU, not per
unit). Scripted models with a delay per backend call stand in for engines, so that model time dominates; the
dispatched phase (the units: each model's BotChat dialogues and MT-Bench-101 answers) is what divides over the slots,
the rest of the run (seeds, judging, data tests, report) does not. Then judging while the units generate against
judging after them (``dispatch.judge_while_generating``): 3 chatbots on 2 GPUs of this box, the judge at 2 s per cell
judged, so the last unit runs alone while a GPU would idle. Prints the ratios of one run and writes JSON.

    .venv/bin/python bench/scale_out.py [--workers 1,2,3] [--task-workers 1,2,4] [--slots 1,2,4] [--warm-slots 1,2,4]
                                        [--models 12] [--delay 1.0] [--judging 2] [--judging-models 3]
                                        [--judge-delay 2.0] [--server sqlite|postgres] [--out FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run as a script: bench.record and the tests' Prefect helpers from this checkout

from bench.record import ended, record  # noqa: E402
from tests.e2e.prefect_server import PREFECT, deploy_work, kill, postgres, running_server, spawn  # noqa: E402

POOL = "scale-out"


def _config(work: Path, name: str, *, models: int, delay: float, devices: int | None = None,
            judge_delay: float = 0.0, judging: bool = True, warm: bool = False, task_workers: bool = False) -> Path:
    names = [f"bot-{i}" for i in range(models)]
    data = {"lake": str(work / f"lake-{name}"),
            "models": [{"name": n, "backend": "scripted", "script": [f"{n}: sure."], "script_delay_s": delay}
                       for n in names],
            "judges": [{"name": "judge", "backend": "scripted", "script_delay_per_conversation_s": judge_delay,
                        "script": ["Choice: No\nIndex: None\nReason: ok [[7]]"]}],
            "botchat": {"judge": "judge", "n": [12], "limit": 4,
                        "dataset": str(REPO / "data_lake/raw/botchat/mutual_test.jsonl"),
                        "unieval_examples": str(REPO / "data_lake/raw/botchat/unieval_examples.json")},
            "mtbench101": {"limit": 1, "tasks": ["CM", "SI"], "answer_chunk_size": 1,
                           "dataset": str(REPO / "data_lake/raw/mtbench101/mtbench101.jsonl")},
            "judge_checks": {"enabled": False},
            "dispatch": {"deployment": "dialogbench-work/scale", "poll_s": 0.5}}
    if task_workers:  # units to task workers (flows/unit_worker.py), no work pool
        data["dispatch"] = {"task_workers": True, "poll_s": 0.5}
    if devices:  # this box's GPUs, no work pool
        data["dispatch"] = {"poll_s": 0.5, "judge_while_generating": judging, "warm": warm}
        data["devices"] = [str(i) for i in range(devices)]
    path = work / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def measure(work: Path, env: dict, workers: int, *, models: int, delay: float) -> dict:
    procs = [spawn([PREFECT, "worker", "start", "--pool", POOL, "--type", "process", "--limit", "1", "--name",
                     f"slot-{i}", "--install-policy", "never"], {**env, "CUDA_VISIBLE_DEVICES": str(i)},
                    work / f"worker-{workers}-{i}.log") for i in range(workers)]
    try:
        time.sleep(3)  # the workers poll the pool
        return _timed(work, env, _config(work, f"w{workers}", models=models, delay=delay), "workers", workers)
    finally:
        for proc in procs:
            kill(proc)


def measure_task_workers(work: Path, env: dict, workers: int, *, models: int, delay: float) -> dict:
    """The run with ``workers`` task workers (``python -m flows.unit_worker``), each its own "GPU", started (and
    warm) before the run, as they would be on a box before the night."""
    procs = [spawn([sys.executable, "-m", "flows.unit_worker"], {**env, "CUDA_VISIBLE_DEVICES": str(i)},
                   work / f"unit-worker-{workers}-{i}.log") for i in range(workers)]
    try:
        _started(work, workers)
        config = _config(work, f"t{workers}", models=models, delay=delay, task_workers=True)
        return _timed(work, env, config, "task workers", workers)
    finally:
        for proc in procs:
            kill(proc)


def _started(work: Path, workers: int, timeout_s: float = 180) -> None:
    """Wait until each task worker says it serves (its imports done)."""
    deadline = time.monotonic() + timeout_s
    logs = [work / f"unit-worker-{workers}-{i}.log" for i in range(workers)]
    while time.monotonic() < deadline:
        if all(log.exists() and "unit worker: GPUs" in log.read_text(errors="replace") for log in logs):
            return
        time.sleep(0.5)
    raise SystemExit(f"task workers did not start in {timeout_s:.0f}s; see {logs[0]}")


def _timed(work: Path, env: dict, config: Path, mode: str, slots: int) -> dict:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "dialogbench.cli", "run", "--config", str(config)], cwd=REPO,
                          env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    (work / f"run-{config.stem}.log").write_text(done.stdout + done.stderr)
    if done.returncode != 0:
        raise SystemExit(f"run with {slots} {mode} failed ({done.returncode}):\n{done.stdout[-3000:]}")
    found = re.search(r"dispatch: (\d+) unit\(s\) ended in ([\d.]+)s", done.stdout + done.stderr)
    return {"mode": mode, "slots": slots, "wall_s": round(wall, 1), "dispatch_s": float(found[2]) if found else None}


def with_speedups(rows: list[dict], *, models: int) -> list[dict]:
    """Each slot row (not the judging comparison's) with its speed-ups over its mode's first row, of the dispatched
    units (None where its run's log or the first row's gave no dispatch time) and of the whole run, and the units'
    target: 0.8 x the slots over the first row's (no more slots than models count)."""
    for r in (r for r in rows if not r["mode"].startswith("judging")):
        base = next(b for b in rows if b["mode"] == r["mode"])  # each mode against its own first row
        found = base["dispatch_s"] and r["dispatch_s"]
        r["speedup_dispatch"] = round(base["dispatch_s"] / r["dispatch_s"], 2) if found else None
        r["speedup_run"] = round(base["wall_s"] / r["wall_s"], 2)
        r["target_dispatch"] = round(0.8 * min(r["slots"], models) / base["slots"], 2)
    return rows


def summarise(*, models: int, delay: float, judging_models: int, judging_gpus: int, judge_delay: float,
              rows: list[dict], server: str = "sqlite") -> dict:
    """The result from the measured rows (``_timed``): the slot rows with their speed-ups, and the judging
    comparison's two wall times by mode."""
    judged = {r["mode"]: r["wall_s"] for r in rows if r["mode"].startswith("judging")}
    return {"models": models, "delay_s": delay, "server": server,
            "judging": {"models": judging_models, "gpus": judging_gpus, "judge_delay_s": judge_delay, "wall_s": judged},
            "rows": with_speedups(rows, models=models)}


def _measure_all(args, work: Path, env: dict) -> list[dict]:
    """Every row the flags ask for, on the server ``env`` names."""
    env = {**env, "PREFECT_WORKER_QUERY_SECONDS": "1", "PREFECT_WORKER_PREFETCH_SECONDS": "2"}
    deploy_work(env, work, pool=POOL, name="scale")
    rows = []
    for n in [int(w) for w in args.workers.split(",") if w]:
        rows.append(measure(work, env, n, models=args.models, delay=args.delay))
        print(f"{n} worker(s): run {rows[-1]['wall_s']:.1f}s, dispatched units {rows[-1]['dispatch_s']}s",
              flush=True)
    for n in [int(w) for w in args.task_workers.split(",") if w]:
        rows.append(measure_task_workers(work, env, n, models=args.models, delay=args.delay))
        print(f"{n} task worker(s): run {rows[-1]['wall_s']:.1f}s, dispatched units {rows[-1]['dispatch_s']}s",
              flush=True)
    for n in [int(w) for w in args.slots.split(",") if w]:
        config = _config(work, f"box{n}", models=args.models, delay=args.delay, devices=n)
        rows.append(_timed(work, env, config, "box GPUs", n))
        print(f"{n} GPU(s) of this box: run {rows[-1]['wall_s']:.1f}s, dispatched units {rows[-1]['dispatch_s']}s",
              flush=True)
    for n in [int(w) for w in args.warm_slots.split(",") if w]:
        config = _config(work, f"warm{n}", models=args.models, delay=args.delay, devices=n, warm=True)
        rows.append(_timed(work, env, config, "box GPUs, warm", n))
        print(f"{n} warm GPU slot(s) of this box: run {rows[-1]['wall_s']:.1f}s, dispatched units "
              f"{rows[-1]['dispatch_s']}s", flush=True)
    for judging in ([True, False] if args.judging else []):
        config = _config(work, f"judging-{judging}", models=args.judging_models, delay=args.delay,
                         devices=args.judging, judge_delay=args.judge_delay, judging=judging)
        rows.append(_timed(work, env, config, "judging while generating" if judging else "judging after",
                           args.judging))
        print(f"{rows[-1]['mode']}: run {rows[-1]['wall_s']:.1f}s", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workers", default="1,2,3", help="work pool workers (none: '')")
    p.add_argument("--task-workers", default="1,2,4",
                   help="task workers (dispatch.task_workers: each takes unit after unit, warm) (none: '')")
    p.add_argument("--slots", default="1,2,4", help="GPUs of this box, no work pool (none: '')")
    p.add_argument("--warm-slots", default="1,2,4",
                   help="GPUs of this box with dispatch.warm: a process per GPU takes unit after unit (none: '')")
    p.add_argument("--models", type=int, default=12, help="chatbots: one unit each (12 divides over 1 to 4 slots)")
    p.add_argument("--delay", type=float, default=1.0, help="seconds per backend call of a chatbot")
    p.add_argument("--judging", type=int, default=2,
                   help="GPUs of this box for the judging comparison: --judging-models chatbots, the judge at "
                        "--judge-delay s per cell, judged while the units generate and after them (0: skip)")
    p.add_argument("--judging-models", type=int, default=3, help="chatbots of the judging comparison")
    p.add_argument("--judge-delay", type=float, default=2.0,
                   help="seconds a judge call takes per cell in it, in the judging comparison")
    p.add_argument("--server", choices=("sqlite", "postgres"), default="sqlite",
                   help="the Prefect server's database: its default SQLite, or a PostgreSQL server started here "
                        "(Debian's postgresql)")
    p.add_argument("--keep", action="store_true", help="keep the work folder (logs, lakes)")
    p.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "scale_out.json")
    args = p.parse_args(argv)
    run = record(script=__file__, argv=argv)  # the load average before the work
    work = Path(tempfile.mkdtemp(prefix="dialogbench-scale-"))
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}  # no server or home of the user
    with contextlib.ExitStack() as stack:
        if args.server == "postgres":
            clean["PREFECT_API_DATABASE_CONNECTION_URL"] = stack.enter_context(postgres())
        rows = _measure_all(args, work, stack.enter_context(running_server(work / "prefect", clean))[1])
    result = summarise(models=args.models, delay=args.delay, judging_models=args.judging_models,
                       judging_gpus=args.judging, judge_delay=args.judge_delay, rows=rows, server=args.server)
    judged = result["judging"]["wall_s"]
    print("\nmode            slots  run_s  dispatch_s  speed-up (units)  target (0.8 x slots)  speed-up (whole run)")
    for r in (r for r in rows if not r["mode"].startswith("judging")):
        print(f"{r['mode']:<14}  {r['slots']:>5}  {r['wall_s']:>5.1f}  {r['dispatch_s']:>10}  {r['speedup_dispatch']:>16}  "
              f"{r['target_dispatch']:>20}  {r['speedup_run']:>20}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if len(judged) == 2:
        ratio = judged["judging after"] / judged["judging while generating"]
        print(f"\njudging ({args.judging_models} chatbots on {args.judging} GPUs, judge {args.judge_delay}s per cell): "
              f"while generating {judged['judging while generating']:.1f}s, after {judged['judging after']:.1f}s "
              f"({ratio:.2f}x)")
    ended(run)
    args.out.write_text(json.dumps({**run, **result}, indent=2) + "\n")
    print(f"\nwrote {args.out}" + (f"; work folder {work}" if args.keep else ""))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
