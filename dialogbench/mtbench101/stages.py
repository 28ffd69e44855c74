"""MT-Bench-101 stages as the Prefect tasks call them: config in, lake written, a StageReport out
(the counterpart of ``botchat.stages`` / ``botchat.comparison_stages``). Disabled: nothing planned."""

from __future__ import annotations

import logging

from dialogbench import schedule
from dialogbench.botchat.stages import JudgeChunk
from dialogbench.config import Config
from dialogbench.lake import Lake
from dialogbench.mtbench101 import answer_stage, judge_stage
from dialogbench.mtbench101.dataset import Dialogue, read_dialogues
from dialogbench.runs import StageReport
from dialogbench.schedule import release_before

log = logging.getLogger("dialogbench.mtbench101")
PROTOCOL = answer_stage.PROTOCOL


def selected_dialogues(config: Config) -> list[Dialogue]:
    """The dialogues of ``mtbench101.tasks`` (all 13 by default), the first ``limit`` of each task in
    file order, in file order."""
    settings = config.mtbench101
    tasks = set(settings.tasks) if settings.tasks else None
    taken: dict[str, int] = {}
    chosen = []
    for dialogue in read_dialogues(settings.dataset):
        if tasks is not None and dialogue.task not in tasks:
            continue
        if settings.limit and taken.get(dialogue.task, 0) >= settings.limit:
            continue
        taken[dialogue.task] = taken.get(dialogue.task, 0) + 1
        chosen.append(dialogue)
    return chosen


def _answer_chunk_size(config: Config) -> int | None:
    return getattr(config.mtbench101, "answer_chunk_size", None) or answer_stage.ANSWER_CHUNK_SIZE


def answer(config: Config, model_name: str, run_id: str) -> StageReport:
    """All missing answers of one model. Backends no stage from here on needs are released first
    (see ``dialogbench.schedule``)."""
    if not config.mtbench101.enabled:
        return StageReport(f"{answer_stage.STAGE}:{model_name}", detail={"enabled": False})
    lake, model = Lake(config.lake), config.model(model_name)
    release_before(config, schedule.answer_stage(model_name))
    plan = answer_stage.plan_answers(lake=lake, dialogues=selected_dialogues(config), model=model,
                                     context=config.mtbench101.context)
    return answer_stage.run_answers(lake=lake, plan=plan, model=model, run_id=run_id,
                                    chunk_size=_answer_chunk_size(config))


def _chunks(cells: list, size: int) -> list[JudgeChunk]:
    total = (len(cells) + size - 1) // size
    return [JudgeChunk(k + 1, total, cells[i: i + size]) for k, i in enumerate(range(0, len(cells), size))]


def plan_judging(config: Config, run_id: str) -> tuple[list[JudgeChunk], StageReport]:
    """Missing judge cells of the stored answers (current model configs, selected dialogues), in
    chunks of ``mtbench101.judge_chunk_size``; the plan is recorded for the metrics."""
    settings = config.mtbench101
    if not settings.enabled:
        return [], StageReport(PROTOCOL, detail={"enabled": False})
    release_before(config, schedule.MTBENCH101_JUDGE)
    cells, counts = judge_stage.plan_judging(
        lake=Lake(config.lake), dialogues=selected_dialogues(config), models=config.mtbench101_models(),
        judge=config.mtbench101_judge(), context=settings.context, judge_max_tokens=settings.judge_max_tokens,
        run_id=run_id)
    chunks = _chunks(cells, settings.judge_chunk_size)
    log.info("mtbench101: %d planned, %d cached, %d to judge in %d chunks, %d turns not answered yet",
             counts["planned"], counts["cached"], len(cells), len(chunks), counts["unanswered"])
    return chunks, StageReport(PROTOCOL, planned=counts["planned"], cached=counts["cached"],
                               detail={"unanswered": counts["unanswered"], "chunks": len(chunks)})


def judge(config: Config, chunk: JudgeChunk, run_id: str) -> StageReport:
    report = judge_stage.judge_chunk(lake=Lake(config.lake), cells=chunk.cells, judge=config.mtbench101_judge(),
                                     judge_max_tokens=config.mtbench101.judge_max_tokens, run_id=run_id)
    log.info("mtbench101: chunk %d/%d done (%d cells)", chunk.index, chunk.total, len(chunk.cells))
    return report
