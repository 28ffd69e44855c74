"""MT-Bench-101 benchmarks, in one run (ratios are comparable on a noisy machine):

1. Golden-context generation: every judged turn of the selected dialogues in one batch, through the
   pipeline (plan + run into a temp lake) vs the raw backend on the same prompts (generated tok/s).
2. Judge fan-out: the judge's requests against a real local OpenAI-compatible server (llm-katan's echo
   backend with a fixed per-request latency standing in for a remote judge) at 1, 4 and 16 concurrent
   requests: requests/s and the speed-up over 1.

    .venv/bin/python bench/mtbench101.py [--config configs/demo.yaml] [--tasks CM,SI,MR] [--limit 2]
        [--out bench/results/mtbench101.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.record import ended, record  # noqa: E402


def golden_generation(config_path: str, tasks: list[str], limit: int, repeats: int) -> dict:
    from dialogbench.backends import get_backend, sampling_for
    from dialogbench.run.registry import load_config, open_lake
    from dialogbench.cells.runner import run_stage
    from dialogbench.mtbench101.answer_stage import AnswerTurns
    from dialogbench.mtbench101.config import answer_max_tokens
    from dialogbench.mtbench101.dataset import read_dialogues

    config = load_config(config_path, root=ROOT)
    model = config.models[0]
    dialogues, per_task = [], {}
    for dialogue in read_dialogues(config.mtbench101.dataset):  # the first `limit` of each task, file order
        if dialogue.task in tasks and per_task.get(dialogue.task, 0) < limit:
            per_task[dialogue.task] = per_task.get(dialogue.task, 0) + 1
            dialogues.append(dialogue)
    held = get_backend(model)  # a metering wrapper of the cached backend; the stage gets its own wrapper of it
    backend = vars(held).get("_backend", held)  # so the cached backend is where the calls are recorded
    sent: list = []
    real = backend.generate

    def recording(conversations, *, sampling, seeds=None, formats=None):
        sent.append(list(conversations))
        return real(conversations, sampling=sampling, seeds=seeds, formats=formats)

    answering = dataclasses.replace(sampling_for(model), max_tokens=answer_max_tokens(config, model))  # the stage's
    backend.generate(sent or [[{"role": "user", "content": "Hello"}]], sampling=answering)  # warm-up
    pipeline_s, raw_s, tokens = [], [], []
    for rep in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:  # the real stage (plan, anti-join, compute, write) on a new lake
            run_config = config.with_sections(lake=tmp, sections={"mtbench101": config.mtbench101.model_copy(
                update={"tasks": tasks, "limit": limit, "context": "golden"})})
            backend.generate = recording if rep == 0 else real
            before = backend.stats.completion_tokens
            start = time.perf_counter()
            report = run_stage(AnswerTurns(run_config, model.name), run_config, f"bench-{rep}",
                               lake=open_lake(run_config.lake))
            pipeline_s.append(time.perf_counter() - start)
            tokens.append(backend.stats.completion_tokens - before)
            backend.generate = real
        start = time.perf_counter()
        raw_tokens = sum(sum(c.completion_tokens for c in real(batch, sampling=answering)) for batch in sent)
        raw_s.append(time.perf_counter() - start)
    return golden_result(model=model.name, tasks=tasks, dialogues=len(dialogues), turns=report.planned,
                         calls=len(sent), pipeline_tokens=tokens, raw_tokens=raw_tokens, pipeline_seconds=pipeline_s,
                         raw_seconds=raw_s)


def golden_result(*, model: str, tasks: list[str], dialogues: int, turns: int, calls: int,
                  pipeline_tokens: list[int], raw_tokens: int, pipeline_seconds: list[float],
                  raw_seconds: list[float]) -> dict:
    """Part 1's result from its measurements: each path's median tok/s over the repeats and the pipeline's overhead
    (1 - pipeline / raw). The raw path replays the same calls every repeat, so its tokens are one count."""
    pipe_tps = statistics.median(t / s for t, s in zip(pipeline_tokens, pipeline_seconds))
    raw_tps = statistics.median(raw_tokens / s for s in raw_seconds)
    return {"model": model, "tasks": tasks, "dialogues": dialogues, "turns": turns,
            "backend_calls_per_pipeline_run": calls, "pipeline_tokens": pipeline_tokens, "raw_tokens": raw_tokens,
            "pipeline_seconds": pipeline_seconds, "raw_seconds": raw_seconds, "pipeline_tok_s": pipe_tps,
            "raw_tok_s": raw_tps, "overhead": 1 - pipe_tps / raw_tps}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def judge_fanout(requests: int, latency_ms: int, levels: list[int]) -> dict:
    from dialogbench.backends import Sampling
    from dialogbench.backends.openai_backend import OpenAIBackend
    from dialogbench.run.config import ModelConfig
    from dialogbench.mtbench101.dataset import read_dialogues, turn_items
    from dialogbench.mtbench101.prompts import judge_messages

    exe = shutil.which("llm-katan", path=str(Path(sys.executable).parent)) or shutil.which("llm-katan")
    port = _free_port()
    server = subprocess.Popen([exe, "--model", "echo", "--backend", "echo", "--host", "127.0.0.1", "--port", str(port),
                               "--latency-ms", str(latency_ms), "--max-concurrent", "64", "--log-level", "warning"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("llm-katan did not start")
                time.sleep(0.3)
        items = turn_items(read_dialogues(ROOT / "data_lake/raw/mtbench101/mtbench101.jsonl"))[:requests]
        prompts = [judge_messages(task=i.task, history_turns=i.history, user_message=i.user_message,
                                  answer=i.reference, reference=i.reference) for i in items]
        os.environ["BENCH_KATAN_URL"] = f"http://127.0.0.1:{port}/v1"
        results = {}
        for level in levels:
            backend = OpenAIBackend(ModelConfig(name="katan", backend="openai", weights="echo", concurrency=level,
                                                base_url_env="BENCH_KATAN_URL", timeout_s=60))
            start = time.perf_counter()
            out = backend.generate(prompts, sampling=Sampling(max_tokens=16))
            seconds = time.perf_counter() - start
            results[level] = {"seconds": seconds, "requests_per_s": len(prompts) / seconds,
                              "failed": sum(not c.ok for c in out)}
        return fanout_result(requests=len(prompts), latency_ms=latency_ms, levels=results)
    finally:
        server.terminate()
        server.wait(timeout=10)


def fanout_result(*, requests: int, latency_ms: int, levels: dict[int, dict]) -> dict:
    """Part 2's result from each concurrency's measurements (in the order run): each one's speed-up in requests per
    second over the first's."""
    base = next(iter(levels.values()))["requests_per_s"]
    for row in levels.values():
        row["speedup"] = row["requests_per_s"] / base
    return {"requests": requests, "latency_ms": latency_ms, "levels": levels}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/demo.yaml")
    parser.add_argument("--tasks", default="CM,SI,MR")
    parser.add_argument("--limit", type=int, default=2, help="dialogues per task")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--requests", type=int, default=64)
    parser.add_argument("--latency-ms", type=int, default=250)
    parser.add_argument("--out", default=str(ROOT / "bench/results/mtbench101.json"))
    args = parser.parse_args(argv)
    started = time.time()
    result = record(script=__file__, argv=argv)  # the load average before the work
    result["golden_generation"] = gen = golden_generation(args.config, args.tasks.split(","), args.limit, args.repeats)
    print(f"1. golden-context generation: {gen['model']}, {gen['dialogues']} dialogues, {gen['turns']} judged turns, "
          f"{gen['backend_calls_per_pipeline_run']} backend call(s) per pipeline run, median of {args.repeats}")
    print(f"   pipeline {gen['pipeline_tok_s']:.1f} tok/s   raw {gen['raw_tok_s']:.1f} tok/s   "
          f"overhead 1 - pipeline/raw = {gen['overhead']:.1%}")
    result["judge_fanout"] = fan = judge_fanout(args.requests, args.latency_ms, [1, 4, 16])
    print(f"2. judge fan-out: {fan['requests']} MT-Bench-101 judge requests, local OpenAI-compatible server "
          f"(llm-katan echo, {fan['latency_ms']} ms per request)")
    print("   concurrency  seconds  requests/s  speed-up  failed")
    for level, row in fan["levels"].items():
        print(f"   {level:>11}  {row['seconds']:7.2f}  {row['requests_per_s']:10.1f}  {row['speedup']:7.1f}x  {row['failed']:>6}")
    ended(result)
    result["seconds"] = time.time() - started
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2, default=str))
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
