"""The judge checks' report section, "Can the judge tell?": per (judge, protocol) of the board, how many verdicts
could not be read, how often the judge gave the same answer, and how it did on its known-answer probes (per kind, per
order of a pairwise kind with the share of items that flip with the order, per length side), against the thresholds,
with what each finding means for the numbers."""

from __future__ import annotations

from dialogbench.judge_checks import history
from dialogbench.judge_checks.check import settings_from_yaml
from dialogbench.judge_checks.health import HEALTH_SQL, ORDERS_SQL, PROBES_SQL, VERBOSITY_SQL, findings
from dialogbench.report.checks import FLAG, flag, interval
from dialogbench.report.section import Context, ReportSection, Rows
from dialogbench.report.tables import NO_DATA, Section, Table, num, pct

QUERIES = {"health": HEALTH_SQL, "probes": PROBES_SQL, "orders": ORDERS_SQL, "verbosity": VERBOSITY_SQL,
           "history": history.SQL, "run_config": "select run_config from report_header"}
KINDS = {"human": "human dialogue: no AI", "ai_marked": "AI line at a known index: flagged",
         "human_vs_ai": "human vs AI-marked twin: the human wins", "golden_vs_useless": "golden answer rated above a "
         "useless one", "right_vs_wrong": "right next response vs a wrong one (held out, length-controlled): the "
         "right one wins", "golden_vs_wrong": "golden answer rated above another turn's golden answer (held out, "
         "length-controlled)", "human_vs_marked": "human dialogue vs its AI-marked twin (held out, length-controlled): "
         "the human one wins"}
ORDERS = {"human_first": "human one first", "ai_first": "AI-marked one first", "marked_first": "AI-marked one first",
          "right_first": "right one first", "wrong_first": "wrong one first"}


Z = 1.959963984540054  # the Wilson 95% interval's (sql/core/macros/wilson.sql)


def perfect_low(n: int) -> float:
    """The lower end of the Wilson 95% interval of n right of n: n / (n + z²)."""
    return n / (n + Z * Z)


def loose_bound(probes: Rows, settings) -> str:
    """What the caption says when a kind has too few items for its gate to pass even a perfect judge (the demo's few
    items): its lower end, right on every one, is under ``min_probe_accuracy``."""
    few = min((r["probes"] for r in probes if r["probes"]), default=0)
    if not few or perfect_low(few) >= settings.min_probe_accuracy:
        return ""
    return (f"; {few} items a kind is too few for a tight bound: right on all of them, the lower end would be "
            f"{pct(perfect_low(few))}, under the threshold {pct(settings.min_probe_accuracy)} (judge_checks.probes: "
            f"54 by default)")


def derive(rows: dict[str, Rows], context: Context) -> dict:
    settings = context.judge_checks or settings_from_yaml(((rows.get("run_config") or [{}])[0]).get("run_config"))
    health, probes, verbosity = rows.get("health") or [], rows.get("probes") or [], rows.get("verbosity") or []
    found = findings(health, settings, probes, rows.get("orders") or [], verbosity) if settings.enabled else []
    return {"health": health, "probes": probes, "verbosity": verbosity, "settings": settings, "findings": found,
            "history": rows.get("history") or [], "orders": rows.get("orders") or []}


def verdict(pair: tuple[str, str], health: dict | None, by: set, settings) -> str:
    """One phrase: can this judge be used on this protocol, and why not."""
    if (*pair, "unparsed") in by:
        return "no: its verdicts cannot be read"
    if (*pair, "discrimination") in by:
        return "no: it gives the same answer to nearly everything"
    if (*pair, "probes") in by:
        return "no: it fails its known-answer probes"
    if (*pair, "position") in by:
        return "no: its verdicts flip with the order the two sides are shown in"
    if (*pair, "verbosity") in by:
        return "no: it prefers the longer side"
    if health is not None and health["parsed"] < settings.min_verdicts:
        return f"yes on its probes; too few verdicts (< {settings.min_verdicts}) for the same-answer check"
    return "yes"


def sections(data: dict) -> list[Section]:
    health, probes, settings, found = data["health"], data["probes"], data["settings"], data["findings"]
    if not health and not probes:
        return [Section("judge-checks", "Can the judge tell?", empty=NO_DATA)]
    by = {(f.judge, f.protocol, f.check) for f in found}
    health_by = {(r["judge"], r["protocol"]): r for r in health}
    totals: dict[tuple[str, str], list[int]] = {}
    for r in probes:
        acc = totals.setdefault((r["judge"], r["protocol"]), [0, 0])
        acc[0], acc[1] = acc[0] + r["correct"], acc[1] + r["probes"]
    pairs = sorted(set(health_by) | set(totals))
    rows = []
    for pair in pairs:
        h, (correct, n) = health_by.get(pair), totals.get(pair, [0, 0])
        rows.append([*pair, "–" if h is None else num(h["verdicts"], 0),
                     "–" if h is None else flag(pct(h["unparsed_share"]), (*pair, "unparsed") in by),
                     "–" if h is None else flag(f"{h['top_answer'] or '–'}\n{pct(h['top_share'])} of parsed",
                                                (*pair, "discrimination") in by),
                     "–" if h is None else num(h.get("rating_spread"), 2),
                     "–" if not n else flag(f"{correct} / {n}\n{pct(correct / n)}", (*pair, "probes") in by),
                     verdict(pair, h, by, settings)])
    summary = Table(["Judge", "protocol", "verdicts", "unreadable", "most frequent answer", "spread of model means",
                     "probes right", "can it tell?"], rows, numeric_from=2,
                    caption=f"Over the board's current judgments and this judge's known-answer probes. unreadable: "
                            f"threshold {pct(settings.max_unparsed)}; most frequent answer: its share of the parsed "
                            f"verdicts, threshold {pct(settings.max_same_answer)} from {settings.min_verdicts} parsed "
                            f"verdicts on; probes right: threshold {pct(settings.min_probe_accuracy)}.")
    detail = Table(["Judge", "protocol", "probe", "probes", "right", "accuracy [95% CI]", "unreadable",
                    "AI flagged at its index", "golden − other rating"],
                   [[r["judge"], r["protocol"], KINDS.get(r["kind"], r["kind"]), num(r["probes"], 0),
                     num(r["correct"], 0), f"{pct(r['accuracy'])}\n{interval(r['ci_low'], r['ci_high'])}",
                     num(r["unparsed"], 0),
                     "–" if r["index_accuracy"] is None else f"{r['index_right']} ({pct(r['index_accuracy'])})",
                     num(r["mean_gap"], 2)] for r in probes], numeric_from=3,
                   caption="Known-answer probes per kind; an unreadable reply counts as wrong"
                           + ("; with judge_checks.items: hard each kind (and each order of a pairwise one) passes "
                              "only when the lower end of its 95% interval reaches the threshold"
                              + loose_bound(probes, settings) if settings.items == "hard" else "")) if probes else None
    lengths = verbosity_table(data.get("verbosity") or [], by, settings)
    orders = orders_table(data.get("orders") or [], by, settings)
    intro = ("A judge whose verdicts cannot be read, that gives the same answer to nearly everything, that fails "
             "probes whose right answer is known by construction, or that prefers the longer side of a pair whatever "
             "it says, measures nothing: the numbers that rest on it are shown as not measured, never as scores, and "
             + (f"the run fails on {', '.join(settings.fail)} (judge_checks.fail)." if settings.fail
                else "the run goes on (judge_checks.fail is empty).")
             + f" {FLAG}: a check it fails. "
             + ("The probes are held-out items that cheap heuristics fail (judge_checks.items: hard, the default): "
                "human MuTual dev dialogues (UniEval: no AI) and twins with one utterance replaced by a length-matched "
                "AI artefact of one of eleven kinds (UniEval: AI, at that index; GTEval: beside the human dialogue, "
                "the human one wins), a dev dialogue's right next response against a wrong one (Arena: the right one "
                "wins), MT-Bench-101's golden reply against another dialogue's of similar length (rated higher), on "
                "dialogues held out of the leaderboard (mtbench101.reserve_for_probes); "
                "each kind, and each order of a pairwise kind, passes on the lower end of its 95% interval, and a "
                "pairwise kind's flips with the order on the upper end of theirs."
                if settings.items == "hard" else
                "The probes are the basic items (judge_checks.items: basic), which only a grossly broken judge fails: "
                "a human dialogue (no AI) and its twin with one utterance replaced by \"As an AI language "
                "model…\" (AI, at that index; beside each other, the human one wins), each task's golden answer "
                "against \"I don't know.\" (rated higher)."))
    warnings = [f.why + "." for f in found]
    past = history.table(data.get("history") or [])
    return [Section("judge-checks", "Can the judge tell?", intro,
                    [summary, *([detail] if detail else []), *([orders] if orders else []),
                     *([lengths] if lengths else []), *([past] if past else [])],
                    charts=history.charts(data.get("history") or [], threshold=settings.min_probe_accuracy),
                    warnings=warnings)]


def verbosity_table(rows: list[dict], by: set, settings) -> Table | None:
    """Per (judge, protocol, kind) of judge_verbosity: right when the right side is the longer one, when it is the
    shorter one, the gap with its 95% interval (flagged when the judge fails ``verbosity``), and how often the judge
    picks the longer side. None without rows."""
    if not rows:
        return None

    def right(k, n) -> str:
        return "–" if not n else f"{k} / {n}\n{pct(k / n)}"

    return Table(["Judge", "protocol", "probe", "right when the right side is longer", "right when it is shorter",
                  "gap [95% CI]", "picks the longer side"],
                 [[r["judge"], r["protocol"], KINDS.get(r["kind"], r["kind"]), right(r["right_longer"], r["n_longer"]),
                   right(r["right_shorter"], r["n_shorter"]),
                   "–" if r["gap"] is None else flag(f"{r['gap'] * 100:+.1f} points\n"
                                                     f"{points(r['gap_ci_low'], r['gap_ci_high'])}",
                                                     (r["judge"], r["protocol"], "verbosity") in by),
                   pct(r["longer_pick_rate"])] for r in rows], numeric_from=3,
                 caption=f"Verbosity: the pairs whose longer side is known (length-controlled with "
                         f"judge_checks.items: hard, each side the longer in about half of the items); gap: accuracy "
                         f"when the right side is the longer minus when it is the shorter, its 95% interval by "
                         f"Newcombe's method; a judge fails when the interval's lower end is over "
                         f"{settings.max_verbosity_gap * 100:.0f} points (judge_checks.max_verbosity_gap).")


def orders_table(rows: list[dict], by: set, settings) -> Table | None:
    """Per (judge, protocol, kind, order) of judge_probe_orders: the probes right in that order with the accuracy's
    95% interval (flagged when the judge fails ``probes`` and, with hard items, the lower end is under
    ``min_probe_accuracy``), and the kind's items that flip with the order, their share with its 95% interval (the
    same on both orders' rows; flagged when the judge fails ``position``). None without rows."""
    if not rows:
        return None
    hard = settings.items == "hard"

    def flips(r) -> str:
        if not r.get("items"):
            return "–"
        share = f"{r['flips']} / {r['items']} {pct(r['flip_rate'])}"
        return flag(f"{share}\n{interval(r['flip_ci_low'], r['flip_ci_high'])}",
                    (r["judge"], r["protocol"], "position") in by and r["flip_ci_high"] > settings.max_probe_flip_rate)

    return Table(["Judge", "protocol", "probe", "order", "right", "accuracy [95% CI]", "flip with the order [95% CI]"],
                 [[r["judge"], r["protocol"], KINDS.get(r["kind"], r["kind"]), ORDERS.get(r["variant"], r["variant"]),
                   f"{r['correct']} / {r['probes']}",
                   flag(f"{pct(r['accuracy'])}\n{interval(r['ci_low'], r['ci_high'])}",
                        hard and (r["judge"], r["protocol"], "probes") in by
                        and (r["ci_low"] or 0.0) < settings.min_probe_accuracy),
                   flips(r)] for r in rows], numeric_from=4,
                 caption=f"Each order of a pairwise kind (which side is shown first), and the items judged in both "
                         f"orders that are right in one only (the verdict moved with the position, not the content): "
                         f"Wilson 95% intervals; "
                         + (f"an order fails when its interval's lower end is under "
                            f"{pct(settings.min_probe_accuracy)} (judge_checks.min_probe_accuracy), the flips when "
                            f"their upper end is over {pct(settings.max_probe_flip_rate)} "
                            f"(judge_checks.max_probe_flip_rate)." if hard else
                            "gated with judge_checks.items: hard only."))


def points(lo, hi) -> str:
    """A difference of two shares' interval, in percentage points."""
    return "–" if lo is None or hi is None else f"[{lo * 100:+.1f}, {hi * 100:+.1f}]"


REPORT = ReportSection(queries=QUERIES, sections=sections, derive=derive)
