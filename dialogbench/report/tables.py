"""The report's sections as renderer-neutral pieces: formatted tables (headers + rows of strings),
an optional SVG chart (HTML only) and an intro. ``html`` and ``markdown`` render the same sections."""

from __future__ import annotations

from dataclasses import dataclass, field

from dialogbench.report import svg

NO_DATA = "No data yet."


@dataclass
class Table:
    headers: list[str]
    rows: list[list[str]]
    caption: str = ""
    numeric_from: int = 1  # columns from this index are right-aligned
    collapsed: bool = False  # HTML: folded under its caption (long detail tables)
    # header rows above ``headers``, top first, each [(label, colspan)] covering every column once
    # (HTML: a multi-row <thead>; Markdown: a line naming each column's labels)
    groups: list[list[tuple[str, int]]] = field(default_factory=list)


@dataclass
class Section:
    id: str
    title: str
    intro: str = ""
    tables: list[Table] = field(default_factory=list)
    charts: list[tuple[str, str]] = field(default_factory=list)  # (caption, svg)
    empty: str | None = None  # set when there is nothing to show
    examples: list[dict] = field(default_factory=list)
    tables_first: bool = False  # HTML: the (non-collapsed) tables before the charts


def pct(v) -> str:
    return "–" if v is None else f"{float(v) * 100:.1f}%"


def num(v, digits: int = 1) -> str:
    return "–" if v is None else f"{float(v):,.{digits}f}"


def rating(v) -> str:
    return "–" if v is None else f"{float(v):.1f}"


def interval(lo, hi) -> str:
    return "–" if lo is None or hi is None else f"[{float(lo):.1f}, {float(hi):.1f}]"


def elo_pm(r: dict | None) -> str:
    if not r or r.get("elo") is None:
        return "–"
    return f"{r['elo']:.1f} ± {r['elo_std']:.1f}" if r.get("elo_std") is not None else f"{r['elo']:.1f}"


def leaderboard(data: dict) -> Section:
    lb = data["leaderboard"]
    if not lb["rows"]:
        return Section("leaderboard", "Leaderboard", empty=NO_DATA + " Run the pipeline to fill the lake.")
    headers = ["#", "Model"] + (["Win + Tie vs GT"] if lb["has_gt"] else [])
    headers += [f"pass@{n}" for n in lb["pass_ns"]]
    headers += [f"Elo@{n}\n± std; BT [95% CI]" for n in lb["elo_ns"]]
    headers += ["avg tokens", "judged", "unparsed"]
    rows = []
    for i, e in enumerate(lb["rows"], 1):
        row = [str(i), e["model"]] + ([pct(e.get("win_tie"))] if lb["has_gt"] else [])
        row += [pct(e.get(f"pass@{n}")) for n in lb["pass_ns"]]
        for n in lb["elo_ns"]:
            r = e.get(f"elo@{n}") or {}
            bt = f"\nBT {rating(r['bt'])} {interval(r.get('bt_ci_low'), r.get('bt_ci_high'))}" if r.get("bt") is not None else ""
            row.append(elo_pm(r) + bt)
        unparsed = [e.get("unparsed"), e.get("gt_unparsed")]
        row += [num(e.get("mean_tokens")), num(e.get("dialogues"), 0),
                "–" if all(u is None for u in unparsed) else f"{sum(u or 0 for u in unparsed):,}"]
        rows.append(row)
    notes = [f"Sorted by {lb['sort_by']}, best first. Judge: {data['judge'] or '–'}."]
    if lb["has_gt"]:
        notes.append("Win + Tie vs GT: share of comparisons with the human (ground-truth) dialogue, trimmed "
                     "to the same length, where the judge did not find the model's dialogue more AI-like.")
    notes.append("pass@N: share of dialogues the UniEval judge finds human up to the N-th utterance "
                 "(no AI found, or the first AI utterance comes after N); unparseable verdicts are left out.")
    if lb["elo_ns"]:
        notes.append("Elo@N: BotChat Arena bootstrap Elo (init 1000, scale 400, K 32), mean ± std over repeats; "
                     "BT@N: Bradley–Terry rating on the Elo scale with its bootstrap 95% interval.")
    notes.append("avg tokens: mean CL100K tokens per generated utterance. judged: dialogues judged by UniEval. "
                 "unparsed: verdicts the parser could not read (UniEval + GT comparisons).")
    return Section("leaderboard", "Leaderboard", "\n".join(notes), [Table(headers, rows, numeric_from=2)])


def unieval(data: dict) -> Section:
    rows = data["unieval"] or []
    if not rows:
        return Section("unieval", "UniEval pass rate vs N", empty=NO_DATA)
    order = [e["model"] for e in data["leaderboard"]["rows"]]
    ns = sorted({r["n"] for r in rows})
    by = {(r["model"], r["n"]): r["pass_rate"] for r in rows}
    models = [m for m in order if any((m, n) in by for n in ns)]
    series = {m: [(n, by[(m, n)]) for n in ns if (m, n) in by] for m in models}
    table = Table(["Model"] + [f"N={n}" for n in ns], [[m] + [pct(by.get((m, n))) for n in ns] for m in models])
    chart = svg.line_chart(series, label="UniEval pass rate vs N, one line per model")
    return Section("unieval", "UniEval pass rate vs N",
                   f"Share of dialogues that pass at each length N (judge {data['judge']}).",
                   [table], [("Pass rate vs N", chart)])


def arena(data: dict) -> Section:
    elo, pairs = data["elo"] or [], data["pair_rates"] or []
    if not elo and not pairs:
        return Section("arena", "BotChat Arena", empty=NO_DATA)
    order = [e["model"] for e in data["leaderboard"]["rows"]]
    ns = sorted({r["n"] for r in elo})
    by = {(r["model"], r["n"]): r for r in elo}
    models = [m for m in order if any((m, n) in by for n in ns)]
    headers = ["Model"] + [h for n in ns for h in (f"Elo@{n}\n± std; 2.5–97.5%", f"BT@{n}\n[95% CI]", f"games@{n}")]
    rows = []
    for m in models:
        row = [m]
        for n in ns:
            r = by.get((m, n)) or {}
            row += [elo_pm(r) + (f"\n{interval(r.get('ci_low'), r.get('ci_high'))}" if r.get("ci_low") is not None else ""),
                    rating(r.get("bt")) + (f"\n{interval(r.get('bt_ci_low'), r.get('bt_ci_high'))}"
                                           if r.get("bt_ci_low") is not None else ""),
                    num(r.get("games"), 0)]
        rows.append(row)
    tables = [Table(headers, rows)] if rows else []
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
        charts.append((f"N={n}: share of games the row model won against the column model (ties count for neither)",
                       svg.heatmap(names, cells, label=f"Pairwise win rate at N={n}")))
        unparsed = sum(r["unparsed"] or 0 for r in group)
        tables.append(Table(["Model A", "Model B", "games", "A wins", "B wins", "ties", "unparsed"],
                            [[r["model_a"], r["model_b"], num(r["games"], 0), pct(r["win_rate_a"]),
                              pct(r["wins_b"] / r["games"] if r["games"] else None), pct(r["tie_rate"]),
                              num(r["unparsed"], 0)] for r in group],
                            caption=f"All pairs at N={n} ({unparsed:,} unparseable verdicts)", numeric_from=2,
                            collapsed=True))
    intro = ("Pairs of dialogues from the same seed, judged side by side: the one the judge finds less "
             "AI-like wins. Ratings from the latest run of each (judge, N). A pair compares only the seeds "
             "both models have a dialogue for; the seeds skipped are counted in the Latest run table.")
    return Section("arena", "BotChat Arena", intro, tables, charts, tables_first=True)
