"""The GameEval tables the CLI prints: Ask-Guess outcomes (Table 2), SpyFall per ordered model pair (Table 3) and
TofuKingdom points per model (Table 4's totals), from the views ``gameeval_askguess``, ``gameeval_spyfall`` and
``gameeval_tofukingdom`` (the games of each game's latest plan)."""

from __future__ import annotations

import duckdb

VIEWS = {"askguess": "select * from gameeval_askguess order by setting, st desc nulls last, model",
         "spyfall": "select * from gameeval_spyfall order by spy_model, villager_model",
         "tofukingdom": "select * from gameeval_tofukingdom order by model, camp"}
SETTINGS = {"with_description": "w/ description", "without_description": "w/o description"}
NO_MODEL = "(no game yet)"  # planned games whose assignment no played game of the plan tells


def gameeval_leaderboard(config, con: duckdb.DuckDBPyConnection) -> dict[str, list[dict]]:
    """{"askguess": rows, "spyfall": rows, "tofukingdom": rows} of the metric views (``con``: the catalog on the
    config's board); {} when GameEval is off (or the config has no ``gameeval`` section)."""
    if not config.enabled("gameeval"):
        return {}
    out = {}
    for game, sql in VIEWS.items():
        relation = con.execute(sql)
        columns = [d[0] for d in relation.description]
        out[game] = [dict(zip(columns, r)) for r in relation.fetchall()]
    return out


def format_gameeval(rows: dict[str, list[dict]]) -> str:
    if not rows or not any(rows.values()):
        return "(no GameEval games yet)"
    blocks = []
    if rows.get("askguess"):
        blocks.append("GameEval Ask-Guess, scored as the authors' compute.py (% of each word's trials, averaged over "
                      "words; every trial counts, CE included; rounds: per word the mean round of its ST games, "
                      "questions - 1 without the description, 30 if never guessed, then over the words; matchers "
                      "differ: games the other matcher would score differently)\n" + _table(
                          ["model", "setting", "words", "trials", "ST", "EE", "RLE", "AME", "CE", "rounds", "missing",
                           "matchers differ"],
                          [[r["model"] or NO_MODEL, SETTINGS.get(r["setting"], r["setting"] or "-"), str(r["words"]),
                            str(r["trials"]), *(_num(r[k]) for k in ("st", "ee", "rle", "ame", "ce")),
                            _num(r["mean_rounds"]), str(r["missing"]), str(r.get("matchers_differ") or 0)]
                           for r in rows["askguess"]], left=2))
    if rows.get("spyfall"):
        blocks.append("GameEval SpyFall (finished games only; win rate = spy wins / finished games and living rounds "
                      "= mean rounds the spy lived, per word pair, then the true mean over the word pairs; pub. = "
                      "the paper's Table 3 formula, sum over word pairs / (pairs - 1); discarded: most votes for no "
                      "living player, left out)\n" + _table(
                          ["spy", "villagers", "games", "spy wins", "pairs", "win rate", "living rounds",
                           "win rate pub.", "living rounds pub.", "unfinished", "discarded", "chat errors", "missing"],
                          [[r["spy_model"] or NO_MODEL, r["villager_model"] or NO_MODEL, str(r["games"]),
                            str(r["spy_wins"]), str(r["word_pairs"]), _num(r["spy_win_rate"]),
                            _num(r["spy_living_rounds"]), _num(r["spy_win_rate_published"]),
                            _num(r["spy_living_rounds_published"]), str(r["unfinished"]), str(r["discarded"]),
                            str(r["chat_errors"]), str(r["missing"])]
                           for r in rows["spyfall"]],
                          left=2))
    if rows.get("tofukingdom"):
        models: dict[str, dict] = {}
        for r in rows["tofukingdom"]:
            m = models.setdefault(r["model"] or NO_MODEL, {"games": 0, "points": 0, "unfinished": 0, "missing": 0})
            for k in ("games", "points", "unfinished", "missing"):
                m[k] += r[k] or 0
            m[r["camp"]] = f"{r['points']}/{r['games']}"
        ranked = sorted(models.items(), key=lambda kv: (-kv[1]["points"], kv[0]))
        blocks.append("GameEval TofuKingdom (a point per finished game the model's camp won; per camp: points/games; "
                      "unfinished games score nothing)\n" + _table(
                          ["model", "points", "games", "prince", "spy", "queen", "unfinished", "missing"],
                          [[name, str(m["points"]), str(m["games"]),
                            *(m.get(c, "-") for c in ("prince", "spy", "queen")), str(m["unfinished"]),
                            str(m["missing"])] for name, m in ranked]))
    return "\n\n".join(blocks)


def _table(header: list[str], body: list[list[str]], left: int = 1) -> str:
    lines = [header] + body
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = ["  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths)))
           for line in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)


def _num(value) -> str:
    return "-" if value is None else f"{value:.2f}"
