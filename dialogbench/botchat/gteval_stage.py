"""The GTEval stage: each model's dialogue against the human (MuTual) one, both cut to the same
length L, judged in both orders; a model wins when the judge takes the human dialogue for the AI one."""

from __future__ import annotations

import logging

import pyarrow as pa

from dialogbench.backends.formats import format_key
from dialogbench.botchat import arena, pairwise
from dialogbench.botchat.generate_stage import model_fingerprint
from dialogbench.botchat.pairwise import PairCell
from dialogbench.config import ModelConfig
from dialogbench.keys import fingerprint
from dialogbench.lake import Lake
from dialogbench.runs import StageReport

log = logging.getLogger("dialogbench.botchat.gteval")
PROTOCOL = "botchat_gteval"
HUMAN = "human"


def _pick(generations: list[dict], human_length: int) -> dict:
    """The shortest stored dialogue reaching the human length, else the longest (then L is its length)."""
    reaching = [g for g in generations if g["n_target"] >= human_length]
    return reaching[0] if reaching else max(generations, key=lambda g: g["n_target"])


def plan_gteval(*, lake: Lake, models: list[ModelConfig], judge: ModelConfig, seeds: pa.Table, version: str,
                run_id: str) -> tuple[list[PairCell], int, int, dict[str, int]]:
    """Two cells (model first, human first) per model and seed with a stored dialogue, both sides
    cut to L = min(human length, generated length) (README: generated dialogues are trimmed to the
    ground truth's length). The key covers the generation, the seed (item_fp and the human text
    shown), L and the order. Seeds without a dialogue of the model are skipped and counted."""
    seed_rows = seeds.select(["seed_id", "item_fp", "dialogue"]).to_pylist()
    stored = pairwise.stored_generations(lake, models, [s["seed_id"] for s in seed_rows])
    judge_fp = model_fingerprint(judge)
    fmt = format_key(judge, arena.output_format(max_tokens=judge.max_tokens))
    cells: list[PairCell] = []
    skipped: dict[str, int] = {}
    for model in models:
        compared = 0
        for seed in seed_rows:
            generations = stored.get((model.name, seed["seed_id"]))
            if not generations:
                continue
            compared += 1
            gen = _pick(generations, len(seed["dialogue"]))
            length = min(len(seed["dialogue"]), len(gen["utterances"]))
            generated, human = tuple(gen["utterances"][:length]), tuple(seed["dialogue"][:length])
            for position, (first, second) in ((1, (generated, human)), (2, (human, generated))):
                cells.append(PairCell(
                    cell_key=fingerprint(PROTOCOL, version, judge_fp, gen["cell_key"], seed["item_fp"],
                                         fingerprint(human), length, position, *fmt),
                    item_id=seed["seed_id"], model=model.name, generation_key=gen["cell_key"], opponent=HUMAN,
                    opponent_generation_key=None, position=position, n_judged=length, first=first, second=second,
                    plan_label=model.name))
        skipped[model.name] = len(seed_rows) - compared
        log.info("gteval %s: %d seeds compared, %d skipped (missing dialogues)",
                 model.name, compared, len(seed_rows) - compared)
    missing = pairwise.record_plan(lake=lake, cells=cells, stage=PROTOCOL, judge=judge, run_id=run_id)
    todo = [c for c in cells if c.cell_key in missing]
    return todo, len(cells), len(cells) - len(todo), skipped


def judge_gteval_chunk(*, lake: Lake, cells: list[PairCell], judge: ModelConfig, version: str,
                       run_id: str) -> StageReport:
    """One backend call for the chunk; rows into ``judgments`` with protocol ``botchat_gteval``."""
    return pairwise.judge_pairs_chunk(lake=lake, cells=cells, judge=judge, kind="gteval", protocol=PROTOCOL,
                                      version=version, run_id=run_id)
