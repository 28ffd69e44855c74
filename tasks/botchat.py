"""BotChat tasks: seeds, one model's dialogues, length statistics, and planning / judging one chunk of
each judged protocol (UniEval, Arena, GTEval), then the arena ratings."""

from prefect import task
from prefect.cache_policies import NO_CACHE

from dialogbench.botchat import comparison_stages, stages
from dialogbench.botchat.elo_stage import compute_elo
from dialogbench.botchat.lengths import compute_lengths
from dialogbench.botchat.stages import JudgeChunk
from dialogbench.config import Config
from dialogbench.lake import Lake
from dialogbench.runs import StageReport

JUDGE_RETRIES = dict(retries=2, retry_delay_seconds=[10, 60])  # judges are usually remote endpoints


@task(name="extract-seeds", cache_policy=NO_CACHE)
def extract_seeds(config: Config) -> StageReport:
    return stages.extract_seeds(config)


@task(name="generate-dialogues", task_run_name="generate-{model_name}", cache_policy=NO_CACHE,
      retries=1, retry_delay_seconds=10)
def generate_dialogues(config: Config, model_name: str, run_id: str) -> StageReport:
    """All missing dialogues of one model, one backend call per utterance step (resumes on retry)."""
    return stages.generate(config, model_name, run_id)


@task(name="utterance-lengths", cache_policy=NO_CACHE)
def utterance_lengths(config: Config) -> StageReport:
    return compute_lengths(lake=Lake(config.lake))


@task(name="plan-unieval", cache_policy=NO_CACHE)
def plan_unieval(config: Config, run_id: str) -> tuple[list[JudgeChunk], StageReport]:
    return stages.plan_unieval(config, run_id)


@task(name="judge-unieval-chunk", task_run_name="judge-unieval-{chunk.index}-of-{chunk.total}",
      cache_policy=NO_CACHE, **JUDGE_RETRIES)
def judge_unieval_chunk(config: Config, chunk: JudgeChunk, run_id: str) -> StageReport:
    return stages.judge_unieval(config, chunk, run_id)


@task(name="plan-arena", cache_policy=NO_CACHE)
def plan_arena(config: Config, run_id: str) -> tuple[list[JudgeChunk], StageReport]:
    return comparison_stages.plan_arena(config, run_id)


@task(name="judge-arena-chunk", task_run_name="judge-arena-{chunk.index}-of-{chunk.total}",
      cache_policy=NO_CACHE, **JUDGE_RETRIES)
def judge_arena_chunk(config: Config, chunk: JudgeChunk, run_id: str) -> StageReport:
    return comparison_stages.judge_arena(config, chunk, run_id)


@task(name="plan-gteval", cache_policy=NO_CACHE)
def plan_gteval(config: Config, run_id: str) -> tuple[list[JudgeChunk], StageReport]:
    return comparison_stages.plan_gteval(config, run_id)


@task(name="judge-gteval-chunk", task_run_name="judge-gteval-{chunk.index}-of-{chunk.total}",
      cache_policy=NO_CACHE, **JUDGE_RETRIES)
def judge_gteval_chunk(config: Config, chunk: JudgeChunk, run_id: str) -> StageReport:
    return comparison_stages.judge_gteval(config, chunk, run_id)


@task(name="arena-ratings", cache_policy=NO_CACHE)
def arena_ratings(config: Config, run_id: str) -> StageReport:
    """Bootstrap Elo and Bradley–Terry per (judge, N) from the current arena comparisons."""
    return compute_elo(lake=Lake(config.lake), elo=config.botchat.arena.elo, run_id=run_id)
