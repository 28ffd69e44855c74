"""The BotChat flow: seeds → dialogues (per model) → lengths → UniEval, Arena, GTEval (chunks) → ratings.

It only wires tasks; every decision (what is missing, what a protocol's config enables) lives in
``dialogbench``: a disabled protocol plans no chunks.
"""

from __future__ import annotations

from prefect import flow, unmapped

from dialogbench.config import Config
from tasks.botchat import (arena_ratings, extract_seeds, generate_dialogues, judge_arena_chunk, judge_gteval_chunk,
                           judge_unieval_chunk, plan_arena, plan_gteval, plan_unieval, utterance_lengths)
from tasks.lake import record


@flow(name="botchat", log_prints=True)
def botchat(config: Config, run_id: str, config_path: str) -> list[dict]:
    stages = [record(config, run_id, [extract_seeds(config)], config_path)]
    for model in config.botchat_models():  # one model at a time: each holds the accelerator
        stages.append(record(config, run_id, [generate_dialogues(config, model.name, run_id)], config_path))
    stages.append(record(config, run_id, [utterance_lengths(config)], config_path))

    chunks, planned = plan_unieval(config, run_id)
    judged = judge_unieval_chunk.map(unmapped(config), chunks, unmapped(run_id)).result()
    stages.append(record(config, run_id, [planned, *judged], config_path))

    chunks, planned = plan_arena(config, run_id)
    judged = judge_arena_chunk.map(unmapped(config), chunks, unmapped(run_id)).result()
    stages.append(record(config, run_id, [planned, *judged], config_path))

    chunks, planned = plan_gteval(config, run_id)
    judged = judge_gteval_chunk.map(unmapped(config), chunks, unmapped(run_id)).result()
    stages.append(record(config, run_id, [planned, *judged], config_path))

    stages.append(record(config, run_id, [arena_ratings(config, run_id)], config_path))
    return [s.to_dict() for s in stages]
