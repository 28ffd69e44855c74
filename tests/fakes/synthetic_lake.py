"""A lake at the papers' scale, made up: the base tables of M models x S seeds (BotChat generations, UniEval, Arena
and GTEval verdicts, Elo, lengths, plans, runs) with model i better than model i+1, for the report's and the
explorer's tests and for ``bench/report.py``, which times the pages on it."""

from __future__ import annotations

import datetime as dt
import itertools
from pathlib import Path

import numpy as np
import pyarrow as pa

T0 = dt.datetime(2026, 11, 20, 3, 0, tzinfo=dt.timezone.utc)
JUDGE = "gpt-4-0613"


def model_names(m: int) -> list[str]:
    return [f"model-{i:02d}" for i in range(m)]


def synthetic_lake(root: Path, *, models: list[str], seeds: int, arena_seeds: int = 0, n: int = 16,
                   arena_ns: tuple[int, ...] = (8, 16), seed: int = 0, judge: str = JUDGE,
                   utterance=lambda model, item, i: f"{model} line {i} about seed {item}.") -> dict[str, int]:
    """Write the base tables for ``models`` x ``seeds``; model i is better than model i+1. Returns row counts."""
    from dialogbench.run.registry import open_lake
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
                arena.append(pairwise_row(key, "botchat_arena", item, first, second, 1, verdict, winners[verdict],
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
                arena.append(pairwise_row(key, "botchat_gteval", item, model, "human", position, verdict, win,
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


def pairwise_row(key, protocol, item, model, opponent, position, verdict, winner, n, judge, run) -> dict:
    return {"cell_key": key, "protocol": protocol, "protocol_version": "v1", "item_id": item, "model": model,
            "judge": judge, "judge_fp": "jfp", "generation_key": f"g-{model}-{item}", "n_judged": n,
            "raw_output": f"Choice: {verdict}", "parsed": verdict is not None, "opponent": opponent,
            "opponent_generation_key": None if opponent == "human" else f"g-{opponent}-{item}",
            "position": position, "verdict": verdict, "winner": winner, "reason": "…", "run_id": run,
            "created_at": T0}
