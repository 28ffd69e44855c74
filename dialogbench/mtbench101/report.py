"""MT-Bench-101's report section: Table 3 (tier → ability → task over the 13 task columns, plus Avg), a radar
of the seven abilities (Figure 3) and the mean rating per turn (Figure 4), for one judge. Table 3's numbers link to
the explorer showing the judged turns behind them (the model's, by the judge shown; a task score's of its task).
The answers cut at their token limit (``mtbench101_truncation``) are a table per model and task and, when there are
any, a warning."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import groupby

from dialogbench.explorer.hrefs import explorer_href
from dialogbench.judge_checks import self_judging
from dialogbench.mtbench101.leaderboard import average_text
from dialogbench.mtbench101.tables import JUDGE_STAGE as PROTOCOL  # judge_checks' findings name it
from dialogbench.mtbench101.taxonomy import ABILITIES, TASKS, Task
from dialogbench.report import svg
from dialogbench.report.checks import coverage, few, few_warning, flag, judge_warnings, not_measured_cell, unmeasured
from dialogbench.report.section import Context, ReportSection, Rows
from dialogbench.report.tables import NO_DATA, Section, Table, link, num, pct
from dialogbench.stats import shown
from dialogbench.stats.shown import Shown, slice_text

QUERIES = {
    "leaderboard": "select * from mtbench101_leaderboard order by judge, model",
    "abilities": "select * from mtbench101_abilities order by judge, model",
    "curves": "select * from mtbench101_turn_curves order by judge, model, task, turn",
    "tasks": "select model, judge, task, dialogues from mtbench101_tasks order by judge, model, task",
    "truncation": "select * from mtbench101_truncation order by model, position",  # per model, not per judge
    # the 95% intervals and rank ranges of the board's latest run (cluster bootstrap over dialogues, within tasks)
    "headline": f"{shown.SQL} where family = 'mtbench101'",
}
UNJUDGED = ("headline", "truncation")  # queries without a judge column
TITLE = "MT-Bench-101"
LEAD = ["#", "Model", "Avg"]
TAIL = ["tasks scored", "unparsed", "missing", "Avg (OpenCompass rule)"]
EXPLORER_PROTOCOL = "mtbench101"  # the explorer's name for the judged turns (dialogbench/mtbench101/explorer.py)


def shown_judge(rows: dict[str, Rows], report_judge: str | None) -> str | None:
    """The judge shown: the one that scored the most models (ties: the report's judge, then alphabetical)."""
    counts = Counter(r["judge"] for r in rows.get("leaderboard") or [] if r.get("judge"))
    return min(counts, key=lambda j: (-counts[j], j != report_judge, j)) if counts else None


def derive(rows: dict[str, Rows], context: Context) -> dict:
    """The rows of the judge shown (``shown_judge``), that judge, and the models it rated as itself (``self_judged``:
    marked in every table)."""
    judge = shown_judge(rows, context.judge)
    kept = {key: None if found is None else [r for r in found if r["judge"] == judge] for key, found in rows.items()
            if key not in UNJUDGED}
    found = context.not_measured.get((judge, PROTOCOL))
    models = {r["model"] for view in kept.values() for r in view or []}
    return {**kept, "headline": rows.get("headline"), "judge": judge, "not_measured": {PROTOCOL: found} if found else {},
            "self_judged": context.self_judged(models, judge), "truncation": rows.get("truncation")}


def score(v) -> str:
    return "–" if v is None else f"{float(v):.2f}"


def ran_tasks(data: dict) -> list[Task]:
    """The tasks with a column in Table 3: those the data of the judge shown has (a task row, a model's task score),
    in Table 3's order; a task that did not run on the board has none."""
    present = {r["task"] for r in data.get("tasks") or []}
    present |= {t.code for r in data.get("leaderboard") or [] for t in TASKS if r.get(t.code) is not None}
    return [t for t in TASKS if t.code in present]


def header_groups(tasks: Sequence[Task] = TASKS) -> list[list[tuple[str, int]]]:
    """Table 3's two header rows above the task codes of ``tasks``: tiers, then abilities (blank over the other
    columns)."""
    rows = []
    for key in (lambda t: t.tier, lambda t: t.ability):
        spans = [(label, len(list(run))) for label, run in groupby(tasks, key=key)]
        rows.append([("", len(LEAD)), *spans, ("", len(TAIL))])
    return rows


def ranked(rows: list[dict]) -> list[dict]:
    """Best average first (a model without all 13 task scores has none and comes last: its partial mean is not
    ranked beside a full one), then by name."""
    return sorted(rows, key=lambda r: (r["avg"] is None, -(r["avg"] or 0), r["model"]))


def turns(model: str, judge: str | None, task: str | None = None, unparsed: bool = False) -> str:
    """The explorer showing ``model``'s judged turns by ``judge`` (of ``task``; unparseable only when ``unparsed``)."""
    return explorer_href(protocol=EXPLORER_PROTOCOL, models=[model], judge=judge, keys=[task] if task else [],
                         unparsed=unparsed)


def task_cell(r: dict, code: str, n: dict, lowest: int, found: Shown = Shown()) -> str:
    """A task score with the dialogues it averages and its 95% interval below it (when the latest run recorded one
    for this score); marked when fewer than ``lowest``."""
    value, count = r.get(code), n.get((r["model"], code))
    if value is None:
        return score(value)
    band = found.interval_text("mtbench101_tasks", "score", r["model"], slice_text(judge=r["judge"], task=code), value)
    return flag(f"{score(value)}\nn={count or 0:,}" + (f"\n{band}" if band else ""), few(count, lowest))


def leaderboard_table(rows: list[dict], n: dict | None = None, lowest: int = 10, short: set = frozenset(),
                      finding=None, judge: str | None = None, found: Shown = Shown(),
                      selves: set = frozenset(), tasks: Sequence[Task] = TASKS) -> Table:
    """Table 3 over the columns of ``tasks`` (``ran_tasks``: those the board ran); with ``finding`` (its judge failed a
    judge check) every score shows 'not measured' instead (its reason is the section's warning, said once; a task the
    model has no dialogue of stays '–'). Each
    score links to the explorer showing ``judge``'s ratings of the model's turns behind it (a task's: where the model
    has a score or judged dialogues of the task). ``found``: the latest run's intervals and rank ranges; ``selves``:
    the models the judge rated as itself (marked)."""
    n = n or {}

    def scored(text: str, has: bool = True) -> str:  # 'not measured' for a number of a failing judge (one there is)
        return not_measured_cell(finding) if finding and has else text

    def ran(r: dict, code: str) -> bool:  # the model has a score or judged dialogues of the task
        return r.get(code) is not None or (r["model"], code) in n

    def average_cell(r: dict) -> str:  # the average and, when the latest run's bootstrap gave one, its interval
        band = found.interval_text("mtbench101_leaderboard", "avg", r["model"], slice_text(judge=r["judge"]),
                                   r.get("avg"))
        return average_text(r, sep="\n") + (f"\n{band}" if band else "")

    def rank_cell(i: int, r: dict) -> str:  # the position and, below it, the ranks the average's interval allows
        ranks = "" if finding else found.rank_text("mtbench101_leaderboard", "avg", r["model"],
                                                   slice_text(judge=r["judge"]), r.get("avg"))
        return str(i) + (f"\n({ranks})" if ranks and ranks != str(i) else "")

    body = [[rank_cell(i, r), flag(self_judging.marked(r["model"], r["model"] in selves), r["model"] in short),
             link(scored(average_cell(r)), turns(r["model"], judge)),
             *(link(scored(task_cell(r, t.code, n, lowest, found), ran(r, t.code)),
                    turns(r["model"], judge, t.code) if ran(r, t.code) else None) for t in tasks),
             f"{num(r['tasks_scored'], 0)} / {len(TASKS)}",
             link(num(r["unparsed"], 0), turns(r["model"], judge, unparsed=True)), num(r.get("missing"), 0),
             link(scored(average_text(r, "opencompass_", sep="\n")), turns(r["model"], judge))]
            for i, r in enumerate(rows, 1)]
    some = "" if len(tasks) == len(TASKS) else (f" (the {len(tasks)} of {len(TASKS)} that ran on this board: a task "
                                                 "not run has no column)")
    caption = ("Tasks: " + "; ".join(f"{t.code} {t.name}" for t in tasks) + f"{some}. Below each task score: n, the "
               "dialogues it averages, and its 95% interval, a bootstrap over those dialogues; below Avg: its 95% "
               "interval, a bootstrap over the dialogues within each task (the board's latest run's; none with "
               "fewer than 5 dialogues). Below # in brackets: the ranks the Avg's interval allows (Chatbot Arena's "
               "rule: best 1 + the models whose interval lies wholly above, worst the count - those wholly "
               "below), when it allows more than the position.")
    return Table([*LEAD, *(t.code for t in tasks), *TAIL], body, caption, numeric_from=2, groups=header_groups(tasks),
                 unbroken=(1,))


def radar_chart(order: list[str], abilities: list[dict]) -> tuple[str, str] | None:
    by = {(r["model"], r["ability"]): r["score"] for r in abilities}
    series = {m: [by.get((m, a)) for a in ABILITIES] for m in order}
    series = {m: v for m, v in series.items() if any(x is not None for x in v)}
    if not series:
        return None
    caption = ("Ability scores (mean of each ability's task scores, 0–10 from the centre); an ability "
               "missing a task score is drawn at the centre")
    return caption, svg.radar(list(ABILITIES), series, label="MT-Bench-101 ability scores, one polygon per model")


def turn_curves(order: list[str], curves: list[dict],
                selves: set = frozenset()) -> tuple[list[tuple[str, str]], list[Table]]:
    """Mean rating by turn (1-based): every model over all its tasks (chart + table), and the best model
    per task."""
    if not curves:
        return [], []
    turns = sorted({r["turn"] for r in curves})
    pooled: dict[tuple[str, int], list[float]] = {}
    for r in curves:
        if r["score"] is not None and r["n"]:
            acc = pooled.setdefault((r["model"], r["turn"]), [0.0, 0])
            acc[0] += r["score"] * r["n"]
            acc[1] += r["n"]
    mean = {k: s / n for k, (s, n) in pooled.items() if n}
    models = [m for m in order if any((m, t) in mean for t in turns)]
    charts = [("Mean rating per turn over all tasks (turns weighted by how many were rated), one line per model",
               svg.line_chart({m: [(t + 1, mean[(m, t)]) for t in turns if (m, t) in mean] for m in models},
                              label="MT-Bench-101 mean rating by turn", x_label="turn", y_label="rating",
                              y_max=10))]
    table = Table(["Model"] + [f"turn {t + 1}" for t in turns],
                  [[self_judging.marked(m, m in selves)] + [score(mean.get((m, t))) for t in turns] for m in models],
                  "Mean rating per turn over all tasks, by model", collapsed=True)
    if models:
        best, names = models[0], {t.code: t.name for t in TASKS}
        per_task = {}
        for t in TASKS:
            pts = [(r["turn"] + 1, r["score"]) for r in curves
                   if r["model"] == best and r["task"] == t.code and r["score"] is not None]
            if pts:
                per_task[f"{t.code} {names[t.code]}"] = pts
        if per_task:
            charts.append((f"{best} (first in the table): mean rating per turn of each task",
                           svg.line_chart(per_task, label=f"MT-Bench-101 rating by turn and task for {best}",
                                          x_label="turn", y_label="rating", y_max=10)))
    return charts, [table]


def cut_by_model(truncation: list[dict], models: list[str]) -> dict[str, dict]:
    """``mtbench101_truncation``'s rows summed per model of ``models``: answers, truncated, unknown_cap, max_tokens
    (the largest), share (truncated over the answers with a known limit) and ``tasks`` (task -> its row)."""
    out: dict[str, dict] = {}
    for r in truncation:
        if r["model"] not in models:
            continue
        m = out.setdefault(r["model"], {"answers": 0, "truncated": 0, "unknown_cap": 0, "max_tokens": None,
                                        "tasks": {}})
        for key in ("answers", "truncated", "unknown_cap"):
            m[key] += r[key] or 0
        if r["max_tokens"] is not None:
            m["max_tokens"] = max(m["max_tokens"] or 0, r["max_tokens"])
        m["tasks"][r["task"]] = r
    for m in out.values():
        known = m["answers"] - m["unknown_cap"]
        m["share"] = m["truncated"] / known if known else None
    return out


def truncation_table(order: list[str], cut: dict[str, dict], selves: set = frozenset()) -> Table | None:
    """Per model: its answer token limit, its answers, those cut at the limit overall and per task (a column per
    task a model has answers of, in Table 3's order); None when no model has a stored answer."""
    models = [m for m in order if m in cut]
    if not models:
        return None
    tasks = [t for t in TASKS if any(t.code in cut[m]["tasks"] for m in models)]

    def cell(r: dict | None) -> str:
        if not r or r["max_tokens"] is None:
            return "–"
        known = (r["answers"] or 0) - (r["unknown_cap"] or 0)
        return "0" if not r["truncated"] else flag(f"{r['truncated']:,} / {known:,}\n{pct(r['share'])}")

    rows = [[self_judging.marked(m, m in selves), num(cut[m]["max_tokens"], 0), num(cut[m]["answers"], 0),
             cell(cut[m]), *(cell(cut[m]["tasks"].get(t.code)) for t in tasks)] for m in models]
    return Table(["Model", "max_tokens", "answers", "cut", *(t.code for t in tasks)], rows,
                 "Answers cut at max_tokens: the answers (each model's current answer cells) whose completion tokens, "
                 "counted by the model's own tokenizer, reached the max_tokens recorded with them "
                 "(mtbench101.answer_max_tokens, at most half the model's context window; no finish reason is "
                 "stored), as cut / answers and share, overall and per task; '–' where the answers predate that "
                 "record.", collapsed=not any(c["truncated"] for c in cut.values()))


def truncation_warnings(cut: dict[str, dict]) -> list[str]:
    lines = []
    for model, m in cut.items():
        if not m["truncated"]:
            continue
        tasks = sorted(((r["truncated"], code) for code, r in m["tasks"].items() if r["truncated"]), reverse=True)
        lines.append(f"{model}: {m['truncated']:,} of {m['answers'] - m['unknown_cap']:,} answers ({pct(m['share'])}) "
                     f"reached max_tokens = {m['max_tokens']} and were cut there (by task: "
                     f"{', '.join(f'{code} {n:,}' for n, code in tasks)}); the judge rated the cut text.")
    return lines


def mtbench101(data: dict) -> Section:
    rows = ranked(data.get("leaderboard") or [])
    if not rows:
        return Section("mtbench101", TITLE, empty=NO_DATA)
    order = [r["model"] for r in rows]
    unparsed, missing = sum(r["unparsed"] or 0 for r in rows), sum(r.get("missing") or 0 for r in rows)
    finding = unmeasured(data, PROTOCOL)
    intro = (f"Judge: {data.get('judge') or '–'}. The judge rates every turn of a dialogue from 1 to 10 and a "
             "dialogue scores its lowest judged turn; a task scores the mean of its dialogues, Avg the unweighted "
             "mean of the 13 tasks (Table 3's rule). A model without a score for every task shows instead the mean "
             "over the tasks it has, marked 'partial: k of 13 tasks': not comparable with a full Avg, it is ranked "
             "after the models that have one. Models sorted by Avg, best first. "
             f"Left out of every score: {unparsed:,} dialogue{'s' if unparsed != 1 else ''} with a rating the parser "
             f"cannot read (unparsed), {missing:,} with a turn not judged (missing: its answer or its judgment failed "
             "or is still to come, computed by the next run). Ratings are read by this project's rule (the last "
             "Rating: [[n]], 1 to 10). Avg (OpenCompass rule): the same average as OpenCompass's summarizer "
             "computes it from the same judge replies (the first [n] of a reply, no range check; a dialogue "
             "with an unreadable turn scores the minimum of its other turns), for comparison with the paper; "
             "the Judge reliability section counts the ratings the two rules read differently. Each score links "
             "to the dialogue explorer showing the judged turns behind it.")
    charts = [c for c in [radar_chart(order, data.get("abilities") or [])] if c and not finding]
    selves = set(data.get("self_judged") or ()) & set(order)
    if selves:
        intro += f" {self_judging.LEGEND}."
    curve_charts, curve_tables = (turn_curves(order, data.get("curves") or [], selves) if not finding
                                  else ([], []))
    lowest = data.get("min_cells", 10)
    n = {(r["model"], r["task"]): r["dialogues"] for r in data.get("tasks") or []}
    small = [f"{r['task']} of {r['model']} (n={r['dialogues']})" for r in data.get("tasks") or []
             if few(r["dialogues"], lowest)]
    cover, short = coverage(data.get("coverage"), ("mtbench101",))
    cut = cut_by_model(data.get("truncation") or [], order)
    cut_table = truncation_table(order, cut, selves)
    table = leaderboard_table(rows, n, lowest, short, finding, data.get("judge"), Shown.from_rows(data.get("headline")),
                              selves, ran_tasks(data))
    return Section("mtbench101", TITLE, intro, [table, *curve_tables, *([cut_table] if cut_table else [])],
                   charts + curve_charts, tables_first=True,
                   warnings=judge_warnings(data) + self_judging.warning(selves, data.get("judge"))
                   + few_warning(small, lowest, "scored dialogues") + truncation_warnings(cut) + cover)


REPORT = ReportSection(queries=QUERIES, derive=derive, sections=lambda data: [mtbench101(data)])
