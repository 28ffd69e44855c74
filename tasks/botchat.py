"""BotChat tasks: seeds, one model's dialogues, UniEval planning and one UniEval chunk."""

from prefect import task
from prefect.cache_policies import NO_CACHE

from dialogbench.botchat import stages
from dialogbench.botchat.stages import JudgeChunk
from dialogbench.config import Config
from dialogbench.runs import StageReport


@task(name="extract-seeds", cache_policy=NO_CACHE)
def extract_seeds(config: Config) -> StageReport:
    return stages.extract_seeds(config)


@task(name="generate-dialogues", task_run_name="generate-{model_name}", cache_policy=NO_CACHE,
      retries=1, retry_delay_seconds=10)
def generate_dialogues(config: Config, model_name: str, run_id: str) -> StageReport:
    """All missing dialogues of one model, one backend call per utterance step (resumes on retry)."""
    return stages.generate(config, model_name, run_id)


@task(name="plan-unieval", cache_policy=NO_CACHE)
def plan_unieval(config: Config, run_id: str) -> tuple[list[JudgeChunk], StageReport]:
    return stages.plan_unieval(config, run_id)


@task(name="judge-unieval-chunk", task_run_name="judge-unieval-{chunk.index}-of-{chunk.total}",
      cache_policy=NO_CACHE, retries=2, retry_delay_seconds=[10, 60])
def judge_unieval_chunk(config: Config, chunk: JudgeChunk, run_id: str) -> StageReport:
    """One backend call for a chunk of UniEval cells (retried: judges are usually remote endpoints)."""
    return stages.judge_unieval(config, chunk, run_id)
