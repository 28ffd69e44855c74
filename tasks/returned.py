"""A flow's value, even when Prefect's final state comes back without it.

A flow called with ``return_state=True`` (the family subflows, the pipeline from the CLI) hands back its final
state, the returned value in it. Not always: when the API client's request setting that state gets no answer in
time (a read timeout on a loaded server) it sends it again, the server has already committed the first and rejects
the second as a duplicate transition, and the client gets the server's copy of the state, which holds no value (no
result is persisted: every task is ``NO_CACHE`` and no result storage is set). ``state.result()`` then raises
``MissingResult`` though the flow finished (CI saw it once, on a loaded machine). So every flow of ``flows/`` keeps
what it returned in this process, by flow run id (``keeping_returned``), and ``result_of`` takes the value from
there when the state lost it.

Prefect's public surface only (``FlowRunContext``, ``State``); the server's answer is the orchestration rule that
rejects a duplicate transition and returns the state already set (PrefectHQ/prefect PR #11695), and Prefect has no
way to get a subflow's value back from ``return_state=True`` without persisting results (PrefectHQ/prefect#11667).
``tests/flows/test_prefect_internals.py`` checks that a state without data still raises ``MissingResult``."""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar
from uuid import UUID

from prefect.context import FlowRunContext
from prefect.states import State

F = TypeVar("F", bound=Callable[..., Any])
_returned: dict[UUID, Any] = {}
_NOT_KEPT = object()


def keeping_returned(fn: F) -> F:
    """``fn``, keeping what it returns (a value or a State) under its flow run's id until ``result_of`` reads it."""

    @functools.wraps(fn)  # (its __dict__ too: the signature and marks set on ``fn``)
    def call(*args: Any, **kwargs: Any) -> Any:
        value = fn(*args, **kwargs)
        context = FlowRunContext.get()
        if context is not None and context.flow_run is not None:
            _returned[context.flow_run.id] = value
        return value

    return call  # type: ignore[return-value]


def result_of(state: State, *, raise_on_failure: bool = True) -> Any:
    """``state.result(raise_on_failure=...)``; when the state came back without its data, what the flow returned
    (a State it returned gives its own result)."""
    returned = _returned.pop(state.state_details.flow_run_id, _NOT_KEPT)
    if state.data is None and returned is not _NOT_KEPT:
        if isinstance(returned, State):
            return returned.result(raise_on_failure=raise_on_failure)
        return returned
    return state.result(raise_on_failure=raise_on_failure)
