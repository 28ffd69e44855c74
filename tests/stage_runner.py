"""Running single stages in tests the way the flow does (plan → chunks → record-less), by stage name."""

from __future__ import annotations

from dialogbench.run import registry
from dialogbench.botchat.selection import comparison_seeds, selected_seeds  # noqa: F401  (re-exported)
from dialogbench.mtbench101.selection import selected_dialogues  # noqa: F401
from dialogbench.cells.runner import plan_stage, run_chunk, run_stage
from dialogbench.history.snapshot import record_config, snapshot_metrics
from dialogbench.lake.catalog import connect
from dialogbench.run.runs import StageReport


def plan(config, name: str, run_id: str):
    """The stage's chunks and planned report; a stage this config does not run plans nothing."""
    try:
        stage = registry.stage(config, name)
    except KeyError:
        return [], StageReport(name, detail={"enabled": False})
    return plan_stage(stage, config, run_id, lake=registry.open_lake(config.lake))


def compute(config, chunk, run_id: str) -> StageReport:
    return run_chunk(registry.stage(config, chunk.stage), config, chunk, run_id, lake=registry.open_lake(config.lake))


def run(config, name: str, run_id: str = "run-test") -> StageReport:
    """Plan and compute the whole stage (a stage this config does not run reports enabled: false)."""
    try:
        stage = registry.stage(config, name)
    except KeyError:
        return StageReport(name, detail={"enabled": False})
    return run_stage(stage, config, run_id, lake=registry.open_lake(config.lake))



def run_all(config, run_id: str) -> dict[str, StageReport]:
    """Every stage of the config in order, as a run computes them without Prefect; the reports by stage name."""
    return {stage.name: run_stage(stage, config, run_id, lake=registry.open_lake(config.lake))
            for stage in registry.stages(config)}


def night(config, run_id: str) -> int:
    """A nightly run without Prefect: ``run_all``, then what the run records after its stages (its config, as
    ``night.yaml``, and the snapshot of its metrics); returns how many snapshot rows it wrote."""
    lake = registry.open_lake(config.lake)
    run_all(config, run_id)
    record_config(lake, config, run_id=run_id, config_path="night.yaml")
    with connect(lake, board=config.board) as con:
        return snapshot_metrics(con, lake, config, run_id=run_id, families=registry.families())

# The old per-family entry points, as thin names over the one mechanism.
def extract_seeds(config) -> StageReport:
    return run(config, "extract_seeds")


def generate(config, model: str, run_id: str) -> StageReport:
    return run(config, f"generate:{model}", run_id)


def plan_unieval(config, run_id: str):
    return plan(config, "botchat_unieval", run_id)


def plan_arena(config, run_id: str):
    return plan(config, "botchat_arena", run_id)


def plan_gteval(config, run_id: str):
    return plan(config, "botchat_gteval", run_id)


def plan_judging(config, run_id: str):
    return plan(config, "mtbench101_judge", run_id)


judge_unieval = judge_arena = judge_gteval = judge = compute


def answer(config, model: str, run_id: str) -> StageReport:
    return run(config, f"mtbench101_answer:{model}", run_id)


def run_game(config, game: str, run_id: str) -> StageReport:
    return run(config, f"gameeval_{game}", run_id)


def lengths(config, run_id: str = "run-test") -> StageReport:
    return run(config, "botchat_lengths", run_id)


def elo(config, run_id: str) -> StageReport:
    return run(config, "botchat_elo", run_id)
