"""Reading the judge checks for a run, a report or a snapshot: the settings (a config's, or the ones the board's
latest run recorded) and the findings on the board."""

from __future__ import annotations

import duckdb

from dialogbench.judge_checks.config import JudgeChecksConfig
from dialogbench.judge_checks.health import Finding, findings, health_rows, order_rows, probe_rows, verbosity_rows
from dialogbench.lake import Lake
from dialogbench.lake.catalog import connect
from dialogbench.text.yamlbounds import load_yaml_text

SECTION = "judge_checks"


def settings_of(config) -> JudgeChecksConfig:
    """The config's ``judge_checks`` section (its defaults when the config has none)."""
    found = config.section(SECTION) if config is not None else None
    return found if isinstance(found, JudgeChecksConfig) else JudgeChecksConfig()


def settings_from_yaml(text: str | None) -> JudgeChecksConfig:
    """The ``judge_checks`` section of a recorded effective config (run_configs.config); defaults when absent or bad."""
    try:
        raw = (load_yaml_text(text, "run_configs.config") or {}).get(SECTION) if text else None  # within bounds
        return JudgeChecksConfig.model_validate(raw or {})
    except (ValueError, AttributeError):
        return JudgeChecksConfig()


def board_findings(con: duckdb.DuckDBPyConnection, settings: JudgeChecksConfig) -> list[Finding]:
    """The findings on ``con``'s board (none when the checks are off)."""
    return (findings(health_rows(con), settings, probe_rows(con), order_rows(con), verbosity_rows(con))
            if settings.enabled else [])


def failing(config, lake: Lake, run_id: str) -> list[str]:
    """One line per finding that fails the run (``judge_checks.fail``), on the run's board."""
    settings = settings_of(config)
    with connect(lake, board=config.board) as con:
        found = board_findings(con, settings)
    return [f"judge checks: {f.why}" for f in found if f.check in settings.fail]


def unmeasured_rows(rows: list[dict], con: duckdb.DuckDBPyConnection, config, *, protocol: str,
                    columns: list[str]) -> list[dict]:
    """A leaderboard's ``rows`` with the ``columns`` of a judge that fails a judge check on ``protocol`` blanked
    (never a score) and ``not_measured`` saying why (the CLI prints it, the artifacts carry it). ``measured`` and
    ``not_measured`` are this check's, on the lake as it is now, whatever the view's columns of the same names say
    (those are the board's latest recorded run's: ``not_measured`` view)."""
    found = {(f.judge, f.protocol): f for f in board_findings(con, settings_of(config))}
    out = []
    for row in rows:
        finding = found.get((row.get("judge"), protocol))
        if finding:
            out.append({**row, **{c: None for c in columns if c in row}, "measured": False,
                        "not_measured": finding.why})
        else:
            out.append({**row, "measured": True, "not_measured": None})
    return out


def summary(config, con: duckdb.DuckDBPyConnection) -> list[dict]:
    """One row per (judge, protocol) of the run's board (``con``: the catalog on it): verdicts, unreadable share, the
    most frequent answer's share, probes right of asked, and the checks it fails with why (what the run's judges
    artifact shows)."""
    from dialogbench.judge_checks.health import not_measured, probe_rows

    settings = settings_of(config)
    health, probes = health_rows(con), probe_rows(con)
    found = findings(health, settings, probes, order_rows(con), verbosity_rows(con)) if settings.enabled else []
    by_pair: dict[tuple[str, str], dict] = {}
    for r in health:
        by_pair[(r["judge"], r["protocol"])] = {"judge": r["judge"], "protocol": r["protocol"], "verdicts": r["verdicts"],
                                                "unreadable": r["unparsed_share"], "top_answer": r["top_answer"],
                                                "top_share": r["top_share"]}
    for r in probes:
        row = by_pair.setdefault((r["judge"], r["protocol"]), {"judge": r["judge"], "protocol": r["protocol"]})
        row["probes"] = row.get("probes", 0) + r["probes"]
        row["probes_right"] = row.get("probes_right", 0) + r["correct"]
    failed = not_measured(found)
    for key, row in by_pair.items():
        checks = [f for f in found if (f.judge, f.protocol) == key]
        row.update(measured=key not in failed, checks=", ".join(f.check for f in checks) or None,
                   why="; ".join(f.why for f in checks) or None)
    return [by_pair[k] for k in sorted(by_pair)]
