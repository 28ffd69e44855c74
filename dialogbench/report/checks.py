"""What keeps the report honest: the cells (n) and the Wilson 95% interval beside a rate, a mark on a cell whose
number is degenerate or rests on too little, the warnings a section lists at its top, the report's settings
(``report:`` in the config) and the code's commit for the header."""

from __future__ import annotations

from collections.abc import Iterable

from dialogbench.run.config import ReportConfig
from dialogbench.report.tables import Tipped, pct
from dialogbench.text.yamlbounds import load_yaml_text

FLAG = "⚠"  # appended to a cell the section's Warnings explain (HTML: the cell is tinted)


def flag(text: str, on: bool = True) -> str:
    """``text`` marked when ``on``: the mark goes on its first line."""
    if not on:
        return text
    first, sep, rest = text.partition("\n")
    return f"{first} {FLAG}{sep}{rest}"


def few(n, min_cells: int) -> bool:
    """Fewer than ``min_cells`` cells under a number (a number on none is shown as '–', not marked)."""
    return n is not None and 0 < n < min_cells


def interval(lo, hi) -> str:
    """A rate's interval, as percentages."""
    return "–" if lo is None or hi is None else f"[{pct(lo)}, {pct(hi)}]"


def rate_cell(rate, lo, hi, n, *, min_cells: int, what: str = "n") -> str:
    """A rate, then its Wilson 95% interval and its cells below it; marked when it rests on fewer than min_cells."""
    if rate is None:
        return "–"
    return flag(f"{pct(rate)}\n{interval(lo, hi)} {what}={n:,}", few(n, min_cells))


def unmeasured(data: dict, protocol: str):
    """The judge-check finding that makes ``protocol``'s numbers not measured for the section's judge, or None
    (``data["not_measured"]``: protocol -> finding, set by the family's derive from ``Context.not_measured``)."""
    return (data.get("not_measured") or {}).get(protocol)


NOT_MEASURED = "not measured"
CHECKS_SECTION = "Can the judge tell?"  # the judge checks' section (dialogbench/judge_checks/report.py)


def not_measured_cell(finding) -> str:
    """What a number whose judge failed a judge check shows instead: 'not measured', marked, and nothing more (the
    share and why are said once, in the section's Warnings: ``judge_warnings``); in HTML its title names the judge."""
    return Tipped(flag(NOT_MEASURED), f"{NOT_MEASURED}: judge {finding.judge} fails its judge checks on "
                                      f"{finding.protocol} (see Warnings)")


def judge_warnings(data: dict) -> list[str]:
    """One warning per judge of the section that failed a judge check (opening its Warnings): the judge, what it
    failed on each protocol (the share) and why, said once for every 'not measured' cell of its numbers."""
    by_judge: dict[str, list] = {}
    for f in (data.get("not_measured") or {}).values():
        by_judge.setdefault(f.judge, []).append(f)
    return [f"Judge {judge}: {NOT_MEASURED} — "
            + "; ".join(f"{f.short.removeprefix(NOT_MEASURED + ': ')} on {f.protocol}" for f in found) + ". "
            + "; ".join(f.why.removesuffix(": its numbers are not measured") for f in found)
            + f". Its numbers here show only '{NOT_MEASURED}' {FLAG}; see {CHECKS_SECTION}"
            for judge, found in by_judge.items()]


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def few_warning(subjects: Iterable[str], min_cells: int, what: str) -> list[str]:
    """One line naming every number (subject) that rests on fewer than ``min_cells`` cells."""
    subjects = list(dict.fromkeys(subjects))
    if not subjects:
        return []
    return [f"Fewer than {min_cells} {what} (report.min_cells) under: {'; '.join(subjects)}. These numbers are marked "
            f"{FLAG}: their intervals are wide and the ranking they suggest is not reliable."]


def coverage(rows: list[dict] | None, prefixes: tuple[str, ...]) -> tuple[list[str], set[str]]:
    """Warnings for models whose numbers rest on part of their current plan (report_plan_coverage rows of the
    stages starting with ``prefixes``), and the models concerned."""
    partial = [r for r in rows or [] if r["stage"].startswith(prefixes) and r["missing"]]
    by_model: dict[str, list[str]] = {}
    for r in partial:
        judge = f" (judge {r['judge']})" if r["judge"] else ""
        by_model.setdefault(r["model"], []).append(f"{r['stage']}{judge} {r['computed']:,} of {r['planned']:,}")
    lines = [f"{model}: numbers rest on part of the plan, cells computed of planned: {'; '.join(parts)}. Its "
             f"row is marked {FLAG}; the missing cells are computed (or fail again) by the next run."
             for model, parts in sorted(by_model.items())]
    return lines, set(by_model)


def settings_from_run(run_config: str | None, run_id: str | None = None) -> tuple[ReportConfig, str]:
    """The ``report:`` section of the effective config the board's latest run recorded (run_configs.config, YAML),
    when it is there and valid; else the defaults. Returns the settings and where they came from."""
    if run_config:
        try:
            raw = load_yaml_text(run_config, "run_configs.config") or {}  # within bounds, as any config
            return ReportConfig.model_validate(raw.get("report") or {}), f"run {run_id}'s config"
        except (ValueError, AttributeError):
            pass
    return ReportConfig(), "defaults"
