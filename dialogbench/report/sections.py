"""The report's sections in page order: what changed since the previous run, each reporting protocol family's
(in the run's family order), who is really ahead and the trends (every protocol's, read from the history), the checks' families
(the canary, the judge checks), then the judge-wide reliability, the cost and the latest run: all but the families'
are owned by no family."""

from __future__ import annotations

import json
from collections.abc import Sequence

from dialogbench.judge_checks.self_judging import identities_from_yaml
from dialogbench.report import ahead, changes, trends
from dialogbench.report.tables import NO_DATA, Section, Table, num, pct
from dialogbench.run.family_spec import Family, family_named


def all_sections(data: dict, *, families: Sequence[Family]) -> list[Section]:
    """``data`` from ``data.collect``: the changes, the protocol families' sections, who is really ahead, the trends,
    the other families' (checks on the protocols), then the reliability, the cost and the run. ``families``: the
    run's (those ``data`` was collected with)."""
    reported = [family_named(families, name) for name in data["families"]]
    own = {f.name: f.report.sections(data["families"][f.name]) for f in reported}
    protocols = [s for f in reported if f.protocol for s in own[f.name]]
    checks = [s for f in reported if not f.protocol for s in own[f.name]]
    known = identities_from_yaml((data.get("header") or [{}])[0].get("run_config"))  # who is a judge by its weights
    return [changes.section(data.get("changes_summary"), data.get("changes")), *protocols,
            ahead.section(data.get("pairwise"), data.get("pairwise_tally"), judge=data.get("judge"), families=families,
                          identities=known),
            trends.section(data.get("trends"), judge=data.get("judge"), families=families, identities=known), *checks,
            reliability(data), cost(data), runs(data)]


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
                             "flips", "flip rate", "read differently by OpenCompass"],
                            [[r["judge"], r["protocol"], num(r["comparisons"], 0), num(r["unparsed"], 0),
                              pct(r["unparsed_rate"]), num(r["pairs_both_orders"], 0), num(r["flips"], 0),
                              pct(r["flip_rate"]), num(r.get("opencompass_differs"), 0)] for r in rows],
                            "comparisons: judged comparisons (one order each); for mtbench101, judged ratings. "
                            "read differently by OpenCompass (mtbench101 only): ratings OpenCompass's parser "
                            "(the first [n] of the reply, no 1–10 check) reads otherwise than this project's (the "
                            "last [[n]], 1–10), including replies only one of the two can read.",
                            numeric_from=2))
    return Section("judge", "Judge reliability",
                   "How each judge answered (the engine, and the output format constrained decoding held it to: "
                   "'free' when none) and how many verdicts could not be parsed; then pairs judged in both orders "
                   "whose winner flipped with the order.", tables)


def cost(data: dict) -> Section:
    """What the latest run's backend calls cost, per model and role (report_run_usage)."""
    rows = data.get("usage") or []
    if not rows:
        return Section("cost", "Cost and time of the latest run", empty="No backend call recorded for the latest run "
                       "(nothing computed, or a run from before calls were recorded).")
    total = sum(r["seconds"] or 0 for r in rows)
    priced = [r for r in rows if r["cost"] is not None]
    table = Table(["Model", "role", "stages", "backend calls", "conversations", "failed", "prompt tokens",
                   "completion tokens", "seconds", "cost"],
                  [[r["model"], r["role"], r["stages"], num(r["batches"], 0), num(r["conversations"], 0),
                    num(r["failed"], 0), num(r["prompt_tokens"], 0), num(r["completion_tokens"], 0), num(r["seconds"]),
                    ("–" if r["cost"] is None else f"{r['cost']:,.4f}" + ("" if r["priced"] else " (part)"))]
                   for r in rows], numeric_from=3,
                  caption="cost: from each model's prices per million tokens (`prices` in its config; – without "
                          "them); seconds: wall time of its backend calls")
    spent = f" and {sum(r['cost'] for r in priced):,.4f} in all for the priced models" if priced else ""
    return Section("cost", "Cost and time of the latest run",
                   f"What the latest run's backend calls cost, per model and role: {total:,.1f} s of calls{spent} "
                   "(`dialogbench query \"select * from usage\"` has every run, per stage).", [table])


def runs(data: dict) -> Section:
    rows = data["runs"] or []
    if not rows:
        return Section("runs", "Latest run", empty=NO_DATA)
    starts = [r["started_at"] for r in rows if r["started_at"] is not None]
    when = f", started {min(starts):%Y-%m-%d %H:%M:%S %Z}" if starts else ""
    return Section("runs", "Latest run", f"Run {rows[0]['run_id']}{when}.",
                   [Table(["Stage", "planned", "cached", "computed", "failed", "blocked", "seconds", "notes"],
                          [[r["stage"], num(r["planned"], 0), num(r["cached"], 0), num(r["computed"], 0),
                            num(r["failed"], 0), num(r.get("blocked"), 0), num(r["seconds"]),
                            stage_notes(r.get("detail"))] for r in rows], numeric_from=1,
                          caption="blocked: planned cells whose input (the answer or dialogue they judge) is missing "
                                  "because it failed or is still to come; they are computed once it is there")])


def stage_notes(detail: str | None) -> str:
    """Seeds a comparison left out because one side's dialogue is missing (Arena, GTEval); the group of models a
    row counts when its stage was dispatched in groups (a row per group)."""
    found = json.loads(detail) if detail else {}
    notes = [f"players: {' + '.join(found['group'])}"] if isinstance(found.get("group"), list) else []
    skipped = found.get("skipped")
    if isinstance(skipped, dict) and any(skipped.values()):
        notes.append("seeds skipped (missing dialogues): " + "; ".join(f"{k}: {v}" for k, v in sorted(skipped.items())
                                                                       if v))
    return "; ".join(notes)

