"""Everything the report shows, read from the lake's views into plain dicts and lists (sorted, so the
same lake gives the same report). A view that does not exist yet reads as empty (``None``)."""

from __future__ import annotations

import logging
from collections import Counter

import duckdb

from dialogbench.lake import Lake
from dialogbench.lake.catalog import connect as catalog_connect

log = logging.getLogger("dialogbench.report")

# Every section reads one view of sql/ (the report's own views are sql/report/report_*.sql), ordered here.
QUERIES = {
    "unieval": "select * from botchat_unieval order by judge, model, n",
    "elo": "select * from botchat_elo order by judge, n, model",
    "pair_rates": "select * from botchat_pair_rates order by judge, n, model_a, model_b",
    "gteval": "select * from botchat_gteval order by judge, model",
    "unieval_gt": "select * from botchat_unieval_gt order by judge, model",
    "lengths": "select * from botchat_lengths order by model",
    "reliability": "select * from judge_reliability order by judge, protocol",
    "judge_outputs": "select * from judge_outputs order by judge, protocol, backend, backend_version, output_format",
    "length_boxes": "select * from report_length_boxes order by model",
    "mt_leaderboard": "select * from mtbench101_leaderboard order by judge, model",
    "mt_abilities": "select * from mtbench101_abilities order by judge, model",
    "mt_curves": "select * from mtbench101_turn_curves order by judge, model, task, turn",
    "ge_status": "select * from report_gameeval_status order by game",
    "ge_askguess": "select * from gameeval_askguess order by setting, model",
    "ge_spyfall": "select * from gameeval_spyfall order by spy_model, villager_model",
    "ge_spyfall_pairs": "select * from gameeval_spyfall_pairs order by item, spy_model, villager_model",
    "ge_tofukingdom_permutations": ("select * from gameeval_tofukingdom_permutations "
                                    "order by prince_model, spy_model, queen_model"),
    "runs": "select * from report_latest_run order by started_at, stage",
}

# The flagged UniEval examples of one judge: the first few seeds of each model.
EXAMPLES_SQL = ("select * exclude (judge, example) from report_flagged_examples where judge = ? and example <= ? "
                "order by model, item_id")

# GameEval's example games (one per game), then their transcripts by key (a filter DuckDB pushes below the
# transcript unnest; a join would unnest every game)
GAMEEVAL_EXAMPLE_GAMES_SQL = "select * from report_gameeval_example_games order by game"
GAMEEVAL_EXAMPLE_EVENTS_SQL = ("select * exclude (raw) from gameeval_transcripts where cell_key in ({}) "
                               "order by game, event")


def connect(lake: Lake) -> tuple[duckdb.DuckDBPyConnection, list[str]]:
    """The catalog's views (every one exists, typed and empty, before its tables have data); the
    second value, views left out, stays for callers that report it."""
    return catalog_connect(lake), []


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> list[dict] | None:
    try:
        relation = con.execute(sql, params or [])
    except duckdb.CatalogException:  # the view is not defined (yet) in this checkout
        return None
    columns = [d[0] for d in relation.description]
    return [dict(zip(columns, row)) for row in relation.fetchall()]


def primary_judge(sections: dict[str, list[dict] | None]) -> str | None:
    """The judge with the most rows across the judged views (ties: alphabetical)."""
    counts = Counter(r["judge"] for key in ("gteval", "elo", "unieval", "pair_rates", "unieval_gt")
                     for r in sections.get(key) or [] if r.get("judge"))
    return min(counts, key=lambda j: (-counts[j], j)) if counts else None


def mt_judge(data: dict, botchat_judge: str | None) -> str | None:
    """The MT-Bench-101 judge shown: the one that scored the most models (ties: the BotChat judge, then
    alphabetical)."""
    counts = Counter(r["judge"] for r in data.get("mt_leaderboard") or [] if r.get("judge"))
    return min(counts, key=lambda j: (-counts[j], j != botchat_judge, j)) if counts else None


def collect(lake: Lake, *, examples_per_model: int = 3) -> dict:
    """The report's data: one entry per section (None: view missing, []: no rows), for the primary judge."""
    con, left_out = connect(lake)
    with con:
        data: dict = {name: _rows(con, sql) for name, sql in QUERIES.items()}
        data["views_left_out"] = left_out
        judge = primary_judge(data)
        data["judges"] = sorted({r["judge"] for k in ("unieval", "elo", "gteval", "pair_rates", "unieval_gt")
                                 for r in data[k] or [] if r.get("judge")})
        data["judge"] = judge
        for key in ("unieval", "elo", "pair_rates", "gteval", "unieval_gt"):
            if data[key] is not None:
                data[key] = [r for r in data[key] if r["judge"] == judge]
        examples = _rows(con, EXAMPLES_SQL, [judge, examples_per_model]) if judge else []
        games = _rows(con, GAMEEVAL_EXAMPLE_GAMES_SQL) or []
        events = _rows(con, GAMEEVAL_EXAMPLE_EVENTS_SQL.format(", ".join("?" * len(games))),
                       [g["cell_key"] for g in games]) if games else []
    data["mt_judge"] = mt_judge(data, judge)
    for key in ("mt_leaderboard", "mt_abilities", "mt_curves"):
        if data[key] is not None:
            data[key] = [r for r in data[key] if r["judge"] == data["mt_judge"]]
    data["examples"] = [{**e, "utterances": list(e["utterances"] or [])} for e in examples or []]
    data["ge_examples"] = gameeval_examples(games, events or [])
    data["leaderboard"] = leaderboard(data)
    return data


def gameeval_examples(games: list[dict], events: list[dict]) -> list[dict]:
    """One example GameEval game per game: its details and its transcript events in order (a game without
    transcript events is left out)."""
    by_key = {g["cell_key"]: g for g in games}
    out: dict[str, dict] = {}
    for e in events:
        game = out.setdefault(e["cell_key"], {k: e[k] for k in ("cell_key", "game", "item_id", "item", "setting",
                                                               "trial", "outcome", "finished")}
                              | {k: by_key[e["cell_key"]][k] for k in ("rounds", "end_reason")}
                              | {"assignment": dict(e["assignment"] or {}), "events": []})
        game["events"].append(e)
    return sorted(out.values(), key=lambda g: (g["game"], g["item_id"]))


def pick_ns(present: set[int]) -> list[int]:
    """8 and 16 when present, else the largest N present (beside 8)."""
    if not present:
        return []
    return sorted({n for n in (8,) if n in present} | {16 if 16 in present else max(present)})


def leaderboard(data: dict) -> dict:
    unieval, elo = data["unieval"] or [], data["elo"] or []
    pass_ns, elo_ns = pick_ns({r["n"] for r in unieval}), pick_ns({r["n"] for r in elo})
    rows: dict[str, dict] = {}
    entry = lambda m: rows.setdefault(m, {"model": m})  # noqa: E731
    for r in unieval:
        e = entry(r["model"])
        e[f"pass@{r['n']}"] = r["pass_rate"]
        if r["n"] == max(pass_ns):
            e.update(dialogues=r["dialogues"], unparsed=r["unparsed"])
    for r in elo:
        if r["n"] in elo_ns:
            entry(r["model"])[f"elo@{r['n']}"] = r
    for r in data["gteval"] or []:
        entry(r["model"]).update(win_tie=r["win_tie_rate"], gt_unparsed=r["unparsed"])
    for r in data["lengths"] or []:
        entry(r["model"])["mean_tokens"] = r["mean_tokens"]
    if any(e.get("win_tie") is not None for e in rows.values()):
        key, sort_by = (lambda e: e.get("win_tie")), "Win + Tie vs GT"
    elif elo_ns:
        key, sort_by = (lambda e: (e.get(f"elo@{elo_ns[-1]}") or {}).get("elo")), f"Elo@{elo_ns[-1]}"
    elif pass_ns:
        key, sort_by = (lambda e: e.get(f"pass@{pass_ns[-1]}")), f"pass@{pass_ns[-1]}"
    else:
        key, sort_by = (lambda e: None), "model"
    ordered = sorted(rows.values(), key=lambda e: (key(e) is None, -(key(e) or 0), e["model"]))
    return {"rows": ordered, "pass_ns": pass_ns, "elo_ns": elo_ns, "sort_by": sort_by,
            "has_gt": data["gteval"] is not None and bool(data["gteval"])}
