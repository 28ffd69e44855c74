"""Report benchmark: a synthetic BotChat lake at the paper's scale, then ``write_report`` (report.html and
report.md) and ``write_explorer`` (explorer.html) timed on it, each against a target of 2 s.

Run from the repository root::

    .venv/bin/python bench/report.py [--models 14] [--seeds 547] [--arena-seeds 222] [--repeats 3]
        [--out bench/results/report.json]

The lake (in a temp dir): generations of 16 utterances per (model, seed), one UniEval judgment each
(with its plan), arena comparisons for every pair at N=8 and 16 on ``--arena-seeds`` seeds in both
orders, GTEval comparisons, Elo rows, CL100K lengths of every generated utterance and a run.
``synthetic_lake`` is also what the report tests use, at a small size. Importing this module does no
work. The code timed is this checkout's (its root comes first on ``sys.path``), named in the JSON. It
prints the medians and whether each is under the target; the exit status is 1 when one is not.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO_ROOT / "bench" / "results" / "report.json"
TARGET_S = 2.0  # what a page may take to render at the paper's scale
T0 = dt.datetime(2026, 11, 20, 3, 0, tzinfo=dt.timezone.utc)
JUDGE = "gpt-4-0613"


def model_names(m: int) -> list[str]:
    return [f"model-{i:02d}" for i in range(m)]


def synthetic_lake(root: Path, *, models: list[str], seeds: int, arena_seeds: int = 0, n: int = 16,
                   arena_ns: tuple[int, ...] = (8, 16), seed: int = 0, judge: str = JUDGE,
                   utterance=lambda model, item, i: f"{model} line {i} about seed {item}.") -> dict[str, int]:
    """Write the base tables for ``models`` x ``seeds``; model i is better than model i+1. Returns row counts."""
    from dialogbench.registry import open_lake
    from dialogbench.botchat.tables import ARENA_TABLE, ELO, GENERATIONS, GTEVAL_TABLE, LENGTHS, SEEDS, UNIEVAL_TABLE
    from dialogbench.lake.schemas import PLANS, RUNS

    lake, rng, run = open_lake(root), np.random.default_rng(seed), "run-0001"
    items = [f"MT-{k + 1}" for k in range(seeds)]
    gens, judg, plans, lengths, counts = [], [], [], [], {}
    for mi, model in enumerate(models):
        skill = 1.0 - mi / max(1, len(models))
        for item in items:
            gkey, jkey = f"g-{model}-{item}", f"u-{model}-{item}"
            utts = [utterance(model, item, i) for i in range(1, n + 1)]
            tokens = np.clip(rng.lognormal(2.5 + 2 * (1 - skill), 0.9, n - 2), 1, 4000).astype(int)
            gens.append({"cell_key": gkey, "dialogue_key": gkey, "protocol": "botchat", "item_id": item,
                         "model": model, "model_fp": f"fp-{model}", "n_target": n, "utterances": utts,
                         "completion_tokens": tokens.tolist(), "empty_utterances": 0, "trimmed_steps": 0,
                         "run_id": run, "created_at": T0})
            lengths += [{"generation_key": gkey, "model": model, "model_fp": f"fp-{model}", "item_id": item,
                         "utterance": i + 3, "tokens": int(t), "created_at": T0} for i, t in enumerate(tokens)]
            r = rng.random()
            parsed = r > 0.03
            flagged = parsed and rng.random() > skill * 0.6
            ai = int(rng.integers(3, n + 1)) if flagged else None
            judg.append({"cell_key": jkey, "protocol": "botchat_unieval", "protocol_version": "v2", "item_id": item,
                         "model": model, "judge": judge, "judge_fp": "jfp", "generation_key": gkey, "n_judged": n,
                         "raw_output": "…", "parsed": parsed, "parse_error": None if parsed else "no Choice line",
                         "choice": ("Yes" if flagged else "No") if parsed else None, "ai_index": ai,
                         "reason": f"Utterance {ai} is far too long & formal." if flagged else "smooth",
                         "prompt_tokens": 900, "completion_tokens": 40, "run_id": run, "created_at": T0})
            plans.append({"run_id": run, "stage": "botchat_unieval", "cell_key": jkey, "item_id": item,
                          "model": model, "judge": judge, "created_at": T0, "roles": [("model", model)],
                          "scope": [model]})
    arena, human_len = [], {item: 4 + k % 12 for k, item in enumerate(items)}
    verdicts = ["conversation_1", "conversation_2", "both", "neither"]
    winners = {"conversation_1": "model_b", "conversation_2": "model_a", "both": "tie", "neither": "tie"}
    for na, (a, b) in itertools.product(arena_ns, itertools.combinations(models, 2)):
        for item in items[:arena_seeds]:
            for first, second in ((a, b), (b, a)):
                verdict = verdicts[int(rng.integers(0, 4))]
                key = f"a-{na}-{first}-{second}-{item}"
                arena.append(_pairwise(key, "botchat_arena", item, first, second, 1, verdict, winners[verdict],
                                       na, judge, run))
                plans.append({"run_id": run, "stage": "botchat_arena", "cell_key": key, "item_id": item,
                              "model": None, "judge": judge, "created_at": T0,
                              "roles": [("first", first), ("second", second)], "scope": sorted({first, second})})
    for mi, model in enumerate(models):
        for item in items[:arena_seeds]:
            for position in (1, 2):
                verdict = verdicts[int(rng.integers(0, 4))] if rng.random() > 0.02 else None
                win = (winners[verdict] if verdict else None)
                key = f"gt-{model}-{item}-{position}"
                arena.append(_pairwise(key, "botchat_gteval", item, model, "human", position, verdict, win,
                                       human_len[item], judge, run))
                plans.append({"run_id": run, "stage": "botchat_gteval", "cell_key": key, "item_id": item,
                              "model": model, "judge": judge, "created_at": T0, "roles": [("model", model)],
                              "scope": [model]})
    seeds_rows = [{"seed_id": item, "line": k, "seed": ["a", "b"], "dialogue": ["x"] * human_len[item],
                   "n_utterances": human_len[item], "item_fp": item} for k, item in enumerate(items)]
    elo = [{"run_id": run, "judge": judge, "n": na, "model": model, "elo": 1150 - 22 * mi + na,
            "elo_std": 3.0 + mi / 10, "ci_low": 1130 - 22 * mi, "ci_high": 1170 - 22 * mi + 2 * na,
            "bt": 1148 - 22 * mi, "bt_ci_low": 1128 - 22 * mi, "bt_ci_high": 1168 - 22 * mi,
            "games": 2 * arena_seeds * (len(models) - 1), "settings": "{}", "created_at": T0}
           for na in (arena_ns if arena_seeds else ()) for mi, model in enumerate(models)]
    runs = [{"run_id": run, "stage": stage, "planned": p, "cached": 0, "computed": p, "failed": 0, "seconds": s,
             "started_at": T0, "finished_at": T0, "config": "bench.yaml", "detail": "{}"}
            for stage, p, s in (("generate", len(gens), 812.5), ("botchat_unieval", len(judg), 1520.0),
                                ("botchat_arena", len(arena), 3004.2), ("botchat_elo", len(elo), 42.0))]
    pairwise = {p: [r for r in arena if r["protocol"] == p] for p in ("botchat_arena", "botchat_gteval")}
    for table, rows, schema in (("generations", gens, GENERATIONS), (UNIEVAL_TABLE.name, judg, UNIEVAL_TABLE.schema),
                                (ARENA_TABLE.name, pairwise["botchat_arena"], ARENA_TABLE.schema),
                                (GTEVAL_TABLE.name, pairwise["botchat_gteval"], GTEVAL_TABLE.schema),
                                ("plans", plans, PLANS), ("utterance_lengths", lengths, LENGTHS),
                                ("elo", elo, ELO), ("runs", runs, RUNS), ("seeds", seeds_rows, SEEDS)):
        lake.write(table, pa.Table.from_pylist(rows, schema=schema))
        counts[table] = len(rows)
    counts["pairwise_comparisons"] = len(arena)
    return counts


def _pairwise(key, protocol, item, model, opponent, position, verdict, winner, n, judge, run) -> dict:
    return {"cell_key": key, "protocol": protocol, "protocol_version": "v1", "item_id": item, "model": model,
            "judge": judge, "judge_fp": "jfp", "generation_key": f"g-{model}-{item}", "n_judged": n,
            "raw_output": f"Choice: {verdict}", "parsed": verdict is not None, "opponent": opponent,
            "opponent_generation_key": None if opponent == "human" else f"g-{opponent}-{item}",
            "position": position, "verdict": verdict, "winner": winner, "reason": "…", "run_id": run,
            "created_at": T0}


def timed(write, repeats: int) -> tuple[list[float], list[float], object]:
    """``write()`` run ``repeats`` times: the wall seconds of each, the CPU seconds of each (all of this process's
    threads: less sensitive to other processes on the machine than the wall time), and the last result."""
    times, cpu, result = [], [], None
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = write()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return times, cpu, result


def run_bench(*, models: int, seeds: int, arena_seeds: int, repeats: int) -> dict:
    from dialogbench.explorer import write_explorer
    from dialogbench.registry import open_lake
    from dialogbench.lake.catalog import connect
    from dialogbench.report.build import write_report

    with tempfile.TemporaryDirectory(prefix="dialogbench-report-bench-") as tmp:
        start = time.perf_counter()
        counts = synthetic_lake(Path(tmp) / "lake", models=model_names(models), seeds=seeds, arena_seeds=arena_seeds)
        build_s = time.perf_counter() - start
        with connect(open_lake(Path(tmp) / "lake")) as con:
            views = sorted(r[0] for r in con.sql("select view_name from duckdb_views() where not internal").fetchall())
        times, cpu, paths = timed(lambda: write_report(open_lake(Path(tmp) / "lake"), Path(tmp) / "out"), repeats)
        sizes = {kind: path.stat().st_size for kind, path in paths.items()}
        explorer_times, explorer_cpu, page = timed(lambda: write_explorer(open_lake(Path(tmp) / "lake"), Path(tmp) / "out"),
                                                   repeats)
        sizes["explorer"] = page.stat().st_size
    medians = {"write_report": statistics.median(times), "write_explorer": statistics.median(explorer_times)}
    return {"models": models, "seeds": seeds, "arena_seeds": arena_seeds, "rows": counts, "views": views,
            "lake_build_s": build_s, "write_report_s": times, "write_report_median_s": medians["write_report"],
            "write_report_cpu_s": cpu, "write_explorer_s": explorer_times,
            "write_explorer_median_s": medians["write_explorer"], "write_explorer_cpu_s": explorer_cpu,
            "target_s": TARGET_S, "under_target": {k: v < TARGET_S for k, v in medians.items()}, "bytes": sizes}


def code_info() -> dict:
    """The checkout whose code is timed: its path and commit (with "+ uncommitted changes"; None outside git)."""
    import dialogbench
    from dialogbench.environment import commit

    return {"dialogbench": str(Path(dialogbench.__file__).resolve().parent), "commit": commit(REPO_ROOT)}


def format_report(result: dict) -> str:
    lines = [f"report bench: {result['models']} models x {result['seeds']} seeds "
             f"(arena: {result['arena_seeds']} seeds, both orders)", ""]
    lines += [f"  {table:<20} {count:>9,} rows" for table, count in result["rows"].items()]
    lines += ["", f"  lake build            {result['lake_build_s']:8.2f} s",
              "  write_report          " + "  ".join(f"{t:.2f}" for t in result["write_report_s"]) + " s",
              f"  median                {result['write_report_median_s']:8.2f} s",
              "    CPU                 " + "  ".join(f"{t:.2f}" for t in result["write_report_cpu_s"]) + " s",
              "  write_explorer        " + "  ".join(f"{t:.2f}" for t in result["write_explorer_s"]) + " s",
              f"  median                {result['write_explorer_median_s']:8.2f} s",
              "    CPU                 " + "  ".join(f"{t:.2f}" for t in result["write_explorer_cpu_s"]) + " s",
              f"  report.html           {result['bytes']['html'] / 1024:8.0f} KiB",
              f"  report.md             {result['bytes']['md'] / 1024:8.0f} KiB",
              f"  explorer.html         {result['bytes']['explorer'] / 1024:8.0f} KiB",
              f"  views defined: {', '.join(result['views'])}", ""]
    lines += [f"  load average at start {result['machine']['loadavg_at_start'][0]:.2f} ({result['machine']['nproc']} CPUs)"]
    lines += [f"  {page:<21} median {result[f'{page}_median_s']:.2f} s: {'under' if ok else 'OVER'} the "
              f"{result['target_s']:g} s target" for page, ok in result["under_target"].items()]
    if "code" in result:
        lines.append(f"  code timed: {result['code']['dialogbench']} (commit {result['code']['commit'] or 'unknown'})")
    return "\n".join(lines)


def size_parser(description: str | None) -> argparse.ArgumentParser:
    """A bench's argument parser with the size of its ``synthetic_lake`` (``--models``, ``--seeds``, ``--arena-seeds``;
    the paper's by default): the benches that time the report, the server and queries over that lake."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=14)
    parser.add_argument("--seeds", type=int, default=547)
    parser.add_argument("--arena-seeds", type=int, default=222)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = size_parser(__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    from bench.record import record

    result = {**record(script=__file__, argv=argv), "code": code_info(),
              **run_bench(models=args.models, seeds=args.seeds, arena_seeds=args.arena_seeds, repeats=args.repeats)}
    result["machine"]["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    print(format_report(result))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, default=str))
    return 0 if all(result["under_target"].values()) else 1


if __name__ == "__main__":
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        sys.path[0] = str(REPO_ROOT)  # this checkout's dialogbench, not an installed one (nor bench/'s modules)
    sys.exit(main())
