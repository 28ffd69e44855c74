"""The MT-Bench-101 leaderboard the CLI prints: Table 3's columns, from ``mtbench101_leaderboard``."""

from __future__ import annotations

import duckdb

from dialogbench.run.config import Config
from dialogbench.judge_checks.check import unmeasured_rows
from dialogbench.judge_checks.self_judging import identities, legend, mark_rows, marked
from dialogbench.mtbench101.config import answerers
from dialogbench.mtbench101.config import judge as mtbench101_judge
from dialogbench.mtbench101.tables import JUDGE_STAGE
from dialogbench.mtbench101.taxonomy import TASK_CODES
from dialogbench.stats.shown import read_shown, slice_text, with_intervals


def mtbench101_leaderboard(config: Config, con: duckdb.DuckDBPyConnection) -> list[dict]:
    """One row per configured model for the run's judge (``con``: the catalog on the config's board; empty when the
    protocol is off), with the average's 95% interval and the ranks it allows when the board's latest run recorded
    them (``avg_ci_low``, ``avg_ci_high``, ``avg_ranks``), ``self_judged`` (the model is the judge:
    ``judge_checks.self_judging``), and its answers cut at their token limit (``mtbench101_truncation`` summed over
    tasks: ``answers_cut``, ``answers_capped`` (those with a known limit), ``answer_max_tokens``)."""
    if not config.mtbench101.enabled:
        return []
    models = [m.name for m in answerers(config)]
    relation = con.execute("select * from mtbench101_leaderboard where judge = ? and list_contains(?, model)",
                           [mtbench101_judge(config).name, models])
    columns = [d[0] for d in relation.description]
    rows = unmeasured_rows([dict(zip(columns, r)) for r in relation.fetchall()], con, config, protocol=JUDGE_STAGE,
                           columns=[*TASK_CODES, "avg", "avg_scored", "opencompass_avg", "opencompass_avg_scored"])
    found = read_shown(con, ("mtbench101_leaderboard",))
    rows = [with_intervals(r, found, leaderboard="mtbench101_leaderboard", metric="avg", model=r["model"],
                           slice=slice_text(judge=r["judge"]), column="avg") for r in rows]
    cut = {model: (n, capped, limit) for model, n, capped, limit in con.execute(
        "select model, sum(truncated), sum(answers - unknown_cap), max(max_tokens) from mtbench101_truncation "
        "where list_contains(?, model) group by model", [models]).fetchall()}
    rows = [{**r, **dict(zip(("answers_cut", "answers_capped", "answer_max_tokens"), cut.get(r["model"], (None,) * 3)))}
            for r in rows]
    return sorted(mark_rows(rows, known=identities(config)), key=lambda r: (-(r.get("avg") or -1), r["model"]))


def average(row: dict, rule: str = "") -> tuple[float | None, int | None]:
    """The average to show of a leaderboard row: ``(avg, None)`` once all 13 tasks have a score (Table 3's rule),
    else ``(avg_scored, tasks_scored)``, the mean over the tasks that have one, partial; ``(None, None)`` with no task
    scored. ``rule="opencompass_"`` reads the OpenCompass columns."""
    if row.get(f"{rule}avg") is not None:
        return row[f"{rule}avg"], None
    scored = row.get(f"{rule}avg_scored")
    return (scored, row.get(f"{rule}tasks_scored")) if scored is not None else (None, None)


def average_text(row: dict, rule: str = "", *, blank: str = "–", sep: str = " ") -> str:
    """``average`` as text: "7.12", or "6.21 partial:{sep}3 of 13 tasks" (a report cell puts a newline there)."""
    value, tasks = average(row, rule)
    if value is None:
        return blank
    return f"{value:.2f}" if tasks is None else f"{value:.2f} partial:{sep}{tasks} of {len(TASK_CODES)} tasks"


def format_mtbench101(rows: list[dict]) -> str:
    if not rows:
        return "(no MT-Bench-101 judgments yet)"
    header = ["model", "ranks", *TASK_CODES, "avg", "avg 95% CI", "unparsed", "missing"]
    lines = [header] + [[marked(r["model"], r.get("self_judged")), r.get("avg_ranks") or "-",
                         *[_score(r.get(t)) for t in TASK_CODES],
                         "not measured" if r.get("not_measured") else average_text(r, blank="-"),
                         "-" if r.get("avg_ci_low") is None else f"[{r['avg_ci_low']:.2f}, {r['avg_ci_high']:.2f}]",
                         str(r.get("unparsed") or 0), str(r.get("missing") or 0)] for r in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths)))
           for line in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    note = ("\navg 95% CI: a bootstrap over the dialogues within each task; ranks: those it allows (Chatbot "
            "Arena's rule)" if any(r.get("avg_ci_low") is not None for r in rows) else "")
    note += ("\navg: the mean of the 13 task scores; 'partial': the mean over the tasks scored so far, not comparable "
            "with a full average" if any(average(r)[1] is not None for r in rows) else "")
    cut = [f"{r['model']} {r['answers_cut']:,} of {r['answers_capped']:,} "
           f"({r['answers_cut'] / r['answers_capped']:.1%})" for r in rows if r.get("answers_cut")]
    note += (f"\ncut answers: {'; '.join(cut)} reached max_tokens ({rows_limit(rows)}) and were cut there; the judge "
             "rated the cut text (mtbench101_truncation: by task)" if cut else "")
    why = next((r["not_measured"] for r in rows if r.get("not_measured")), None)
    note += f"\nnot measured: {why}" if why else ""
    note += legend(rows)
    return (f"MT-Bench-101 (judge: {rows[0]['judge']}; dialogue = its lowest turn score, 1-10)\n" + "\n".join(out)
            + note)


def rows_limit(rows: list[dict]) -> str:
    """The answer token limits of the rows with cut answers: "4096", or "a 4096, b 1024" when they differ."""
    cut = [r for r in rows if r.get("answers_cut")]
    limits = {r["answer_max_tokens"] for r in cut}
    return str(limits.pop()) if len(limits) == 1 else ", ".join(f"{r['model']} {r['answer_max_tokens']}" for r in cut)


def _score(value) -> str:
    return "-" if value is None else f"{value:.2f}"
