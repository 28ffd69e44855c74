"""The BotChat generation stage of one model: plan the missing dialogues, generate them in lock-step."""

from __future__ import annotations

import logging
import time

import pyarrow as pa

from dialogbench.backends import get_backend, sampling_for
from dialogbench.botchat.generation import DialogueState, generate_dialogues
from dialogbench.botchat.seeds import SEED_LENGTH, read_seeds
from dialogbench.botchat.selection import selected_seeds
from dialogbench.botchat.tables import GENERATIONS_TABLE
from dialogbench.cells import Cell, Emit, Planned, Stage
from dialogbench.run.config import ModelConfig
from dialogbench.cells.keys import fingerprint, model_fingerprint
from dialogbench.lake import Lake, manifest
from dialogbench.run.runs import now
from dialogbench.text.lengths import typical_reply_tokens

log = logging.getLogger("dialogbench.botchat.generation")
PROTOCOL = "botchat"
ALGORITHM_VERSION = "botchat-algorithm1-v1"
STATE = "_state"  # in-progress dialogues, checkpointed after every step; not a result table


def dialogue_key(*, item_fp: str, model_fp: str, system_prompt: str) -> str:
    return fingerprint(PROTOCOL, ALGORITHM_VERSION, system_prompt, item_fp, model_fp)


def cell_key(dialogue: str, n_target: int) -> str:
    return fingerprint(dialogue, n_target)


class GenerateDialogues(Stage):
    """Every selected seed's dialogue of one model, generated to ``botchat.n_max`` utterances."""

    table = GENERATIONS_TABLE

    def __init__(self, model: str) -> None:
        self.model_name = model
        self.name = f"generate:{model}"

    def models(self, config) -> list[ModelConfig]:
        return [config.model(self.model_name)]

    def tokens_per_cell(self, config) -> int:
        return (config.botchat.n_max - 2) * config.model(self.model_name).max_tokens  # every utterance after the seed

    def typical_tokens_per_cell(self, config) -> float | None:
        """Every utterance after the seed as long as the dataset's human ones after its seeds (each capped at the
        model's max_tokens)."""
        dialogues = read_seeds(config.botchat.dataset).column("dialogue").to_pylist()
        per_reply = typical_reply_tokens((u for d in dialogues for u in d[SEED_LENGTH:]),
                                         cap=config.model(self.model_name).max_tokens)
        return None if per_reply is None else (config.botchat.n_max - 2) * per_reply

    def plan(self, config, lake: Lake) -> Planned:
        """A cell per seed; one is missing when no stored generation reaches ``n_target``. Each missing
        dialogue starts from the longest stored (or checkpointed) prefix, else from its ChatSEED."""
        model, n_target = config.model(self.model_name), config.botchat.n_max
        seeds, model_fp = selected_seeds(config, lake), model_fingerprint(model)
        keys = [dialogue_key(item_fp=fp, model_fp=model_fp, system_prompt=config.botchat.system_prompt)
                for fp in seeds.column("item_fp").to_pylist()]
        planned = pa.table({"dialogue_key": keys, "item_id": seeds.column("seed_id"), "seed": seeds.column("seed")})
        with lake.connect() as con:
            con.register("planned", planned)
            gens = lake.relation_sql(self.table.name, self.table.schema)
            missing = con.sql(f"""
                SELECT p.* FROM planned p ANTI JOIN
                  (SELECT dialogue_key, max(n_target) AS n FROM {gens} GROUP BY dialogue_key) g
                  ON p.dialogue_key = g.dialogue_key AND g.n >= {int(n_target)}
            """).to_arrow_table()
            con.register("missing", missing)
            prefixes = {r["dialogue_key"]: r for r in con.sql(f"""
                SELECT g.dialogue_key, g.utterances, g.completion_tokens, g.prompt_tokens, g.backend_version
                FROM {gens} g SEMI JOIN missing USING (dialogue_key)
                QUALIFY row_number() OVER (PARTITION BY g.dialogue_key ORDER BY len(g.utterances) DESC) = 1
            """).to_arrow_table().to_pylist()}
        prefixes.update(_load_checkpoint(lake, model, model_fp, set(missing.column("dialogue_key").to_pylist())))
        todo = {row["dialogue_key"]: _start(row, prefixes.get(row["dialogue_key"]), n_target) for row in missing.to_pylist()}
        cells = [Cell(cell_key(key, n_target), item, {"model": model.name}, payload=todo.get(key))
                 for key, item in zip(keys, seeds.column("seed_id").to_pylist())]
        return Planned(cells, todo=[c for c in cells if c.payload is not None])

    def compute(self, config, cells: list[Cell], emit: Emit) -> None:
        """Generate every cell's dialogue in lock-step (one backend call per utterance step), then write
        the finished ones and the failed ones. Progress is checkpointed after each step."""
        model, lake = config.model(self.model_name), emit.lake
        loading = time.perf_counter()
        backend = get_backend(model)
        start = time.perf_counter()  # throughput in the progress lines leaves the weights' loading out
        model_fp = model_fingerprint(model)
        states = [c.payload for c in cells]
        steps = states[0].n_target - min(len(s.utterances) for s in states)
        tokens_before = backend.stats.completion_tokens

        def on_step(step: int, states) -> None:
            tokens = backend.stats.completion_tokens - tokens_before
            elapsed = time.perf_counter() - start
            log.info("%s: step %d/%d, %d/%d dialogues done, %d tokens (%.1f tok/s)", model.name, step, steps,
                     sum(s.done for s in states), len(states), tokens, tokens / max(elapsed, 1e-9))
            _save_checkpoint(lake, model, model_fp, states)

        generate_dialogues(states, backend=backend, sampling=sampling_for(model),
                           system_prompt=config.botchat.system_prompt, context_window=model.context_window,
                           on_step=on_step)
        created = now()
        ok = [(c, c.payload) for c in cells if c.payload.error is None]
        emit([{"cell_key": c.key, "dialogue_key": s.key, "protocol": PROTOCOL, "item_id": c.item_id,
               "model": model.name, "model_fp": model_fp, "n_target": s.n_target, "utterances": s.utterances,
               "completion_tokens": s.completion_tokens, "prompt_tokens": s.prompt_tokens,
               "empty_utterances": s.empty_utterances,
               "trimmed_steps": s.trimmed_steps, "max_tokens": model.max_tokens, "run_id": emit.run_id, "created_at": created,
               "backend": model.backend,
               # a dialogue extended from a stored prefix keeps the engine that wrote that prefix too
               "backend_version": "; ".join(sorted(s.engines)) or None} for c, s in ok],
             [(c, c.payload.error, None) for c in cells if c.payload.error is not None])
        _clear_checkpoint(lake, model, model_fp)
        emit.detail = {"backend_calls": steps, "load_seconds": round(start - loading, 2),
                       "completion_tokens": backend.stats.completion_tokens - tokens_before,
                       "empty_utterances": sum(s.empty_utterances for _, s in ok),
                       "trimmed_dialogues": sum(s.trimmed_steps > 0 for _, s in ok)}
        if emit.detail["empty_utterances"]:
            log.warning("%s: %d empty utterances generated (kept, counted in generations.empty_utterances)",
                        model.name, emit.detail["empty_utterances"])


def _start(row: dict, prefix: dict | None, n_target: int) -> DialogueState:
    """The dialogue's state: the stored prefix cut to ``n_target``, else its ChatSEED."""
    if prefix and len(prefix["utterances"]) > len(row["seed"]):
        generated = len(prefix["utterances"]) - len(row["seed"])
        keep = min(generated, n_target - len(row["seed"]))
        engines = {v for v in (prefix.get("backend_version") or "").split("; ") if v}
        # a prefix stored (or checkpointed) before prompt tokens were kept has none: None per utterance
        prompt_tokens = list(prefix.get("prompt_tokens") or [None] * generated)[:keep]
        return DialogueState(row["dialogue_key"], list(prefix["utterances"])[:len(row["seed"]) + keep], n_target,
                             completion_tokens=list(prefix["completion_tokens"])[:keep], prompt_tokens=prompt_tokens,
                             engines=engines)
    return DialogueState(row["dialogue_key"], list(row["seed"]), n_target)


def _checkpoint_name(model: ModelConfig, model_fp: str) -> str:
    return f"{model.name}-{model_fp}.parquet"


def _save_checkpoint(lake: Lake, model: ModelConfig, model_fp: str, states) -> None:
    rows = [{"dialogue_key": s.key, "utterances": s.utterances, "completion_tokens": s.completion_tokens,
             "prompt_tokens": s.prompt_tokens, "backend_version": "; ".join(sorted(s.engines)) or None}
            for s in states if s.error is None]
    schema = pa.schema([("dialogue_key", pa.string()), ("utterances", pa.list_(pa.string())),
                        ("completion_tokens", pa.list_(pa.int32())), ("prompt_tokens", pa.list_(pa.int32())),
                        ("backend_version", pa.string())])
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
    manifest.remove(lake.table_dir(STATE) / "stage=botchat_generation" / _checkpoint_name(model, model_fp))
