"""Findings about the run's judges from the ``judge_health`` view, the known-answer probes' views (``judge_probes``,
``judge_probe_orders``, ``judge_verbosity``) and the config's thresholds: which (judge, protocol) values are not
measured, and why."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from dialogbench.judge_checks.config import JudgeChecksConfig

HEALTH_SQL = "select * from judge_health order by judge, protocol"
PROBES_SQL = "select * from judge_probes order by judge, protocol, kind"
ORDERS_SQL = "select * from judge_probe_orders order by judge, protocol, kind, variant"
VERBOSITY_SQL = "select * from judge_verbosity order by judge, protocol, kind"


@dataclass(frozen=True)
class Finding:
    """A (judge, protocol) that fails ``check``: ``share`` against ``threshold`` over ``n`` verdicts; ``why`` says it
    in a sentence (the report's warning, the run's failure line)."""

    judge: str
    protocol: str
    check: str
    share: float
    threshold: float
    n: int
    why: str

    @property
    def short(self) -> str:
        """What a not-measured cell shows: the check and the share."""
        label = {"unparsed": "unreadable", "discrimination": "same answer", "probes": "of probes right",
                 "position": "flip with the order", "verbosity": "more often right when longer"}[self.check]
        return f"not measured: {self.share:.0%} {label}"


def rows_of(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict]:
    try:
        relation = con.execute(sql)
    except duckdb.CatalogException:  # a checkout without the view
        return []
    columns = [d[0] for d in relation.description]
    return [dict(zip(columns, row)) for row in relation.fetchall()]


def health_rows(con: duckdb.DuckDBPyConnection) -> list[dict]:
    return rows_of(con, HEALTH_SQL)


def probe_rows(con: duckdb.DuckDBPyConnection) -> list[dict]:
    return rows_of(con, PROBES_SQL)


def order_rows(con: duckdb.DuckDBPyConnection) -> list[dict]:
    return rows_of(con, ORDERS_SQL)


def verbosity_rows(con: duckdb.DuckDBPyConnection) -> list[dict]:
    return rows_of(con, VERBOSITY_SQL)


def probe_findings(rows: list[dict], settings: JudgeChecksConfig, orders: list[dict] = ()) -> list[Finding]:
    """A (judge, protocol) right on fewer than ``min_probe_accuracy`` of its known-answer probes (judge_probes rows,
    every kind together) cannot tell; with ``items: hard``, each kind and order apart on its lower bound
    (``hard_probe_findings``)."""
    if settings.items == "hard":
        return hard_probe_findings(rows, settings, orders)
    totals: dict[tuple[str, str], list[int]] = {}
    for r in rows:
        acc = totals.setdefault((r["judge"], r["protocol"]), [0, 0])
        acc[0] += r["correct"]
        acc[1] += r["probes"]
    found = []
    for (judge, protocol), (correct, probes) in totals.items():
        accuracy = correct / probes if probes else 0.0
        if probes and accuracy < settings.min_probe_accuracy:
            kinds = "; ".join(f"{r['kind']} {r['correct']}/{r['probes']}" for r in rows
                              if (r["judge"], r["protocol"]) == (judge, protocol))
            found.append(Finding(judge, protocol, "probes", accuracy, settings.min_probe_accuracy, probes,
                                 f"{judge} on {protocol} cannot tell: right on {correct} of {probes} known-answer "
                                 f"probes ({accuracy:.0%}; {kinds}), under judge_checks.min_probe_accuracy "
                                 f"{settings.min_probe_accuracy:.0%}: its numbers are not measured"))
    return found


def _bound(r: dict, what: str = "") -> str:
    return (f"{r[f'{what}ci_low']:.0%}–{r[f'{what}ci_high']:.0%}" if r.get(f"{what}ci_low") is not None else "–")


def hard_probe_findings(rows: list[dict], settings: JudgeChecksConfig, orders: list[dict] = ()) -> list[Finding]:
    """``items: hard``: every kind gated apart on the lower end of its Wilson 95% interval (a judge right on 9 of 10
    is not shown to be right 80% of the time): each judge_probes kind (UniEval's human and AI-marked dialogues, a
    pairwise protocol's items, MT-Bench-101's golden-vs-wrong pairs) and each order of a pairwise kind
    (judge_probe_orders) under ``min_probe_accuracy`` fails ``probes``; a pairwise kind whose flip rate's upper bound
    is over ``max_probe_flip_rate`` fails ``position``."""
    threshold, found = settings.min_probe_accuracy, []
    for r in list(rows) + list(orders):
        if not r["probes"] or (r["ci_low"] or 0.0) >= threshold:
            continue
        which = r["kind"] + (f", {r['variant']} order" if r.get("variant") else "")
        found.append(Finding(r["judge"], r["protocol"], "probes", r["ci_low"] or 0.0, threshold, r["probes"],
                             f"{r['judge']} on {r['protocol']} cannot tell on {which}: right on {r['correct']} of "
                             f"{r['probes']} known-answer probes ({r['accuracy']:.0%}, 95% CI {_bound(r)}), the "
                             f"interval's lower end under judge_checks.min_probe_accuracy {threshold:.0%}: its numbers "
                             "are not measured"))
    seen = set()
    for r in orders:
        key = (r["judge"], r["protocol"], r["kind"])
        if key in seen or not r.get("items") or r.get("flip_ci_high") is None:
            continue
        seen.add(key)
        if r["flip_ci_high"] > settings.max_probe_flip_rate:
            found.append(Finding(r["judge"], r["protocol"], "position", r["flip_rate"], settings.max_probe_flip_rate,
                                 r["items"],
                                 f"{r['judge']} on {r['protocol']} is swayed by position on {r['kind']}: "
                                 f"{r['flips']} of {r['items']} items judged in both orders flipped with the order "
                                 f"({r['flip_rate']:.0%}, 95% CI {_bound(r, 'flip_')}), the interval's upper end over "
                                 f"judge_checks.max_probe_flip_rate {settings.max_probe_flip_rate:.0%}: its numbers "
                                 "are not measured"))
    return found


def verbosity_findings(rows: list[dict], settings: JudgeChecksConfig) -> list[Finding]:
    """A (judge, protocol, kind) of judge_verbosity right more often when the right side is the longer one than when
    it is the shorter one, by more than ``max_verbosity_gap`` at the lower end of the gap's 95% interval, fails
    ``verbosity`` (it prefers the longer side, whatever the sides say). Only kinds with items both ways are judged;
    the interval keeps a few items from deciding."""
    threshold, found = settings.max_verbosity_gap, []
    for r in rows:
        if not r.get("n_longer") or not r.get("n_shorter") or r.get("gap_ci_low") is None:
            continue
        if r["gap_ci_low"] > threshold:
            found.append(Finding(r["judge"], r["protocol"], "verbosity", r["gap"], threshold,
                                 r["n_longer"] + r["n_shorter"],
                                 f"{r['judge']} on {r['protocol']} prefers the longer side on {r['kind']}: right on "
                                 f"{r['right_longer']} of {r['n_longer']} known-answer items where the right side is "
                                 f"the longer ({r['acc_longer']:.0%}) against {r['right_shorter']} of "
                                 f"{r['n_shorter']} where it is the shorter ({r['acc_shorter']:.0%}), a gap of "
                                 f"{r['gap']:.0%} (95% CI {_bound(r, 'gap_')}; it picks the longer side on "
                                 f"{r['longer_pick_rate']:.0%}), the interval's lower end over "
                                 f"judge_checks.max_verbosity_gap {threshold:.0%}: its numbers are not measured"))
    return found


def findings(rows: list[dict], settings: JudgeChecksConfig, probes: list[dict] = (),
             orders: list[dict] = (), verbosity: list[dict] = ()) -> list[Finding]:
    """The checks each (judge, protocol) of ``rows`` (judge_health), ``probes`` (judge_probes), ``orders``
    (judge_probe_orders) and ``verbosity`` (judge_verbosity) fails under ``settings``."""
    found = []
    for r in rows:
        if r["verdicts"] and r["unparsed_share"] > settings.max_unparsed:
            found.append(Finding(r["judge"], r["protocol"], "unparsed", r["unparsed_share"], settings.max_unparsed,
                                 r["verdicts"],
                                 f"{r['judge']} on {r['protocol']}: {r['unparsed']:,} of {r['verdicts']:,} verdicts "
                                 f"({r['unparsed_share']:.0%}) could not be read (judge_checks.max_unparsed "
                                 f"{settings.max_unparsed:.0%}): its numbers are not measured"))
        top = r.get("top_share")
        if r["parsed"] >= settings.min_verdicts and top is not None and top > settings.max_same_answer:
            spread = (f"; the models' mean ratings differ by {r['rating_spread']:.2f}"
                      if r.get("rating_spread") is not None else "")
            found.append(Finding(r["judge"], r["protocol"], "discrimination", top, settings.max_same_answer,
                                 r["parsed"],
                                 f"{r['judge']} on {r['protocol']} does not discriminate: {r['top_count']:,} of "
                                 f"{r['parsed']:,} parsed verdicts ({top:.0%}) are the same answer "
                                 f"'{r['top_answer']}'{spread} (judge_checks.max_same_answer "
                                 f"{settings.max_same_answer:.0%}): its numbers are not measured"))
    return found + probe_findings(list(probes), settings, list(orders)) + verbosity_findings(list(verbosity), settings)


def not_measured(found: list[Finding]) -> dict[tuple[str, str], Finding]:
    """The first finding of each (judge, protocol): what a value of that judge and protocol shows instead."""
    out: dict[tuple[str, str], Finding] = {}
    for f in found:
        out.setdefault((f.judge, f.protocol), f)
    return out
