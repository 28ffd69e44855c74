"""A task worker for dispatched units (``dispatch.task_workers``): a long-lived process on one GPU slot that takes unit
after unit (``flows.work.work_unit``) from the run's Prefect server, so Python, Prefect and the run's modules start
once per worker, not once per unit as a work pool's process worker starts them. Start one per GPU set, on any box
that reaches the server and the lake, from the repository root:

    CUDA_VISIBLE_DEVICES=0 PREFECT_API_URL=http://server:4200/api python -m flows.unit_worker

``--limit`` units at a time (1: the GPU is the unit's). A unit's GPUs are the worker's (CUDA_VISIBLE_DEVICES, else
every GPU it sees); it closes its engines when it ends. The first SIGTERM or SIGINT stops the worker: it takes no
more units, the one in flight stops as a run does (``dialogbench/run/stopping.py``: its chunk gets ``--stop-timeout``
seconds) and ends Crashed, so that its dispatching run sends it again, elsewhere; a second one stops it at once.
Wiring only."""

from __future__ import annotations

import argparse
import asyncio
import sys

from dialogbench.run import stopping
from flows import prefect_internals

POLL_S = 0.5  # how often the worker looks for a stop


async def _serve(task, limit: int) -> None:
    """Serve ``task`` until a stop was asked and no unit is in flight: after the stop the worker takes no other."""
    worker = prefect_internals.pulling_task_worker_class()(task, limit=limit, on_signal=stopping.handle)
    serving = asyncio.ensure_future(worker.start())  # (the worker is made in the loop it serves on)
    while not serving.done():
        await asyncio.sleep(POLL_S)
        if stopping.requested() is not None:
            worker.pulling = False
            if not any(worker.in_flight_task_runs.values()):
                serving.cancel()
    try:
        await serving
    except asyncio.CancelledError:
        pass


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m flows.unit_worker", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--limit", type=int, default=1, help="units at a time (default 1: the GPU is the unit's)")
    p.add_argument("--stop-timeout", type=float, default=stopping.DEFAULT_TIMEOUT_S,
                   help="seconds the chunk in flight keeps computing after a stop (default %(default)s)")
    args = p.parse_args(argv)
    if args.limit < 1:
        p.error("--limit must be at least 1")
    from prefect.settings import get_current_settings

    if not get_current_settings().api.url:
        print("python -m flows.unit_worker: no Prefect server to take units from: set PREFECT_API_URL to the "
              "dispatching run's server", file=sys.stderr)
        return 2
    # what every unit uses, imported now: the worker's start is paid once, before its first unit
    import dialogbench.run.registry  # noqa: F401
    import flows.family_subflow  # noqa: F401
    from dialogbench.dispatch import placement
    from flows.work import work_unit

    stopping.install(args.stop_timeout)
    gpus = placement.use(None).devices
    print(f"unit worker: GPUs {','.join(gpus) or 'none'}, {args.limit} unit(s) at a time, server "
          f"{get_current_settings().api.url}", flush=True)
    asyncio.run(_serve(work_unit, args.limit))
    stop = stopping.requested()
    print(f"unit worker: stopped by {stop.name}" if stop else "unit worker: ended", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
