"""Prefect keeps no secret of a run, whatever config field it hides in (docs/reliability.md,
"No secret is stored").

Two things Prefect stores do not pass through logging, where ``dialogbench.text.redact.install`` already redacts every
record: a flow run's parameters (``Flow.serialize_parameters``: a family subflow takes the whole ``Config``, so an
engine's ``hf_token`` or a password in a ``weights`` URL would be shown in the UI as written), and a failed task's or
flow's state message (``str(exception)``: an engine failing to load can quote the URL it was given). So the flows
and tasks of ``flows/`` and ``tasks/`` are made with these two decorators instead of Prefect's own:

- ``flow``: the flow records a redacted copy of its parameters (``dialogbench.text.redact.redact_tree``: the values of
  keys naming a secret, URL passwords and tokens, Authorization values, key shapes and the config's own secret values
  are ``[REDACTED]``; ``RedactedParametersFlow`` overrides ``Flow.serialize_parameters``, with Prefect's other
  internals in ``flows/prefect_internals.py``); the call itself gets the real objects. The subflow is created by the
  process that runs the parent flow, so this holds for a run from the CLI and from a deployment's worker alike.
  (Subflows loading the config from its path instead would give a run two configs when the file changes meanwhile,
  and preflight once per family.) Prefect's ``Flow.with_options`` makes a plain ``Flow``: call these flows as they are.
- ``task`` (and ``flow``): an exception leaves the function with its text redacted
  (``dialogbench.text.redact.redact_exception``), so the state message Prefect stores for the task run, and for the flow
  run that re-raises it, holds no secret.

Task runs store no parameter values (their inputs are references and type names) and every task here uses
``NO_CACHE`` (no cache key, no persisted result), so these two are the whole of it; logs and artifacts are redacted
where they are made (``dialogbench.text.redact.install``, ``tasks/artifacts.py``).
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, TypeVar

import prefect

from dialogbench.text.redact import redact_exception
from flows.prefect_internals import RedactedParametersFlow, flow_version
from tasks.returned import keeping_returned

F = TypeVar("F", bound=Callable[..., Any])


def redacted_errors(fn: F) -> F:
    """``fn``, raising its exceptions with their text redacted (same type where the text allows it). The wrapper
    carries ``fn``'s signature with its annotations resolved: Prefect validates a flow's parameters against them,
    resolving names in the wrapper's module otherwise (where ``Config`` is not)."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            raise redact_exception(exc)  # the same exception, its text redacted, or a redacted one caused by it

    call.redacts_errors = True  # type: ignore[attr-defined]  # (tests check every task and flow has it)
    try:
        call.__signature__ = inspect.signature(fn, eval_str=True)  # type: ignore[attr-defined]
    except (NameError, TypeError, SyntaxError):  # a name only imported for type checkers: leave it as written
        pass
    return call  # type: ignore[return-value]


def flow(**options: Any) -> Callable[[Callable[..., Any]], RedactedParametersFlow]:
    """Like ``prefect.flow(**options)``, with redacted parameters and errors, and its returned value kept for
    ``tasks.returned.result_of``. Its version stays the hash of the function's own file (Prefect would hash the
    wrapper's, ``tasks/returned.py``)."""

    def make(fn: Callable[..., Any]) -> RedactedParametersFlow:
        source = inspect.getsourcefile(fn)
        if source and "version" not in options:
            options["version"] = flow_version(source)
        return RedactedParametersFlow(fn=keeping_returned(redacted_errors(fn)), **options)

    return make


def task(**options: Any) -> Callable[[Callable[..., Any]], prefect.Task]:
    """Like ``prefect.task(**options)``, with redacted errors."""

    def make(fn: Callable[..., Any]) -> prefect.Task:
        return prefect.task(**options)(redacted_errors(fn))

    return make
