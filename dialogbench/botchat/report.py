"""BotChat's report section: the views it reads, the judge's flagged examples and the leaderboard derived from
them, and its sections (``report_sections``, ``report_examples``), registered as ``Family.report``."""

from __future__ import annotations

from dialogbench.botchat.report_examples import examples
from dialogbench.botchat.report_sections import arena, ground_truth, lengths, unieval
from dialogbench.botchat.report_sections import leaderboard as leaderboard_section
from dialogbench.stats import shown
from dialogbench.stats.shown import Shown
from dialogbench.report.section import Context, ReportSection, Rows
from dialogbench.report.tables import Section

QUERIES = {
    "unieval": "select * from botchat_unieval order by judge, model, n",
    "elo": "select * from report_arena_ratings order by judge, n, model",
    "pair_rates": "select * from botchat_pair_rates order by judge, n, model_a, model_b",
    "gteval": "select * from botchat_gteval order by judge, model",
    "unieval_gt": "select * from botchat_unieval_gt order by judge, model",
    "lengths": "select * from botchat_lengths order by model",
    "length_boxes": "select * from report_length_boxes order by model",
    "truncation": "select * from botchat_truncation order by model",
    # the 95% intervals and rank ranges of the board's latest run (cluster bootstrap over seeds; Bradley-Terry's)
    "headline": f"{shown.SQL} where family = 'botchat'",
}
JUDGED = ("unieval", "elo", "pair_rates", "gteval", "unieval_gt")  # the report's judge is picked from these
PROTOCOLS = ("botchat_unieval", "botchat_arena", "botchat_gteval")  # its judge stages (judge_checks findings)

# The flagged UniEval examples of one judge: the first few seeds of each model.
EXAMPLES_SQL = ("select * exclude (judge, example) from report_flagged_examples where judge = ? and example <= ? "
                "order by model, item_id")


def derive(rows: dict[str, Rows], context: Context) -> dict:
    """The rows (cut to the report's judge), the judge, its flagged examples, the leaderboard and the models the judge
    rated as itself (``self_judged``: marked in every table)."""
    judge = context.judge
    flagged = context.read(EXAMPLES_SQL, [judge, context.examples_per_model]) if judge else []
    models = {m for found in rows.values() for r in found or [] for m in (r.get("model"), r.get("model_a"),
                                                                          r.get("model_b")) if m}
    data = {**rows, "judge": judge,
            "examples": [{**e, "utterances": list(e["utterances"] or [])} for e in flagged or []],
            "not_measured": {p: f for (j, p), f in context.not_measured.items() if j == judge and p in PROTOCOLS},
            "self_judged": context.self_judged(models, judge)}
    data["leaderboard"] = leaderboard(data)
    return data


def pick_ns(present: set[int]) -> list[int]:
    """8 and 16 when present, else the largest N present (beside 8)."""
    if not present:
        return []
    return sorted({n for n in (8,) if n in present} | {16 if 16 in present else max(present)})


def leaderboard(data: dict) -> dict:
    """The leaderboard's rows (a model per row, its pass@N, Elo@N, Win + Tie vs GT, tokens), best first."""
    unieval, elo = data["unieval"] or [], data["elo"] or []
    pass_ns, elo_ns = pick_ns({r["n"] for r in unieval}), pick_ns({r["n"] for r in elo})
    if not elo_ns and "botchat_arena" in (data.get("not_measured") or {}):  # no rating at all: say so, not nothing
        elo_ns = pick_ns({r["n"] for r in data.get("pair_rates") or []})
    rows: dict[str, dict] = {}
    entry = lambda m: rows.setdefault(m, {"model": m})  # noqa: E731
    for r in unieval:
        e = entry(r["model"])
        e[f"pass@{r['n']}"] = r["pass_rate"]
        e[f"parsed_pass@{r['n']}"] = r.get("pass_rate_parsed")
        e[f"pass_row@{r['n']}"] = r
        if r["n"] == max(pass_ns):
            e.update(dialogues=r["dialogues"], unparsed=r["unparsed"])
    for r in elo:
        if r["n"] in elo_ns:
            entry(r["model"])[f"elo@{r['n']}"] = r
    for r in data["gteval"] or []:
        entry(r["model"]).update(win_tie=r["win_tie_rate"], parsed_win_tie=r.get("win_tie_rate_parsed"),
                                 gt_unparsed=r["unparsed"], gt_row=r)
    for r in data["lengths"] or []:
        entry(r["model"])["mean_tokens"] = r["mean_tokens"]
    measured = lambda protocol: protocol not in (data.get("not_measured") or {})  # noqa: E731  (never sort by those)
    # what sorts the board, and the headline number whose interval gives each position's rank range: (leaderboard,
    # metric, slice, the row's value of it); an Elo-sorted board takes Bradley-Terry's (Elo's band is no CI)
    judge = f"judge={data.get('judge')}"
    if any(e.get("win_tie") is not None for e in rows.values()) and measured("botchat_gteval"):
        key, sort_by = (lambda e: e.get("win_tie")), "Win + Tie vs GT"
        ranked_by = ("botchat_gteval", "win_tie_rate", judge, key)
    elif elo_ns and measured("botchat_arena"):
        key, sort_by = (lambda e: (e.get(f"elo@{elo_ns[-1]}") or {}).get("elo")), f"Elo@{elo_ns[-1]}"
        ranked_by = ("botchat_elo", "bt", f"{judge}, n={elo_ns[-1]}",
                     lambda e: (e.get(f"elo@{elo_ns[-1]}") or {}).get("bt"))
    elif pass_ns and measured("botchat_unieval"):
        key, sort_by = (lambda e: e.get(f"pass@{pass_ns[-1]}")), f"pass@{pass_ns[-1]}"
        ranked_by = ("botchat_unieval", "pass_rate", f"{judge}, n={pass_ns[-1]}", key)
    else:
        key, sort_by, ranked_by = (lambda e: None), "model", None
    ordered = sorted(rows.values(), key=lambda e: (key(e) is None, -(key(e) or 0), e["model"]))
    if ranked_by:
        found, (view, metric, slice_, value) = Shown.from_rows(data.get("headline")), ranked_by
        for e in ordered:
            e["ranks"] = found.rank_text(view, metric, e["model"], slice_, value(e))
    return {"rows": ordered, "pass_ns": pass_ns, "elo_ns": elo_ns, "sort_by": sort_by,
            "ranked_by": ranked_by and ranked_by[1],
            "has_gt": data["gteval"] is not None and bool(data["gteval"])}


def sections(data: dict) -> list[Section]:
    return [f(data) for f in (leaderboard_section, unieval, arena, ground_truth, lengths, examples)]


REPORT = ReportSection(queries=QUERIES, judged=JUDGED, derive=derive, sections=sections)
