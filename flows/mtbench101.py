"""The MT-Bench-101 flow: answers (per model, golden or self-predicted context) → judge chunks.

It only wires tasks; a disabled protocol answers and judges nothing.
"""

from __future__ import annotations

from prefect import flow, unmapped

from dialogbench.config import Config
from tasks.lake import record
from tasks.mtbench101 import answer_turns, judge_turns_chunk, plan_turn_judging


@flow(name="mtbench101", log_prints=True)
def mtbench101(config: Config, run_id: str, config_path: str) -> list[dict]:
    stages = []
    for model in config.mtbench101_models():  # one model at a time: each holds the accelerator
        stages.append(record(config, run_id, [answer_turns(config, model.name, run_id)], config_path))
    chunks, planned = plan_turn_judging(config, run_id)
    judged = judge_turns_chunk.map(unmapped(config), chunks, unmapped(run_id)).result()
    stages.append(record(config, run_id, [planned, *judged], config_path))
    return [s.to_dict() for s in stages]
