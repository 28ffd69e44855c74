"""The pass@N leaderboard, read from the ``botchat_unieval`` view, for the configured models and N."""

from __future__ import annotations

import duckdb

from dialogbench.botchat.config import chatbots
from dialogbench.run.config import Config
from dialogbench.judge_checks.check import unmeasured_rows
from dialogbench.judge_checks.self_judging import identities, legend, mark_rows, marked
from dialogbench.stats.shown import read_shown, slice_text, with_intervals


def unieval_leaderboard(config: Config, con: duckdb.DuckDBPyConnection) -> list[dict]:
    """One row per model: pass@N for each configured N (with its 95% interval and the ranks it allows, when the
    board's latest run recorded them: ``pass@N_ci_low``, ``pass@N_ci_high``, ``pass@N_ranks``), dialogues judged,
    passed, unparseable, and ``self_judged`` (the model is the judge: ``judge_checks.self_judging``) (``con``: the
    catalog on the config's board)."""
    models = [m.name for m in chatbots(config)]
    ns = config.botchat.n
    rows = con.execute(
        "select * from botchat_unieval where judge = ? and list_contains(?, model) and list_contains(?, n)",
        [config.botchat.judge, models, ns]).fetchall()
    columns = [d[0] for d in con.description]
    rows = unmeasured_rows([dict(zip(columns, r)) for r in rows], con, config, protocol="botchat_unieval",
                           columns=["pass_rate", "passed"])
    by_model: dict[str, dict] = {}
    for row in rows:
        entry = by_model.setdefault(row["model"], {"model": row["model"], "judge": row["judge"],
                                                   "dialogues": row["dialogues"], "unparsed": row["unparsed"],
                                                   **({"not_measured": row["not_measured"]}
                                                      if row.get("not_measured") else {})})
        entry[f"pass@{row['n']}"] = row["pass_rate"]
        entry[f"passed@{row['n']}"] = row["passed"]
    found = read_shown(con, ("botchat_unieval",))
    entries = []
    for entry in by_model.values():
        for n in ns:
            entry = with_intervals(entry, found, leaderboard="botchat_unieval", metric="pass_rate",
                                   model=entry["model"], slice=slice_text(judge=entry["judge"], n=n),
                                   column=f"pass@{n}")
        entries.append(entry)
    top = f"pass@{max(ns)}"
    return sorted(mark_rows(entries, known=identities(config)), key=lambda e: (-(e.get(top) or -1), e["model"]))


def format_leaderboard(rows: list[dict], ns: list[int]) -> str:
    if not rows:
        return "(no UniEval judgments yet)"
    top = max(ns)
    header = ["model", f"ranks@{top}", *[f"pass@{n}" for n in ns], "judged", "unparsed"]
    lines = [header]
    for row in rows:
        rates = [f"{row[f'pass@{n}']:.3f}{ci_text(row, f'pass@{n}')}" if row.get(f"pass@{n}") is not None
                 else "not measured" if row.get("not_measured") else "-" for n in ns]
        lines.append([marked(row["model"], row.get("self_judged")), row.get(f"pass@{top}_ranks") or "-", *rates,
                      str(row["dialogues"]), str(row["unparsed"])])
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(line, widths)))
           for line in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    why = next((r["not_measured"] for r in rows if r.get("not_measured")), None)
    return (f"UniEval pass@N (judge: {rows[0]['judge']}; [95% interval], a bootstrap over the seeds; ranks@{top}: "
            f"the ranks pass@{top}'s interval allows)\n" + "\n".join(out) + (f"\nnot measured: {why}" if why else "")
            + legend(rows))


def ci_text(row: dict, column: str, digits: int = 2) -> str:
    """" [low, high]" of ``row[column]`` (``with_intervals``' keys), or '' without one."""
    low, high = row.get(f"{column}_ci_low"), row.get(f"{column}_ci_high")
    return "" if low is None else f" [{low:.{digits}f}, {high:.{digits}f}]"
