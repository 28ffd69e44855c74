"""How a unit's attempt ends, from what stopped it (no Prefect here; ``flows/work.py`` turns it into the flow run's
state, and a unit of this box into its exit code, ``box.state`` reads back):

- ``CANCELLED``: its dispatching run withdrew it (it stopped, or it is gone: ``units.Withdrawn``). Nobody is paged
  (the failure automation is on Failed and Crashed) and nothing is sent again: there is no run to send it for.
- ``CRASHED``: a transient error of an API it depends on (the Prefect server answering 503 while its SQLite database
  is locked, a 429, a time-out, a dropped connection). The dispatching run sends it again, as it does a unit whose
  process was killed; the cells it committed stay.
- ``FAILED``: anything else (a bug, a bad config): sent again it would fail again.
"""

from __future__ import annotations

from typing import Iterator

from dialogbench.dispatch.units import Withdrawn

TRANSIENT_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})  # HTTP answers worth asking again
EXIT = {"COMPLETED": 0, "FAILED": 1, "CRASHED": 75, "CANCELLED": 76}  # a unit process's exit code (75: EX_TEMPFAIL)


def causes(exc: BaseException | None) -> Iterator[BaseException]:
    """``exc``, what it was raised from or during, and the members of an exception group, each once."""
    seen: set[int] = set()
    todo = [exc] if exc is not None else []
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo += [e for e in (current.__cause__, current.__context__) if e is not None]
        todo += list(getattr(current, "exceptions", ()) or ())


def transient(exc: BaseException) -> bool:
    """An error that asking again later may not repeat: a time-out, a dropped or refused connection, or an HTTP answer
    in ``TRANSIENT_STATUS`` (httpx's errors: Prefect's client raises them)."""
    import httpx  # (Prefect's client library; imported here, where an error is looked at)

    if isinstance(exc, (httpx.TransportError, TimeoutError, ConnectionError)):
        return not isinstance(exc, (httpx.UnsupportedProtocol, httpx.LocalProtocolError))
    if isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code in TRANSIENT_STATUS
    return False


def ending(exc: BaseException | None) -> tuple[str, str]:
    """(state, why) for an attempt that ended on ``exc`` (None: it ended without one: FAILED, nothing to add)."""
    found = list(causes(exc))
    withdrawn = next((e for e in found if isinstance(e, Withdrawn)), None)
    if withdrawn is not None:
        return "CANCELLED", str(withdrawn)
    flaky = next((e for e in found if transient(e)), None)
    if flaky is not None:
        return "CRASHED", f"a transient error, sent again: {type(flaky).__name__}: {flaky}"
    return "FAILED", ""


def exit_state(code: int) -> str:
    """A unit process's exit code as the state it ended in (``EXIT``; killed by a signal: CRASHED)."""
    if code < 0:
        return "CRASHED"
    return next((state for state, value in EXIT.items() if value == code), "FAILED")
