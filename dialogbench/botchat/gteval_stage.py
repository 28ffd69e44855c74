"""The GTEval stage: each model's dialogue against the human (MuTual) one, both cut to the same
length L, judged in both orders; a model wins when the judge takes the human dialogue for the AI one."""

from __future__ import annotations

import logging

import pyarrow as pa

from dialogbench.backends.formats import format_key
from dialogbench.botchat import arena, pairwise_stage
from dialogbench.botchat.config import chatbots
from dialogbench.botchat.pairwise_stage import Pair, PairwiseStage
from dialogbench.botchat.tables import GTEVAL_TABLE
from dialogbench.cells import Cell
from dialogbench.run.config import ModelConfig
from dialogbench.cells.keys import fingerprint, model_fingerprint
from dialogbench.lake import Lake

log = logging.getLogger("dialogbench.botchat.gteval")
PROTOCOL = "botchat_gteval"
HUMAN = "human"


def _pick(generations: list[dict], human_length: int) -> dict:
    """The shortest stored dialogue reaching the human length, else the longest (then L is its length)."""
    reaching = [g for g in generations if g["n_target"] >= human_length]
    return reaching[0] if reaching else max(generations, key=lambda g: g["n_target"])


class GTEval(PairwiseStage):
    """Two cells (model first, human first) per model and seed with a stored dialogue, both sides cut
    to L = min(human length, generated length) (README: generated dialogues are trimmed to the ground
    truth's length). The key covers the generation, the seed (item_fp and the human text shown), L and
    the order. Seeds without a dialogue of the model are skipped and counted."""

    name = PROTOCOL
    kind = "gteval"
    table = GTEVAL_TABLE

    def pairs(self, config, lake: Lake, seeds: pa.Table, judge: ModelConfig) -> tuple[list[Cell], dict[str, int]]:
        models = chatbots(config)
        seed_rows = seeds.select(["seed_id", "item_fp", "dialogue"]).to_pylist()
        stored = pairwise_stage.stored_generations(lake, models, [s["seed_id"] for s in seed_rows])
        judge_fp, version = model_fingerprint(judge), arena.protocol_version("gteval")
        fmt = format_key(judge, arena.output_format(max_tokens=judge.max_tokens))
        cells: list[Cell] = []
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
                    cells.append(Cell(
                        fingerprint(PROTOCOL, version, judge_fp, gen["cell_key"], seed["item_fp"], fingerprint(human),
                                    length, position, *fmt), seed["seed_id"], {"model": model.name}, judge=judge.name,
                        payload=Pair(model=model.name, generation_key=gen["cell_key"], opponent=HUMAN,
                                     opponent_generation_key=None, position=position, n_judged=length,
                                     first=first, second=second)))
            skipped[model.name] = len(seed_rows) - compared
            log.info("gteval %s: %d seeds compared, %d skipped (missing dialogues)",
                     model.name, compared, len(seed_rows) - compared)
        return cells, skipped
