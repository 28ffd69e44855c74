"""A unit of a run's model work (``dialogbench/dispatch/units.py``): one model's stages (or one game's) written into the
lake under the dispatching run's id, while this attempt is the unit's current one. On a worker of the dispatch work
pool (deployed as ``dialogbench-work``, prefect.yaml) its GPUs are the worker's (CUDA_VISIBLE_DEVICES in its
environment, else every GPU it sees); on this box (``python -m flows.work``, ``dialogbench/dispatch/box.py``) the ones the
run gave it. Wiring only.

A unit beats (``dispatch.heartbeat``) from its first moment: what comes before its work (Prefect imported, its flow
run made, the config loaded and checked, the family's modules imported, its engines loaded) can take longer than
``dispatch.dead_after_s``, and a unit silent that long is presumed dead, every attempt of it alike. So this module
imports nothing slow before the beat starts: on this box, before Prefect itself.

The same unit is also a task (``work_unit``) that task workers take (``dispatch.task_workers``,
``flows/unit_worker.py``): warm, long-lived processes on any box, Prefect and the modules already imported."""

from __future__ import annotations

import json
import os
import sys

from dialogbench.dispatch import units as dispatch  # the lake's names and the beat: nothing slow


def _on_this_box() -> int:
    """A unit on this box (``dialogbench/dispatch/box.py``): its parameters on stdin, its beat started before anything
    else; returns the exit code of the state its flow run ended in (``outcome.EXIT``, which ``box.state`` reads)."""
    parameters = json.load(sys.stdin)
    with dispatch.heartbeat(parameters["overrides"]["lake"], parameters["unit"], parameters["token"]):
        from dialogbench.dispatch.box import die_with_parent

        die_with_parent(parameters.pop("parent_pid"))
        return _one(parameters)


def _one(parameters: dict) -> int:
    """Run one unit's flow (beating already); the exit code of the state it ended in."""
    from dialogbench.dispatch.outcome import EXIT
    from flows.work import work as flow  # this file as a module: the flow a worker of the pool runs too

    state = flow(**parameters, return_state=True)
    if state.type.value != "COMPLETED":
        print(f"{parameters['unit']}: ended {state.type.value.lower()}: {state.message}", file=sys.stderr)
    return EXIT.get(state.type.value, EXIT["FAILED"])


def _serve(results_fd: int, parent: int) -> int:
    """A warm slot on this box (``dispatch.warm``): unit after unit, each one's parameters a line on stdin, its exit
    code a line ``{"seq": …, "exit": …}`` on ``results_fd``; Python, Prefect and the run's modules are started once for
    all of them. It ends at the end of stdin, after a unit that did not complete (what it leaves behind is not reused)
    and when a stop was asked (SIGTERM: the unit in flight stops as a unit's process does)."""
    from dialogbench.backends import engines
    from dialogbench.dispatch.box import die_with_parent
    from dialogbench.run import stopping

    die_with_parent(parent)
    results = os.fdopen(results_fd, "w", buffering=1)
    for line in sys.stdin:
        parameters = json.loads(line)
        seq = parameters.pop("seq")
        print(f"=== {parameters['unit']} (slot request {seq}) ===", flush=True)
        with dispatch.heartbeat(parameters["overrides"]["lake"], parameters["unit"], parameters["token"]):
            code = _one(parameters)
            engines.close_all()  # the next unit's models are others: the GPU is theirs
        results.write(json.dumps({"seq": seq, "exit": code}) + "\n")
        if code != 0 or stopping.requested() is not None:
            return code
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        sys.exit(_serve(int(sys.argv[2]), int(sys.argv[3])))
    sys.exit(_on_this_box())

from prefect.cache_policies import NO_CACHE  # noqa: E402  (Prefect: after the box's beat started)

from flows import prefect_internals  # noqa: E402
from tasks.redacted import flow, task  # noqa: E402

UNIT_TASK_KEY = "dialogbench-unit"  # what task workers subscribe to (flows/unit_worker.py), whatever their checkout


@flow(name="dialogbench-work", flow_run_name="{unit}", log_prints=True)
def work(config_path: str, overrides: dict, run_id: str, unit: str, family_stages: dict[str, list[str]],
         token: str, groups: dict[str, list[str]] | None = None):
    """The unit's stages, family by family, as the dispatching run would have run them (``groups``: the stages it
    runs only for its group of models). It ends as ``dialogbench.dispatch.outcome`` says: Cancelled when its run
    withdrew it (stopped, or gone: no lease), Crashed on a transient API error (sent again), Failed otherwise (a
    family's subflow failed, or the unit was sent again: this attempt then commits nothing more). ``overrides`` holds
    the lake (the dispatching run puts it there): the beat starts before the config is loaded."""
    return _unit(config_path, overrides, run_id, unit, family_stages, token, groups)


@task(name="dialogbench-unit", task_run_name="{unit}", cache_policy=NO_CACHE, log_prints=True)
def work_unit(config_path: str, overrides: dict, run_id: str, unit: str, family_stages: dict[str, list[str]],
              token: str, groups: dict[str, list[str]] | None = None):
    """The same unit as ``work``, as a task run that a task worker (``flows/unit_worker.py``: a long-lived process
    on a GPU slot, ``dispatch.task_workers``) takes: Python, Prefect and the run's modules are already started, so
    only the unit's engines load. It ends in the state ``work`` would, except when its worker was stopped: then
    Crashed, so that the dispatching run sends it again, to another worker. It closes its engines (the next unit's
    models are others: the GPU is theirs)."""
    from prefect.states import Crashed, State

    from dialogbench.backends import engines
    from dialogbench.run import stopping

    try:
        ended_in = _unit(config_path, overrides, run_id, unit, family_stages, token, groups)
    except BaseException:
        if stopping.requested() is None:
            raise
        ended_in = None
    finally:
        engines.close_all()
    stop = stopping.requested()
    if stop is not None and (ended_in is None or isinstance(ended_in, State) and not ended_in.is_cancelled()):
        return Crashed(message=f"{unit}: its task worker was stopped ({stop.name}) mid-unit; what it committed "
                               "stays, and the dispatching run sends it again")
    return ended_in


prefect_internals.stable_task_key(work_unit, UNIT_TASK_KEY)  # Prefect's hashes the code, its file's path in it


def _unit(config_path: str, overrides: dict, run_id: str, unit: str, family_stages: dict[str, list[str]],
          token: str, groups: dict[str, list[str]] | None):
    """``work``'s body, a flow run's or a task run's: the unit's families while ``token`` is its current attempt;
    what they returned, or the state it ended in."""
    with dispatch.heartbeat(overrides["lake"], unit, token):  # on this box: beating already
        from tasks.dispatch import attempt_guard, check_unit, ended

        try:
            from dialogbench.run.registry import build_run
            from flows.family_subflow import family
            from tasks.returned import result_of

            run = build_run(config_path, overrides)  # this unit's entry point: the dispatching run's config and flags
            check_unit(run, run_id, unit, token)
            done = []
            with attempt_guard(run.config, unit, token):
                for name, stages in family_stages.items():
                    state = family(run, run_id, name, stages, groups, return_state=True)
                    if not state.is_completed():
                        return ended(unit, f"{name}: {state.message}", state)
                    done += result_of(state)
            return done
        except Exception as exc:
            state = ended(unit, f"{type(exc).__name__}: {exc}", exc)
            if state.is_failed():
                raise  # anything else fails the run as it would, its traceback in its log
            return state
