"""BotChat stages as the Prefect tasks call them: config in, lake written, a StageReport out."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from dialogbench import schedule
from dialogbench.botchat import generate_stage, unieval, unieval_stage
from dialogbench.botchat.seeds import read_seeds
from dialogbench.config import Config
from dialogbench.lake import Lake
from dialogbench.runs import StageReport
from dialogbench.schedule import release_before

log = logging.getLogger("dialogbench.botchat")


def extract_seeds(config: Config) -> StageReport:
    """Read and validate the dataset; write the ``seeds`` table when it differs from the stored one
    (an unchanged dataset is cached, a changed one replaces the table). BotChat off: nothing."""
    if not config.botchat.enabled:
        return StageReport("extract_seeds", detail={"enabled": False})
    lake = Lake(config.lake)
    seeds = read_seeds(config.botchat.dataset)
    with_gt = sum(n >= 4 for n in seeds.column("n_utterances").to_pylist())
    log.info("seeds: %d ChatSEEDs (%d with >= 4 human utterances)", seeds.num_rows, with_gt)
    detail = {"with_4_or_more": with_gt}
    if lake.has("seeds") and lake.read("seeds").sort_by("line").equals(seeds.sort_by("line")):
        return StageReport("extract_seeds", planned=seeds.num_rows, cached=seeds.num_rows, detail=detail)
    lake.write("seeds", seeds, partition={"dataset": "mutual_test"}, name="seeds.parquet")
    return StageReport("extract_seeds", planned=seeds.num_rows, computed=seeds.num_rows, detail=detail)


def selected_seeds(config: Config):
    seeds = Lake(config.lake).read("seeds").sort_by("line")
    return seeds.slice(0, config.botchat.limit) if config.botchat.limit else seeds


def generate(config: Config, model_name: str, run_id: str) -> StageReport:
    """All missing dialogues of one model. Backends no stage from here on needs are released first
    (one model at a time on the accelerator; see ``dialogbench.schedule``)."""
    lake = Lake(config.lake)
    model = config.model(model_name)
    release_before(config, schedule.generate_stage(model_name))
    plan = generate_stage.plan_generation(lake=lake, seeds=selected_seeds(config), model=model,
                                          system_prompt=config.botchat.system_prompt, n_target=config.botchat.n_max)
    return generate_stage.run_generation(lake=lake, plan=plan, model=model,
                                         system_prompt=config.botchat.system_prompt, run_id=run_id)


@dataclass(frozen=True)
class JudgeChunk:
    """A slice of the missing judgments: one Prefect task, one backend call."""

    index: int
    total: int
    cells: list[unieval_stage.JudgeCell]


def plan_unieval(config: Config, run_id: str) -> tuple[list[JudgeChunk], StageReport]:
    """Missing UniEval cells, cut into chunks of ``judge_chunk_size`` (one Prefect task each)."""
    if not config.botchat.enabled:
        return [], StageReport(unieval_stage.PROTOCOL, detail={"enabled": False})
    release_before(config, schedule.BOTCHAT_JUDGES)
    examples = unieval.load_examples(config.botchat.unieval_examples)
    cells, planned, cached = unieval_stage.plan_unieval(
        lake=Lake(config.lake), models=config.botchat_models(), judge=config.model(config.botchat.judge),
        item_ids=selected_seeds(config).column("seed_id").to_pylist(), n_judged=config.botchat.n_max,
        version=unieval.protocol_version(examples), run_id=run_id)
    size = config.botchat.judge_chunk_size
    total = (len(cells) + size - 1) // size
    chunks = [JudgeChunk(k + 1, total, cells[i: i + size]) for k, i in enumerate(range(0, len(cells), size))]
    log.info("unieval: %d planned, %d cached, %d to judge in %d chunks", planned, cached, len(cells), len(chunks))
    return chunks, StageReport(unieval_stage.PROTOCOL, planned=planned, cached=cached)


def judge_unieval(config: Config, chunk: JudgeChunk, run_id: str) -> StageReport:
    examples = unieval.load_examples(config.botchat.unieval_examples)
    report = unieval_stage.judge_unieval_chunk(
        lake=Lake(config.lake), cells=chunk.cells, judge=config.model(config.botchat.judge), examples=examples,
        n_judged=config.botchat.n_max, version=unieval.protocol_version(examples), run_id=run_id)
    log.info("unieval: chunk %d/%d done (%d cells)", chunk.index, chunk.total, len(chunk.cells))
    return report
