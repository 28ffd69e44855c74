"""BotChat Arena and GTEval as the Prefect tasks call them: config in, lake written, a StageReport
out (the counterpart of ``stages.plan_unieval`` / ``stages.judge_unieval``)."""

from __future__ import annotations

import logging

import pyarrow as pa
import pyarrow.compute as pc

from dialogbench.botchat import arena, arena_stage, gteval_stage
from dialogbench.botchat.stages import JudgeChunk, selected_seeds
from dialogbench.config import Config
from dialogbench.lake import Lake
from dialogbench.runs import StageReport

log = logging.getLogger("dialogbench.botchat")


def comparison_seeds(config: Config, *, min_human_utterances: int, limit: int | None) -> pa.Table:
    """The selected seeds (``botchat.limit``) whose human dialogue has >= ``min_human_utterances``
    (the paper's 222 with 4), the first ``limit`` of them."""
    seeds = selected_seeds(config)
    seeds = seeds.filter(pc.greater_equal(seeds.column("n_utterances"), min_human_utterances))
    return seeds.slice(0, limit) if limit else seeds


def _chunks(cells: list, size: int) -> list[JudgeChunk]:
    total = (len(cells) + size - 1) // size
    return [JudgeChunk(k + 1, total, cells[i: i + size]) for k, i in enumerate(range(0, len(cells), size))]


def _report(stage: str, cells: list, planned: int, cached: int, skipped: dict[str, int],
            size: int) -> tuple[list[JudgeChunk], StageReport]:
    chunks = _chunks(cells, size)
    log.info("%s: %d planned, %d cached, %d to judge in %d chunks, %d seeds skipped (missing dialogues)",
             stage, planned, cached, len(cells), len(chunks), sum(skipped.values()))
    return chunks, StageReport(stage, planned=planned, cached=cached,
                               detail={"skipped_missing_dialogues": sum(skipped.values()), "skipped": skipped})


def plan_arena(config: Config, run_id: str) -> tuple[list[JudgeChunk], StageReport]:
    """Missing Arena cells (both orders of every pair, seed and N), in chunks of ``judge_chunk_size``;
    none when the arena is disabled."""
    settings = config.botchat.arena
    if not (config.botchat.enabled and settings.enabled):
        return [], StageReport(arena_stage.PROTOCOL, detail={"enabled": False})
    seeds = comparison_seeds(config, min_human_utterances=settings.min_human_utterances, limit=settings.limit)
    cells, planned, cached, skipped = arena_stage.plan_arena(
        lake=Lake(config.lake), models=config.botchat_models(), judge=config.model(config.botchat.judge),
        pairs=settings.pairs, seeds=seeds, n_values=settings.n, version=arena.protocol_version("arena"),
        run_id=run_id)
    return _report(arena_stage.PROTOCOL, cells, planned, cached, skipped, config.botchat.judge_chunk_size)


def judge_arena(config: Config, chunk: JudgeChunk, run_id: str) -> StageReport:
    report = arena_stage.judge_arena_chunk(lake=Lake(config.lake), cells=chunk.cells,
                                           judge=config.model(config.botchat.judge),
                                           version=arena.protocol_version("arena"), run_id=run_id)
    log.info("arena: chunk %d/%d done (%d cells)", chunk.index, chunk.total, len(chunk.cells))
    return report


def plan_gteval(config: Config, run_id: str) -> tuple[list[JudgeChunk], StageReport]:
    """Missing GTEval cells (model first and human first, per model and seed), in chunks; none when
    GTEval is disabled."""
    settings = config.botchat.gteval
    if not (config.botchat.enabled and settings.enabled):
        return [], StageReport(gteval_stage.PROTOCOL, detail={"enabled": False})
    seeds = comparison_seeds(config, min_human_utterances=settings.min_human_utterances, limit=settings.limit)
    cells, planned, cached, skipped = gteval_stage.plan_gteval(
        lake=Lake(config.lake), models=config.botchat_models(), judge=config.model(config.botchat.judge),
        seeds=seeds, version=arena.protocol_version("gteval"), run_id=run_id)
    return _report(gteval_stage.PROTOCOL, cells, planned, cached, skipped, config.botchat.judge_chunk_size)


def judge_gteval(config: Config, chunk: JudgeChunk, run_id: str) -> StageReport:
    report = gteval_stage.judge_gteval_chunk(lake=Lake(config.lake), cells=chunk.cells,
                                             judge=config.model(config.botchat.judge),
                                             version=arena.protocol_version("gteval"), run_id=run_id)
    log.info("gteval: chunk %d/%d done (%d cells)", chunk.index, chunk.total, len(chunk.cells))
    return report
