"""BotChat's report sections beside the flagged dialogues: the leaderboard, UniEval pass rate vs N, the Arena
(Elo, Bradley–Terry, pairwise win rates), win / tie / lose against the ground truth, utterance lengths. Each number
resting on verdicts links to the explorer showing them (``items``: the model's verdicts of the protocol by the
report's judge; the Arena's at the number's N)."""

from __future__ import annotations

from dialogbench.explorer.hrefs import explorer_href
from dialogbench.judge_checks import self_judging
from dialogbench.report import svg
from dialogbench.report.checks import FLAG, coverage, few, few_warning, flag, interval as rate_interval, \
    judge_warnings, not_measured_cell, plural, rate_cell, unmeasured
from dialogbench.report.tables import NO_DATA, Section, Table, column_chunks, link, num, pct

STAGES = ("generate:", "botchat_")  # BotChat's stages in plans (report_plan_coverage)
PAPER_NS = (4, 8, 12, 16)  # the N the BotChat paper reports pass@N at: the UniEval table's open columns
EVERY_N_COLUMNS = 7  # N columns per folded table of every N (each rate has its interval below it)

GT_PARTS = [("win", "#4e9a5a"), ("tie", "#9aa0a6"), ("lose", "#d1495b"), ("unparsed", "#e8e8e8")]
AUTHORS_UNIEVAL = ("as in the authors' notebook (BotChat annotations/BrowseAnnotation.ipynb), a verdict the parser "
                   "cannot read counts as a pass at N unless it names an `Index: k` with k <= N (no Index line, "
                   "or `Index: None` after `Choice: Yes`, is a pass), and stays in the denominator")
AUTHORS_GTEVAL = ("as in the authors' botchat/analyze.py, verdicts the parser cannot read stay in the denominator "
                  "(comparisons)")


# What the Arena's figures are (dialogbench/ratings/elo.py, bradley_terry.py), said the same way in every header,
# caption and note: the Elo band is a spread over orderings of the same games, only Bradley–Terry's is a CI.
ELO_WHAT = ("Elo@N: BotChat's bootstrap Elo (init 1000, scale 400, K 32): sequential Elo over the games in a shuffled "
            "order, the median final rating over the shuffles of one repeat, then the mean of those medians over the "
            "repeats, ± their standard deviation across repeats")
ELO_SPREAD = ("2.5–97.5%: percentiles of the final ratings of every shuffle of every repeat, a spread over orderings "
              "of the same games, not a confidence interval")
BT_WHAT = ("BT@N: Bradley–Terry maximum-likelihood rating on the Elo scale, with its bootstrap 95% confidence "
           "interval (percentiles of refits on the games resampled with replacement)")
ELO_HEAD = "mean ± std over repeats"
SPREAD_HEAD = "2.5–97.5% over shuffles"
BT_HEAD = "bootstrap 95% CI"


def items(data: dict, protocol: str, *models: str, n: int | None = None, with_: tuple[str, ...] = (),
          unparsed: bool = False) -> str:
    """The explorer showing the verdicts of ``protocol`` (botchat_unieval, botchat_arena, botchat_gteval) of any of
    ``models`` by the report's judge (the Arena's at ``n``, against ``with_``; unparseable only when ``unparsed``)."""
    return explorer_href(protocol=protocol, models=models, judge=data.get("judge"), n=n, with_=with_,
                         unparsed=unparsed)


def rating(v) -> str:
    return "–" if v is None else f"{float(v):.1f}"


def interval(lo, hi) -> str:
    return "–" if lo is None or hi is None else f"[{float(lo):.1f}, {float(hi):.1f}]"


def elo_pm(r: dict | None) -> str:
    if not r or r.get("elo") is None:
        return "–"
    return f"{r['elo']:.1f} ± {r['elo_std']:.1f}" if r.get("elo_std") is not None else f"{r['elo']:.1f}"


def named(data: dict, model: str) -> str:
    """A model's name in a table: marked when the report's judge rated it as itself (``judge_checks.self_judging``)."""
    return self_judging.marked(model, model in (data.get("self_judged") or ()))


def legend(data: dict, models) -> str:
    """The sentence a section's intro ends with when one of its ``models`` is marked self-judged, else ''."""
    return f" {self_judging.LEGEND}." if set(models) & set(data.get("self_judged") or ()) else ""


def leaderboard_order(data: dict, models) -> list[str]:
    """``models`` in leaderboard order (those not on it last, by name)."""
    order = [e["model"] for e in data["leaderboard"]["rows"]]
    return sorted(set(models), key=lambda m: (order.index(m) if m in order else len(order), m))


def checks(data: dict) -> dict:
    """BotChat's warnings (listed atop its leaderboard) and what they mark: all-tie Arena ratings, zero-width
    intervals, numbers on fewer than min_cells cells, utterances cut at max_tokens, models short of their plan."""
    lowest = data.get("min_cells", 10)
    elo, lines = data["elo"] or [], []
    all_ties = sorted({r["n"] for r in elo if r.get("all_ties")})
    for n in all_ties:
        verdicts = next(r.get("verdicts") for r in elo if r["n"] == n)
        lines.append(f"Arena @N={n}: all {plural(verdicts or 0, 'parsed verdict')} are ties, so every model keeps "
                     "the initial Elo and equal Bradley–Terry ratings: these ratings rank nothing.")
    zero = [f"{r['model']} @N={r['n']} ({' and '.join(k for k, z in (('Elo', r.get('elo_zero_width')), ('BT', r.get('bt_zero_width'))) if z)})"
            for r in elo if r.get("elo_zero_width") or r.get("bt_zero_width")]
    if zero:
        lines.append("Intervals of zero width (Elo: the 2.5–97.5% spread over shuffles; BT: the bootstrap 95% "
                     "confidence interval; the bootstrap found no spread: too few or too uniform games, not "
                     f"certainty): {'; '.join(zero)}.")
    small = [f"pass@{r['n']} of {r['model']} (n={r['dialogues']})" for r in data["unieval"] or []
             if r["n"] in data["leaderboard"]["pass_ns"] and few(r["dialogues"], lowest)]
    small += [f"Win + Tie vs GT of {r['model']} (n={r['comparisons']})" for r in data["gteval"] or []
              if few(r["comparisons"], lowest)]
    small += [f"Elo@{r['n']} of {r['model']} ({r['games']} games)" for r in elo if few(r.get("games"), lowest)]
    small += [f"{r['model_a']} vs {r['model_b']} @N={r['n']} ({r['games']} games)" for r in data["pair_rates"] or []
              if few(r["games"], lowest)]
    lines += few_warning(small, lowest, "cells (dialogues, comparisons or games)")
    capped = {r["model"]: r for r in data.get("truncation") or [] if r.get("capped")}
    for m, r in capped.items():
        lines.append(f"{m}: {r['capped']:,} of {r['utterances'] - r['unknown_cap']:,} generated utterances "
                     f"({pct(r['capped_rate'])}) reached max_tokens = {r['max_tokens']} and were cut there; its "
                     "lengths and the judge's verdicts are of cut text.")
    cover, short = coverage(data.get("coverage"), STAGES)
    selves = self_judging.warning(data.get("self_judged") or (), data.get("judge"))
    return {"lines": judge_warnings(data) + selves + lines + cover, "all_ties": set(all_ties), "capped": set(capped),
            "short": short, "min_cells": lowest}


def model_cell(data: dict, name: str, marks: dict) -> str:
    return flag(named(data, name), name in marks["short"])


def leaderboard(data: dict) -> Section:
    lb, marks = data["leaderboard"], checks(data)
    lowest = marks["min_cells"]
    if not lb["rows"]:
        return Section("leaderboard", "Leaderboard", empty=NO_DATA + " Run the pipeline to fill the lake.")
    headers = ["#", "Model"] + (["Win + Tie vs GT"] if lb["has_gt"] else [])
    headers += [f"pass@{n}" for n in lb["pass_ns"]]
    headers += [f"Elo@{n}\n{ELO_HEAD};\nBT [{BT_HEAD}]; games" for n in lb["elo_ns"]]
    headers += ["avg tokens", "judged", "unparsed"]
    rows, parsed = [], []
    no_gt, no_pass, no_elo = (unmeasured(data, p) for p in ("botchat_gteval", "botchat_unieval", "botchat_arena"))
    for i, e in enumerate(lb["rows"], 1):
        gt = e.get("gt_row") or {}
        ranks = e.get("ranks")
        row = [str(i) + (f"\n({ranks})" if ranks and ranks != str(i) else ""), model_cell(data, e["model"], marks)]
        gt_items, pass_items = items(data, "botchat_gteval", e["model"]), items(data, "botchat_unieval", e["model"])
        parsed.append([str(i), named(data, e["model"])]
                      + ([link(not_measured_cell(no_gt) if no_gt else pct(e.get("parsed_win_tie")), gt_items)]
                         if lb["has_gt"] else [])
                      + [link(not_measured_cell(no_pass) if no_pass else pct(e.get(f"parsed_pass@{n}")), pass_items)
                         for n in lb["pass_ns"]])
        if lb["has_gt"]:
            row.append(link(not_measured_cell(no_gt) if no_gt else
                            rate_cell(e.get("win_tie"), gt.get("win_tie_ci_low"), gt.get("win_tie_ci_high"),
                                      gt.get("comparisons"), min_cells=lowest), gt_items))
        for n in lb["pass_ns"]:
            p = e.get(f"pass_row@{n}") or {}
            row.append(link(not_measured_cell(no_pass) if no_pass else
                            rate_cell(e.get(f"pass@{n}"), p.get("pass_ci_low"), p.get("pass_ci_high"),
                                      p.get("dialogues"), min_cells=lowest), pass_items))
        for n in lb["elo_ns"]:
            r = e.get(f"elo@{n}") or {}
            bt = f"\nBT {rating(r['bt'])} {interval(r.get('bt_ci_low'), r.get('bt_ci_high'))}" if r.get("bt") is not None else ""
            games = f"\n{r['games']:,} games" if r.get("games") is not None else ""
            row.append(link(not_measured_cell(no_elo) if no_elo else
                            flag(elo_pm(r) + bt + games, bool(r) and degenerate(r, marks)),
                            items(data, "botchat_arena", e["model"], n=n)))
        unparsed = [e.get("unparsed"), e.get("gt_unparsed")]
        capped = e["model"] in marks["capped"]
        row += [flag(num(e.get("mean_tokens")), capped), link(num(e.get("dialogues"), 0), pass_items),
                "–" if all(u is None for u in unparsed) else f"{sum(u or 0 for u in unparsed):,}"]
        rows.append(row)
    rates = (["Win + Tie vs GT"] if lb["has_gt"] else []) + [f"pass@{n}" for n in lb["pass_ns"]]
    strict = Table(["#", "Model", *rates],
                   parsed, "The same rates with unparseable verdicts left out (parsed verdicts only), in the "
                   "leaderboard's order", numeric_from=2, collapsed=True)
    notes = [f"Sorted by {lb['sort_by']}, best first. Judge: {data['judge'] or '–'}."
             + legend(data, [e["model"] for e in lb["rows"]])]
    if lb.get("ranked_by"):
        by = {"win_tie_rate": "Win + Tie vs GT's 95% interval (a bootstrap over the seeds, both orders of a seed "
                              "one unit)",
              "bt": "the Bradley–Terry rating's bootstrap 95% interval (Elo's band is no confidence interval)",
              "pass_rate": "pass@N's 95% interval (a bootstrap over the seeds)"}[lb["ranked_by"]]
        notes.append(f"Below # in brackets: the ranks {by} allows, from the board's latest run (Chatbot Arena's "
                     "rule: best 1 + the models whose interval lies wholly above, worst the count - those wholly "
                     "below), when it allows more than the position.")
    if lb["has_gt"]:
        notes.append("Win + Tie vs GT: share of comparisons with the human (ground-truth) dialogue, trimmed "
                     f"to the same length, where the judge did not find the model's dialogue more AI-like; "
                     f"{AUTHORS_GTEVAL}. Under the table, the same share with them left out.")
    notes.append("pass@N: share of dialogues the UniEval judge finds human up to the N-th utterance "
                 f"(no AI found, or the first AI utterance comes after N); {AUTHORS_UNIEVAL}. Under the table, the "
                 "same share with unparseable verdicts left out.")
    if lb["elo_ns"]:
        notes.append(f"{ELO_WHAT}. {BT_WHAT}. The Arena section has Elo's 2.5–97.5% spread over shuffles.")
    notes.append("avg tokens: mean CL100K tokens per generated utterance. judged: dialogues judged by UniEval. "
                 "unparsed: verdicts the parser could not read (UniEval + GT comparisons).")
    notes.append("Below each rate: its Wilson 95% interval and n, the cells it is a share of (dialogues for pass@N, "
                 f"comparisons for Win + Tie); below each rating the games it rests on. {FLAG}: see Warnings.")
    notes.append("Each number links to the dialogue explorer showing the verdicts it rests on (the model's, by the "
                 "report's judge; an Elo's at its N).")
    lead = Table(headers, rows, numeric_from=2, unbroken=(1,))
    return Section("leaderboard", "Leaderboard", "\n".join(notes), [lead, strict],
                   lead=True, warnings=marks["lines"])


def degenerate(r: dict, marks: dict) -> bool:
    """An Arena rating to mark: all ties at its N, a zero-width interval, or too few games."""
    return bool(r.get("all_ties") or r.get("elo_zero_width") or r.get("bt_zero_width")
                or few(r.get("games"), marks["min_cells"]))


def unieval(data: dict) -> Section:
    rows = data["unieval"] or []
    if not rows:
        return Section("unieval", "UniEval pass rate vs N", empty=NO_DATA)
    order = [e["model"] for e in data["leaderboard"]["rows"]]
    ns = sorted({r["n"] for r in rows})
    by = {(r["model"], r["n"]): r["pass_rate"] for r in rows}
    full = {(r["model"], r["n"]): r for r in rows}
    lowest = data.get("min_cells", 10)
    parsed = {(r["model"], r["n"]): r.get("pass_rate_parsed") for r in rows}
    unparsed = {(r["model"], r["n"]): r["unparsed"] for r in rows}
    models = [m for m in order if any((m, n) in by for n in ns)]
    series = {m: [(n, by[(m, n)]) for n in ns if (m, n) in by] for m in models}
    most = lambda m: max((unparsed.get((m, n)) or 0 for n in ns), default=0)  # noqa: E731  (the same at every N)
    rate = lambda m, n: rate_cell(by.get((m, n)), (full.get((m, n)) or {}).get("pass_ci_low"),  # noqa: E731
                                  (full.get((m, n)) or {}).get("pass_ci_high"), (full.get((m, n)) or {}).get("dialogues"),
                                  min_cells=lowest)
    finding = unmeasured(data, "botchat_unieval")
    if finding is not None:
        rate = lambda m, n: not_measured_cell(finding)  # noqa: E731
    cell = lambda m, n: link(rate(m, n), items(data, "botchat_unieval", m))  # noqa: E731  (every N: the same verdicts)
    shown = [n for n in ns if n in PAPER_NS] or ns
    rule = ("Pass rate by the authors' rule (below); under each rate, its Wilson 95% interval and n, the dialogues it "
            "is a share of")
    unparsed_cell = lambda m: link(num(most(m), 0), items(data, "botchat_unieval", m, unparsed=True))  # noqa: E731
    rates = lambda cols, tail: Table(["Model"] + [f"N={n}" for n in cols] + ["unparsed"] * tail,  # noqa: E731
                                     [[named(data, m)] + [cell(m, n) for n in cols] + [unparsed_cell(m)] * tail
                                      for m in models],
                                     numeric_from=1)
    table = rates(shown, 1)
    table.caption = (f"{rule}; N = {', '.join(map(str, shown))}, the N the paper reports" if shown != ns
                     else rule) + "."
    every = []
    if shown != ns:  # every N, folded, in tables narrow enough for the page (the chart above has every N too)
        every = column_chunks(rates(ns, 0), 1, EVERY_N_COLUMNS)
        for t in every:
            t.caption, t.collapsed = f"Pass rate at every N, authors' rule: {t.caption}", True
    strict_rate = (lambda m, n: not_measured_cell(finding)) if finding else (lambda m, n: pct(parsed.get((m, n))))
    strict_cell = lambda m, n: link(strict_rate(m, n), items(data, "botchat_unieval", m))  # noqa: E731
    strict = Table(["Model"] + [f"N={n}" for n in ns] + ["unparsed"],
                   [[named(data, m)] + [strict_cell(m, n) for n in ns] + [unparsed_cell(m)] for m in models],
                   "The same pass rates at every N with unparseable verdicts left out (parsed verdicts only).",
                   numeric_from=1, collapsed=True)
    charts = [] if finding else [("Pass rate vs N (authors' rule)",
                                  svg.line_chart(series, label="UniEval pass rate vs N, one line per model"))]
    return Section("unieval", "UniEval pass rate vs N",
                   f"Share of dialogues that pass at each length N (judge {data['judge']}); {AUTHORS_UNIEVAL}."
                   + legend(data, models),
                   [table, *every, strict], charts, tables_first=True,
                   warnings=own_judge_warnings(data, "botchat_unieval"))


def own_judge_warnings(data: dict, *protocols: str) -> list[str]:
    """The warning of the report's judge when it fails a judge check on one of ``protocols`` (those whose numbers the
    section shows): the reason its 'not measured' cells leave out, said once."""
    return judge_warnings({"not_measured": {k: v for k, v in (data.get("not_measured") or {}).items()
                                            if k in protocols}})


def arena(data: dict) -> Section:
    elo, pairs = data["elo"] or [], data["pair_rates"] or []
    if not elo and not pairs:
        return Section("arena", "BotChat Arena", empty=NO_DATA)
    order = [e["model"] for e in data["leaderboard"]["rows"]]
    ns = sorted({r["n"] for r in elo})
    by = {(r["model"], r["n"]): r for r in elo}
    models = [m for m in order if any((m, n) in by for n in ns)]
    marks = checks(data)
    headers = ["Model"] + [h for n in ns for h in (f"Elo@{n}\n{ELO_HEAD}\n[{SPREAD_HEAD}]", f"BT@{n}\n[{BT_HEAD}]",
                                                   f"games@{n}")]
    rows, finding = [], unmeasured(data, "botchat_arena")
    for m in models:
        row = [named(data, m)]
        for n in ns:
            r = by.get((m, n)) or {}
            bad = bool(r) and degenerate(r, marks)
            games = items(data, "botchat_arena", m, n=n)
            spread = f"\n{interval(r.get('ci_low'), r.get('ci_high'))}" if r.get("ci_low") is not None else ""
            row += [link(not_measured_cell(finding) if finding else flag(elo_pm(r) + spread, bad), games),
                    link(not_measured_cell(finding) if finding else
                         flag(rating(r.get("bt")) + (f"\n{interval(r.get('bt_ci_low'), r.get('bt_ci_high'))}"
                                                     if r.get("bt_ci_low") is not None else ""), bad), games),
                    link(flag(num(r.get("games"), 0), few(r.get("games"), marks["min_cells"])), games)]
        rows.append(row)
    tables = [Table(headers, rows, f"Elo@N: {ELO_HEAD}; below it, [{SPREAD_HEAD}]: a spread over orderings of the "
                                   f"same games, not a confidence interval. BT@N: below it, [{BT_HEAD}].")
              ] if rows else []
    charts = []
    for n in sorted({r["n"] for r in pairs}):
        group = [r for r in pairs if r["n"] == n]
        names = sorted({r["model_a"] for r in group} | {r["model_b"] for r in group},
                       key=lambda m: (order.index(m) if m in order else len(order), m))
        cells = {}
        for r in group:
            if r["games"]:
                cells[(r["model_a"], r["model_b"])] = r["wins_a"] / r["games"]
                cells[(r["model_b"], r["model_a"])] = r["wins_b"] / r["games"]
        if not finding:
            charts.append((f"N={n}: share of games the row model won against the column model (ties count for "
                           "neither)", svg.heatmap(names, cells, label=f"Pairwise win rate at N={n}")))
        unparsed = sum(r["unparsed"] or 0 for r in group)
        head_to_head = lambda r, **kw: items(data, "botchat_arena", r["model_a"], n=r["n"],  # noqa: E731
                                             with_=(r["model_b"],), **kw)
        tables.append(Table(["Model A", "Model B", "games", "A wins", "B wins", "ties", "unparsed"],
                            [[named(data, r["model_a"]), named(data, r["model_b"]),
                              link(flag(num(r["games"], 0), few(r["games"], marks["min_cells"])), head_to_head(r)),
                              *(link(pct(r.get(k)) + f"\n{rate_interval(r.get(lo), r.get(hi))}", head_to_head(r))
                                if r.get(k) is not None else "–"
                                for k, lo, hi in (("win_rate_a", "win_a_ci_low", "win_a_ci_high"),
                                                  ("win_rate_b", "win_b_ci_low", "win_b_ci_high"),
                                                  ("tie_rate", "tie_ci_low", "tie_ci_high"))),
                              link(num(r["unparsed"], 0), head_to_head(r, unparsed=True))] for r in group],
                            caption=f"All pairs at N={n} ({unparsed:,} unparseable verdicts); each share of the "
                                    "games, with its Wilson 95% interval", numeric_from=2,
                            collapsed=True))
    intro = ("Pairs of dialogues from the same seed, judged side by side: the one the judge finds less "
             "AI-like wins. Ratings from the latest run of each (judge, N). A pair compares only the seeds "
             "both models have a dialogue for; the seeds skipped are counted in the Latest run table. "
             f"{ELO_WHAT}; below it, {ELO_SPREAD}. {BT_WHAT}."
             + legend(data, [*models, *(m for r in pairs for m in (r["model_a"], r["model_b"]))]))
    return Section("arena", "BotChat Arena", intro, tables, charts, tables_first=True,
                   warnings=own_judge_warnings(data, "botchat_arena"))


def ground_truth(data: dict) -> Section:
    gt, uni = data["gteval"] or [], {r["model"]: r for r in data["unieval_gt"] or []}
    if not gt and not uni:
        return Section("gt", "Compared to the ground truth", empty=NO_DATA)
    by = {r["model"]: r for r in gt}
    models = sorted(leaderboard_order(data, [*by, *uni]),
                    key=lambda m: (-((by.get(m) or {}).get("win_tie_rate") or -1), m))
    rows, bars = [], []
    no_gt, no_pass = unmeasured(data, "botchat_gteval"), unmeasured(data, "botchat_unieval")
    for m in models:
        g, u = by.get(m) or {}, uni.get(m) or {}
        total = g.get("comparisons") or 0
        shares = [(g.get(k) or 0) / total if total else None for k in ("win", "tie", "lose", "unparsed")]
        if total and not no_gt:
            bars.append((m, shares))
        gt_cells = ([not_measured_cell(no_gt)] * 5 if no_gt else
                    [*map(pct, shares[:3]), rate_cell(g.get("win_tie_rate"), g.get("win_tie_ci_low"),
                                                       g.get("win_tie_ci_high"), g.get("comparisons"),
                                                       min_cells=data.get("min_cells", 10)),
                     pct(g.get("win_tie_rate_parsed"))])
        pass_cells = [not_measured_cell(no_pass)] * 2 if no_pass else [pct(u.get("pass_rate")),
                                                                       pct(u.get("pass_rate_parsed"))]
        gt_items, pass_items = items(data, "botchat_gteval", m), items(data, "botchat_unieval", m)
        rows.append([named(data, m), link(num(g.get("comparisons"), 0), gt_items),
                     *(link(c, gt_items) for c in gt_cells),
                     link(num(g.get("unparsed"), 0), items(data, "botchat_gteval", m, unparsed=True)),
                     *(link(c, pass_items) for c in pass_cells),
                     link(num(u.get("unparsed"), 0), items(data, "botchat_unieval", m, unparsed=True))])
    headers = ["Model", "comparisons", "win", "tie", "lose", "Win + Tie", "Win + Tie\nunparsed left out", "unparsed",
               "UniEval pass @ GT length", "UniEval pass\nunparsed left out", "UniEval unparsed"]
    charts = [("Win / tie / lose against the human dialogue", svg.stacked_bars(
        bars, parts=GT_PARTS, label="Win tie lose versus ground truth"))] if bars else []
    intro = ("Each model's dialogue against the human one from MuTual-Test, trimmed to the human length: the model "
             "wins when the judge finds the human dialogue more AI-like. Beside it, UniEval's pass rate at "
             f"the human length. win / tie / lose / Win + Tie: {AUTHORS_GTEVAL}. UniEval pass @ GT length: "
             f"{AUTHORS_UNIEVAL}." + legend(data, models))
    caption = ("win / tie / lose / Win + Tie: shares of all comparisons, unparseable verdicts included (Win + Tie with "
               "its Wilson 95% interval and n); the 'unparsed left out' columns divide by parsed verdicts only.")
    return Section("gt", "Compared to the ground truth", intro, [Table(headers, rows, caption, numeric_from=1)], charts,
                   warnings=own_judge_warnings(data, "botchat_gteval", "botchat_unieval"))


def lengths(data: dict) -> Section:
    stats, boxes = data["lengths"] or [], {r["model"]: r for r in data["length_boxes"] or []}
    if not stats:
        return Section("lengths", "Utterance lengths", empty=NO_DATA)
    stats = sorted(stats, key=lambda r: (r["mean_tokens"] is None, r["mean_tokens"] or 0, r["model"]))
    cut = {r["model"]: r for r in data.get("truncation") or []}
    rows = []
    for r in stats:
        c, capped = cut.get(r["model"]) or {}, bool((cut.get(r["model"]) or {}).get("capped"))
        at_cap = ("–" if not c or c.get("max_tokens") is None else
                  flag(f"{c['capped']:,} ({pct(c['capped_rate'])})\nmax_tokens {c['max_tokens']}", capped))
        rows.append([named(data, r["model"]),
                     *(flag(num(r[k]), capped) for k in ("mean_tokens", "median_tokens", "p95_tokens")),
                     flag(num(r["max_tokens"], 0), capped), num(r["utterances"], 0), num(r["dialogues"], 0), at_cap])
    table = Table(["Model", "avg tokens", "median", "p95", "max", "utterances", "dialogues", "cut at max_tokens"],
                  rows, "cut at max_tokens: generated utterances whose model tokens reached the max_tokens recorded "
                        "with the dialogue (no finish reason is stored; '–' where the dialogues predate that record)")
    box_rows = [(r["model"], boxes[r["model"]]) for r in stats if r["model"] in boxes]
    charts = [("Tokens per generated utterance: box = quartiles, line = median, whiskers = min to max",
               svg.box_plot(box_rows, label="Tokens per utterance by model"))] if box_rows else []
    return Section("lengths", "Utterance lengths",
                   "CL100K tokens per generated utterance (the seed's two are not counted), shortest first."
                   + legend(data, [r["model"] for r in stats]),
                   [table], charts)
