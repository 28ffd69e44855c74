"""GameEval benchmark: Ask-Guess games per minute on the embedded default, batched vs one at a time.

Both modes play the same games (same words, trials and seeds) into fresh temp lakes with the first
model of the config at the paper's temperature 1.0: ``batched`` keeps every game in flight (each
host step is one backend call holding every game's pending move), ``sequential`` plays one game at
a time (concurrency 1: one call per move). Per-move seeds make a game's moves independent of its
batch, so the two modes should play the same games; the report says how many transcripts matched
(up to float rounding of padded batches, see dialogbench/backends/transformers_backend.py).

    .venv/bin/python bench/gameeval.py [--config configs/demo.yaml] [--words 8] [--rounds 2]
        [--out bench/results/gameeval.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.record import ended, record  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "gameeval.json"


def bench_config(config_path: str, lake: str, *, words: int, rounds: int, concurrency: int, max_tokens: int):
    from dialogbench.run.registry import load_config

    overrides = {"lake": lake}
    config = load_config(config_path, overrides, root=ROOT)
    model = config.models[0].name
    gameeval = config.gameeval.model_copy(update={
        "enabled": True, "models": [model], "temperature": 1.0, "max_tokens": max_tokens, "concurrency": concurrency,
        "askguess": config.gameeval.askguess.model_copy(update={
            "enabled": True, "limit": words, "words": None, "trials": 1, "settings": ["without_description"],
            "max_rounds": rounds}),
    })
    return config.model_copy(update={"gameeval": gameeval})


def play(config) -> dict:
    from dialogbench.backends import get_backend
    from dialogbench.run import registry
    from dialogbench.cells.runner import run_stage
    from dialogbench.gameeval.config import players
    from dialogbench.run.registry import open_lake

    backend = get_backend(players(config)[0])
    calls_before, moves_before = backend.stats.calls, backend.stats.conversations
    start = time.perf_counter()
    report = run_stage(registry.stage(config, "gameeval_askguess"), config, "bench", lake=open_lake(config.lake))
    seconds = time.perf_counter() - start
    games = open_lake(config.lake).read("gameeval_games").to_pylist()
    return {"games": report.computed + report.failed, "seconds": seconds,
            "games_per_min": 60 * (report.computed + report.failed) / seconds,
            "backend_calls": backend.stats.calls - calls_before, "moves": backend.stats.conversations - moves_before,
            "completion_tokens": sum(g["completion_tokens"] for g in games),
            "outcomes": report.detail.get("outcomes", {}),
            "transcripts": {g["cell_key"]: [(e["speaker"], e["raw"]) for e in g["transcript"]] for g in games}}


def summarise(*, model: str, words: int, rounds: int, max_tokens: int, results: dict[str, dict]) -> dict:
    """The result from both modes' games (``play``, by mode): batching's speed-up in games per minute and how many of
    the games one at a time the batched mode played move for move the same; the transcripts stay out."""
    batched, sequential = results["batched"], results["sequential"]
    same = sum(batched["transcripts"].get(k) == v for k, v in sequential["transcripts"].items())
    return {"model": model, "words": words, "rounds": rounds, "max_tokens": max_tokens, "temperature": 1.0,
            "speedup": batched["games_per_min"] / sequential["games_per_min"], "identical_games": same,
            "games": len(sequential["transcripts"]),
            **{mode: {k: v for k, v in r.items() if k != "transcripts"} for mode, r in results.items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/demo.yaml")
    parser.add_argument("--words", type=int, default=8, help="Ask-Guess words (one game each)")
    parser.add_argument("--rounds", type=int, default=2, help="round limit of each game")
    parser.add_argument("--max-tokens", type=int, default=40)
    parser.add_argument("--out", type=Path, default=RESULTS, help="JSON results (default bench/results/gameeval.json)")
    args = parser.parse_args(argv)
    run = record(script=__file__, argv=argv)  # the load average before the work

    from dialogbench.backends import get_backend, sampling_for
    from dialogbench.gameeval.config import players

    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        warm = bench_config(args.config, f"{tmp}/warm", words=1, rounds=1, concurrency=1, max_tokens=4)
        model = players(warm)[0]
        get_backend(model).generate([[{"role": "user", "content": "Hello"}]], sampling=sampling_for(model))
        for mode, concurrency in (("batched", args.words), ("sequential", 1)):
            config = bench_config(args.config, f"{tmp}/{mode}", words=args.words, rounds=args.rounds,
                                  concurrency=concurrency, max_tokens=args.max_tokens)
            results[mode] = play(config)
            r = results[mode]
            print(f"{mode:<11} {r['games']:>3} games  {r['seconds']:7.1f}s  {r['games_per_min']:6.2f} games/min  "
                  f"{r['backend_calls']:>3} backend calls  {r['moves']:>3} moves  {r['completion_tokens']:>5} tokens")
    out = summarise(model=model.name, words=args.words, rounds=args.rounds, max_tokens=args.max_tokens,
                    results=results)
    print(f"speed-up from batching the step: {out['speedup']:.2f}x  ({out['identical_games']}/{out['games']} games "
          f"played identically in both modes)")
    ended(run)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({**run, **out}, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
