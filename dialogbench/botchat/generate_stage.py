"""The BotChat generation stage: plan missing dialogues, generate them in lock-step, write cells."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import pyarrow as pa

from dialogbench.backends import get_backend, sampling_for
from dialogbench.botchat.generation import DialogueState, generate_dialogues
from dialogbench.config import ModelConfig
from dialogbench.keys import fingerprint
from dialogbench.lake import Lake
from dialogbench.lake.schemas import FAILURES, GENERATIONS
from dialogbench.runs import StageReport, now

log = logging.getLogger("dialogbench.botchat.generation")
PROTOCOL = "botchat"
ALGORITHM_VERSION = "botchat-algorithm1-v1"
STATE = "_state"  # in-progress dialogues, checkpointed after every step; not a result table


def model_fingerprint(model: ModelConfig) -> str:
    return fingerprint(model.fingerprint_fields())


def dialogue_key(*, item_fp: str, model_fp: str, system_prompt: str) -> str:
    return fingerprint(PROTOCOL, ALGORITHM_VERSION, system_prompt, item_fp, model_fp)


def cell_key(dialogue: str, n_target: int) -> str:
    return fingerprint(dialogue, n_target)


@dataclass
class GenerationPlan:
    model: str
    planned: int
    cached: int
    states: list[DialogueState]
    item_ids: dict[str, str]  # dialogue_key → item id


def plan_generation(*, lake: Lake, seeds: pa.Table, model: ModelConfig, system_prompt: str,
                    n_target: int) -> GenerationPlan:
    """Dialogues of ``model`` that have no stored generation of length >= ``n_target``. Each starts
    from the longest stored (or checkpointed) prefix, else from its ChatSEED."""
    model_fp = model_fingerprint(model)
    keys = [dialogue_key(item_fp=fp, model_fp=model_fp, system_prompt=system_prompt)
            for fp in seeds.column("item_fp").to_pylist()]
    planned = pa.table({"dialogue_key": keys, "item_id": seeds.column("seed_id"), "seed": seeds.column("seed")})
    with lake.connect() as con:
        con.register("planned", planned)
        gens = lake.relation_sql("generations", GENERATIONS)
        missing = con.sql(f"""
            SELECT p.* FROM planned p ANTI JOIN
              (SELECT dialogue_key, max(n_target) AS n FROM {gens} GROUP BY dialogue_key) g
              ON p.dialogue_key = g.dialogue_key AND g.n >= {int(n_target)}
        """).to_arrow_table()
        con.register("missing", missing)
        prefixes = {r["dialogue_key"]: r for r in con.sql(f"""
            SELECT g.dialogue_key, g.utterances, g.completion_tokens, g.backend_version
            FROM {gens} g SEMI JOIN missing USING (dialogue_key)
            QUALIFY row_number() OVER (PARTITION BY g.dialogue_key ORDER BY len(g.utterances) DESC) = 1
        """).to_arrow_table().to_pylist()}
    prefixes.update(_load_checkpoint(lake, model, model_fp, set(missing.column("dialogue_key").to_pylist())))
    states = []
    for row in missing.to_pylist():
        prefix = prefixes.get(row["dialogue_key"])
        if prefix and len(prefix["utterances"]) > len(row["seed"]):
            generated = len(prefix["utterances"]) - len(row["seed"])
            keep = min(generated, n_target - len(row["seed"]))
            engines = {v for v in (prefix.get("backend_version") or "").split("; ") if v}
            states.append(DialogueState(row["dialogue_key"], list(prefix["utterances"])[:len(row["seed"]) + keep],
                                        n_target, completion_tokens=list(prefix["completion_tokens"])[:keep],
                                        engines=engines))
        else:
            states.append(DialogueState(row["dialogue_key"], list(row["seed"]), n_target))
    return GenerationPlan(model=model.name, planned=len(keys), cached=len(keys) - missing.num_rows,
                          states=states, item_ids=dict(zip(missing.column("dialogue_key").to_pylist(),
                                                           missing.column("item_id").to_pylist())))


def run_generation(*, lake: Lake, plan: GenerationPlan, model: ModelConfig, system_prompt: str,
                   run_id: str) -> StageReport:
    """Generate every planned dialogue (one backend call per utterance step), then write the finished
    ones as cells and the failed ones to ``failures``. Progress is checkpointed after each step."""
    report = StageReport(f"generate:{model.name}", planned=plan.planned, cached=plan.cached)
    if not plan.states:
        log.info("%s: all %d dialogues cached", model.name, plan.planned)
        return report
    loading = time.perf_counter()
    backend = get_backend(model)
    start = time.perf_counter()  # throughput in the progress lines leaves the weights' loading out
    model_fp = model_fingerprint(model)
    steps = plan.states[0].n_target - min(len(s.utterances) for s in plan.states)
    tokens_before = backend.stats.completion_tokens

    def on_step(step: int, states) -> None:
        tokens = backend.stats.completion_tokens - tokens_before
        elapsed = time.perf_counter() - start
        log.info("%s: step %d/%d, %d/%d dialogues done, %d tokens (%.1f tok/s)", model.name, step, steps,
                 sum(s.done for s in states), len(states), tokens, tokens / max(elapsed, 1e-9))
        _save_checkpoint(lake, model, model_fp, states)

    generate_dialogues(plan.states, backend=backend, sampling=sampling_for(model), system_prompt=system_prompt,
                       context_window=model.context_window, on_step=on_step)
    created = now()
    ok = [s for s in plan.states if s.error is None]
    bad = [s for s in plan.states if s.error is not None]
    rows = [{"cell_key": cell_key(s.key, s.n_target), "dialogue_key": s.key, "protocol": PROTOCOL,
             "item_id": plan.item_ids[s.key], "model": model.name, "model_fp": model_fp, "n_target": s.n_target,
             "utterances": s.utterances, "completion_tokens": s.completion_tokens,
             "empty_utterances": s.empty_utterances, "trimmed_steps": s.trimmed_steps, "run_id": run_id,
             "created_at": created, "backend": model.backend,
             # a dialogue extended from a stored prefix keeps the engine that wrote that prefix too
             "backend_version": "; ".join(sorted(s.engines)) or None}
            for s in ok]
    lake.write("generations", pa.Table.from_pylist(rows, schema=GENERATIONS),
               partition={"protocol": PROTOCOL, "model": model.name})
    failures = [{"cell_key": cell_key(s.key, s.n_target), "stage": "botchat_generation",
                 "item_id": plan.item_ids[s.key], "model": model.name, "judge": None, "error": s.error,
                 "run_id": run_id, "created_at": created} for s in bad]
    lake.write("failures", pa.Table.from_pylist(failures, schema=FAILURES), partition={"stage": "botchat_generation"})
    _clear_checkpoint(lake, model, model_fp)
    report.computed, report.failed = len(ok), len(bad)
    report.seconds = time.perf_counter() - loading
    report.detail = {"backend_calls": steps, "load_seconds": round(start - loading, 2), "completion_tokens": backend.stats.completion_tokens - tokens_before,
                     "empty_utterances": sum(s.empty_utterances for s in ok),
                     "trimmed_dialogues": sum(s.trimmed_steps > 0 for s in ok)}
    if report.detail["empty_utterances"]:
        log.warning("%s: %d empty utterances generated (kept, counted in generations.empty_utterances)",
                    model.name, report.detail["empty_utterances"])
    return report


def _checkpoint_name(model: ModelConfig, model_fp: str) -> str:
    return f"{model.name}-{model_fp}.parquet"


def _save_checkpoint(lake: Lake, model: ModelConfig, model_fp: str, states) -> None:
    rows = [{"dialogue_key": s.key, "utterances": s.utterances, "completion_tokens": s.completion_tokens,
             "backend_version": "; ".join(sorted(s.engines)) or None} for s in states if s.error is None]
    schema = pa.schema([("dialogue_key", pa.string()), ("utterances", pa.list_(pa.string())),
                        ("completion_tokens", pa.list_(pa.int32())), ("backend_version", pa.string())])
    lake.write(STATE, pa.Table.from_pylist(rows, schema=schema), partition={"stage": "botchat_generation"},
               name=_checkpoint_name(model, model_fp))


def _load_checkpoint(lake: Lake, model: ModelConfig, model_fp: str, keys: set[str]) -> dict[str, dict]:
    import pyarrow.parquet as pq

    path = lake.table_dir(STATE) / "stage=botchat_generation" / _checkpoint_name(model, model_fp)
    if not path.exists():
        return {}
    rows = pq.read_table(path).to_pylist()
    resumed = {r["dialogue_key"]: r for r in rows if r["dialogue_key"] in keys}
    if resumed:
        log.info("%s: resuming %d dialogues from the checkpoint of an interrupted run", model.name, len(resumed))
    return resumed


def _clear_checkpoint(lake: Lake, model: ModelConfig, model_fp: str) -> None:
    (lake.table_dir(STATE) / "stage=botchat_generation" / _checkpoint_name(model, model_fp)).unlink(missing_ok=True)
