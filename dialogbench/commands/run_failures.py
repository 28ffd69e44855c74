"""Why a run failed (``dialogbench run`` exit 4), as the terminal says it: a one-line headline of what failed, one
line per reason, and where to look, the query that lists the failed cells among it, ready to paste."""

from __future__ import annotations

from pathlib import Path

from dialogbench.commands.say import count

HEADLINE_MAX = 120  # characters; the parts that do not fit are counted ("2 more")
_PROBLEM_KINDS = {"judge checks": ("judge check", "judge checks"), "judge canary": ("judge canary", "judge canaries"),
                  "dispatch": ("lost dispatched unit", "lost dispatched units")}


def failures_command(result: dict) -> str:
    """The query listing a run's failed cells, with the run's lake (unless it is ./data_lake) and its board (when it
    is ad hoc, never the readers' default), so it can be pasted as it is."""
    import shlex

    from dialogbench.run.boards import is_adhoc

    words = ["dialogbench", "query"]
    lake = result.get("lake")
    if lake and Path(lake).resolve() != Path("data_lake").resolve():
        try:
            shown = str(Path(lake).resolve().relative_to(Path.cwd().resolve()))
        except ValueError:
            shown = str(lake)
        words += ["--lake", shlex.quote(shown)]
    if result.get("board") and is_adhoc(result["board"]):
        words += ["--board", shlex.quote(result["board"])]
    return " ".join([*words, '"select * from failures"'])


def run_failed_lines(result: dict, config, message: str | None) -> list[str]:
    """Why a run failed (exit 4), as a headline of at most ``HEADLINE_MAX`` characters saying what failed and where
    to look, then one indented line per reason: each stage whose failed cells fail it under ``fail_on``, each
    family check's problem (a judge check, the canary's drift, a lost dispatched unit), then where to look."""
    from dialogbench.run.runs import failing_stages, failure_message

    policy = config.fail_on
    failing = failing_stages(result.get("stages") or [], policy)
    text = result.get("failed") or message or ""
    if result.get("failed_lines") is not None:  # the flow's own list, when it gives one
        problems = [line for line in result["failed_lines"] if line != failure_message(failing, policy)] \
            if failing else list(result["failed_lines"])
    elif failing and text.startswith(failure_message(failing, policy)):
        problems = _split_problems(text[len(failure_message(failing, policy)):].removeprefix("; "))
    else:
        problems = _split_problems(text) if not failing else [text]
    details = [f"{r.stage}: {r.failed} of {r.attempted} cells failed ({r.failed_share:.0%})" for r in failing]
    details += problems
    cells = sum(r.failed for r in failing)
    parts = [f"{count(cells, 'failed cell')} in {count(len(failing), 'stage')}"] if failing else []
    kinds: dict[str, int] = {}
    for problem in problems:
        kind = problem.split(": ", 1)[0] if problem.split(": ", 1)[0] in _PROBLEM_KINDS else ""
        kinds[kind] = kinds.get(kind, 0) + 1
    parts += [count(n, *_PROBLEM_KINDS[kind]) for kind, n in kinds.items() if kind]
    parts += [count(kinds[""], "other reason" if parts else "reason")] if "" in kinds else []
    run_id = result.get("run_id", "?")
    for shown in range(len(parts), -1, -1):  # as many of the parts as fit, the rest counted
        rest = f"{len(parts) - shown} more" if shown < len(parts) else ""
        headline = f"error: run {run_id} failed: {', '.join([*parts[:shown], *([rest] if rest else [])])} " \
                   "(details below)"
        if len(headline) <= HEADLINE_MAX:
            break
    where = []
    if failing:
        rule = ("any failed cell" if policy.cells == "any"
                else f"a stage with more than {policy.share:.1%} of its cells failed")
        where.append(f"failed cells ({rule} fails the run; the next run retries them): {failures_command(result)}")
    report = result.get("report") or {}
    if report.get("html"):
        where.append(f"report: {report['html']}")
    if message and " Report: " in message:  # served (report.url): the address a notification quotes
        where.append(f"served report: {message.rsplit(' Report: ', 1)[1]}")
    return [headline if len(headline) <= HEADLINE_MAX else headline[:HEADLINE_MAX - 1] + "…",
            *(f"  {line}" for line in [*details, *where])]


def _split_problems(text: str) -> list[str]:
    """A run's failure text (its reasons joined with '; ') as its reasons: a new one starts at a family check's
    prefix (``judge checks: ``, ``judge canary: ``, ``dispatch: ``); the reasons' own '; ' stay inside them."""
    import re

    kinds = "|".join(re.escape(kind) for kind in _PROBLEM_KINDS)
    return [part for part in re.split(rf"; (?=(?:{kinds}): )", text) if part]
