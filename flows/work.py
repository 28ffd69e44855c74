"""A unit of a run's model work (``dialogbench/dispatch.py``): one model's stages (or one game's) written into the
lake under the dispatching run's id, while this attempt is the unit's current one. On a worker of the dispatch work
pool (deployed as ``dialogbench-work``, prefect.yaml) its GPUs are the worker's (CUDA_VISIBLE_DEVICES in its
environment, else every GPU it sees); on this box (``python -m flows.work``, ``dialogbench/box.py``) the ones the
run gave it. Wiring only."""

from __future__ import annotations

from prefect.states import Failed

from flows.family import family
from tasks.dispatch import attempt_guard, load_unit_config
from tasks.redacted import flow
from tasks.returned import result_of


@flow(name="dialogbench-work", flow_run_name="{unit}", log_prints=True)
def work(config_path: str, overrides: dict, run_id: str, unit: str, family_stages: dict[str, list[str]],
         token: str, groups: dict[str, list[str]] | None = None):
    """The unit's stages, family by family, as the dispatching run would have run them (``groups``: the stages it
    runs only for its group of models); Failed when a family's subflow is, or when the unit was sent again (this
    attempt then commits nothing more)."""
    config = load_unit_config(config_path, overrides, run_id)
    done = []
    with attempt_guard(config, unit, token):
        for name, stages in family_stages.items():
            state = family(config, run_id, name, stages, config_path, groups, return_state=True)
            if not state.is_completed():
                return Failed(message=f"{unit}: {name}: {state.message}")
            done += result_of(state)
    return done


if __name__ == "__main__":  # a unit on this box (dialogbench/box.py): its parameters as JSON on stdin
    import json
    import sys

    from dialogbench.box import die_with_parent

    parameters = json.load(sys.stdin)
    die_with_parent(parameters.pop("parent_pid"))
    work(**parameters)
