"""The remaining report sections: vs the ground truth, lengths, judge reliability, flagged examples, runs
(MT-Bench-101's lives in ``mtbench101``, GameEval's in ``gameeval``)."""

from __future__ import annotations

import json

from dialogbench.report import svg
from dialogbench.report.gameeval import gameeval
from dialogbench.report.mtbench101 import mtbench101
from dialogbench.report.tables import NO_DATA, Section, Table, arena, leaderboard, num, pct, unieval

GT_PARTS = [("win", "#4e9a5a"), ("tie", "#9aa0a6"), ("lose", "#d1495b")]


def _order(data: dict, models) -> list[str]:
    order = [e["model"] for e in data["leaderboard"]["rows"]]
    return sorted(set(models), key=lambda m: (order.index(m) if m in order else len(order), m))


def ground_truth(data: dict) -> Section:
    gt, uni = data["gteval"] or [], {r["model"]: r for r in data["unieval_gt"] or []}
    if not gt and not uni:
        return Section("gt", "Compared to the ground truth", empty=NO_DATA)
    by = {r["model"]: r for r in gt}
    models = sorted(_order(data, [*by, *uni]), key=lambda m: (-((by.get(m) or {}).get("win_tie_rate") or -1), m))
    rows, bars = [], []
    for m in models:
        g, u = by.get(m) or {}, uni.get(m) or {}
        parsed = sum(g.get(k) or 0 for k in ("win", "tie", "lose"))
        shares = [(g.get(k) or 0) / parsed if parsed else None for k in ("win", "tie", "lose")]
        if parsed:
            bars.append((m, shares))
        rows.append([m, num(g.get("comparisons"), 0), *map(pct, shares), pct(g.get("win_tie_rate")),
                     num(g.get("unparsed"), 0), pct(u.get("pass_rate")), num(u.get("unparsed"), 0)])
    headers = ["Model", "comparisons", "win", "tie", "lose", "Win + Tie", "unparsed", "UniEval pass @ GT length",
               "UniEval unparsed"]
    charts = [("Win / tie / lose against the human dialogue", svg.stacked_bars(
        bars, parts=GT_PARTS, label="Win tie lose versus ground truth"))] if bars else []
    intro = ("Each model's dialogue against the human one from MuTual-Test, trimmed to the human length: the model "
             "wins when the judge finds the human dialogue more AI-like. Beside it, UniEval's pass rate at "
             "the human length.")
    return Section("gt", "Compared to the ground truth", intro, [Table(headers, rows)], charts)


def lengths(data: dict) -> Section:
    stats, boxes = data["lengths"] or [], {r["model"]: r for r in data["length_boxes"] or []}
    if not stats:
        return Section("lengths", "Utterance lengths", empty=NO_DATA)
    stats = sorted(stats, key=lambda r: (r["mean_tokens"] is None, r["mean_tokens"] or 0, r["model"]))
    rows = [[r["model"], num(r["mean_tokens"]), num(r["median_tokens"]), num(r["p95_tokens"]),
             num(r["max_tokens"], 0), num(r["utterances"], 0), num(r["dialogues"], 0)] for r in stats]
    table = Table(["Model", "avg tokens", "median", "p95", "max", "utterances", "dialogues"], rows)
    box_rows = [(r["model"], boxes[r["model"]]) for r in stats if r["model"] in boxes]
    charts = [("Tokens per generated utterance: box = quartiles, line = median, whiskers = min to max",
               svg.box_plot(box_rows, label="Tokens per utterance by model"))] if box_rows else []
    return Section("lengths", "Utterance lengths",
                   "CL100K tokens per generated utterance (the seed's two are not counted), shortest first.",
                   [table], charts)


def reliability(data: dict) -> Section:
    rows, outputs = data["reliability"] or [], data.get("judge_outputs") or []
    if not rows and not outputs:
        return Section("judge", "Judge reliability", empty=NO_DATA)
    tables = []
    if outputs:
        tables.append(Table(["Judge", "protocol", "engine", "output format", "verdicts", "unparsed", "unparsed rate"],
                            [[r["judge"], r["protocol"], f"{r['backend']} {r['backend_version']}", r["output_format"],
                              num(r["verdicts"], 0), num(r["unparsed"], 0), pct(r["unparsed_rate"])] for r in outputs],
                            numeric_from=4))
    if rows:
        tables.append(Table(["Judge", "protocol", "comparisons", "unparsed", "unparsed rate", "pairs both orders",
                             "flips", "flip rate"],
                            [[r["judge"], r["protocol"], num(r["comparisons"], 0), num(r["unparsed"], 0),
                              pct(r["unparsed_rate"]), num(r["pairs_both_orders"], 0), num(r["flips"], 0),
                              pct(r["flip_rate"])] for r in rows], numeric_from=2))
    return Section("judge", "Judge reliability",
                   "How each judge answered (the engine, and the output format constrained decoding held it to: "
                   "'free' when none) and how many verdicts could not be parsed; then pairs judged in both orders "
                   "whose winner flipped with the order.", tables)


def examples(data: dict) -> Section:
    ex = data["examples"]
    if not ex:
        return Section("examples", "Flagged dialogues", empty="No data yet: no dialogue flagged by UniEval.")
    order = _order(data, [e["model"] for e in ex])
    ex = sorted(ex, key=lambda e: (order.index(e["model"]), e["item_id"]))
    return Section("examples", "Flagged dialogues",
                   "For each model, a few dialogues the UniEval judge flagged as AI-involved: the first utterance "
                   "it found AI-like is highlighted, with its reason. Compare with BotChat's bad-case types: "
                   "AI self-identification, contextual confusion, excessive length, formal tone, repetitive phrasing.",
                   examples=ex)


def runs(data: dict) -> Section:
    rows = data["runs"] or []
    if not rows:
        return Section("runs", "Latest run", empty=NO_DATA)
    starts = [r["started_at"] for r in rows if r["started_at"] is not None]
    when = f", started {min(starts):%Y-%m-%d %H:%M:%S %Z}" if starts else ""
    return Section("runs", "Latest run", f"Run {rows[0]['run_id']}{when}.",
                   [Table(["Stage", "planned", "cached", "computed", "failed", "seconds", "notes"],
                          [[r["stage"], num(r["planned"], 0), num(r["cached"], 0), num(r["computed"], 0),
                            num(r["failed"], 0), num(r["seconds"]), skipped_note(r.get("detail"))] for r in rows],
                          numeric_from=1)])


def skipped_note(detail: str | None) -> str:
    """Seeds a comparison left out because one side's dialogue is missing (Arena, GTEval)."""
    skipped = json.loads(detail).get("skipped") if detail else None
    if not isinstance(skipped, dict) or not any(skipped.values()):
        return ""
    return "seeds skipped (missing dialogues): " + "; ".join(f"{k}: {v}" for k, v in sorted(skipped.items()) if v)


def all_sections(data: dict) -> list[Section]:
    return [f(data) for f in (leaderboard, unieval, arena, ground_truth, lengths, examples, mtbench101,
                                 gameeval, reliability, runs)]
