"""MT-Bench-101 tasks: one model's answers, planning the judge chunks, judging one chunk."""

from prefect import task
from prefect.cache_policies import NO_CACHE

from dialogbench.botchat.stages import JudgeChunk
from dialogbench.config import Config
from dialogbench.mtbench101 import stages
from dialogbench.runs import StageReport


@task(name="answer-turns", task_run_name="answer-{model_name}", cache_policy=NO_CACHE, retries=1,
      retry_delay_seconds=10)
def answer_turns(config: Config, model_name: str, run_id: str) -> StageReport:
    """Every missing judged turn of one model (golden context: one batch; self: one call per turn)."""
    return stages.answer(config, model_name, run_id)


@task(name="plan-mtbench101-judging", cache_policy=NO_CACHE)
def plan_turn_judging(config: Config, run_id: str) -> tuple[list[JudgeChunk], StageReport]:
    return stages.plan_judging(config, run_id)


@task(name="judge-mtbench101-chunk", task_run_name="judge-mtbench101-{chunk.index}-of-{chunk.total}",
      cache_policy=NO_CACHE, retries=2, retry_delay_seconds=[10, 60])
def judge_turns_chunk(config: Config, chunk: JudgeChunk, run_id: str) -> StageReport:
    return stages.judge(config, chunk, run_id)
