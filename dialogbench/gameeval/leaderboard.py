"""The GameEval tables the CLI prints: Ask-Guess outcomes (Table 2), SpyFall per ordered model pair (Table 3) and
TofuKingdom points per model (Table 4's totals), from the views ``gameeval_askguess``, ``gameeval_spyfall`` and
``gameeval_tofukingdom`` (the games of each game's latest plan)."""

from __future__ import annotations

import duckdb

from dialogbench.stats.shown import read_shown, slice_text, with_intervals

VIEWS = {"askguess": "select * from gameeval_askguess order by setting, st desc nulls last, model",
         "spyfall": "select * from gameeval_spyfall order by spy_model, villager_model",
         "tofukingdom": "select * from gameeval_tofukingdom order by model, camp"}
SETTINGS = {"with_description": "w/ description", "without_description": "w/o description"}
NO_MODEL = "(no game yet)"  # planned games whose assignment no played game of the plan tells


def gameeval_leaderboard(config, con: duckdb.DuckDBPyConnection) -> dict[str, list[dict]]:
    """{"askguess": rows, "spyfall": rows, "tofukingdom": rows} of the metric views (``con``: the catalog on the
    config's board); {} when GameEval is off (or the config has no ``gameeval`` section). The headline numbers carry
    their 95% interval and the ranks it allows when the board's latest run recorded them (``st_ci_low``,
    ``st_ci_high``, ``st_ranks``; ``mean_rounds_*``; ``spy_win_rate_*``; TofuKingdom's ``win_rate`` and
    ``win_rate_*``)."""
    if not config.enabled("gameeval"):
        return {}
    out = {}
    for game, sql in VIEWS.items():
        relation = con.execute(sql)
        columns = [d[0] for d in relation.description]
        out[game] = [dict(zip(columns, r)) for r in relation.fetchall()]
    return with_game_intervals(out, read_shown(con, tuple(f"gameeval_{game}" for game in VIEWS)))


def with_game_intervals(out: dict[str, list[dict]], found) -> dict[str, list[dict]]:
    """Each game's rows with the intervals and rank ranges of its headline numbers (``stats.shown``)."""
    def each(game: str, row: dict, metric: str, model: str, **keys) -> dict:
        return with_intervals(row, found, leaderboard=f"gameeval_{game}", metric=metric, model=model,
                              slice=slice_text(**keys), column=metric)

    ask = [each("askguess", each("askguess", r, "st", r["model"], setting=r["setting"]), "mean_rounds", r["model"],
                setting=r["setting"]) for r in out.get("askguess") or []]
    spy = [each("spyfall", r, "spy_win_rate", r["spy_model"], villager_model=r["villager_model"])
           for r in out.get("spyfall") or []]
    tofu = [each("tofukingdom", {**r, "win_rate": r["points"] / r["games"] if r.get("games") else None}, "win_rate",
                 r["model"], camp=r["camp"]) for r in out.get("tofukingdom") or []]
    return {**out, "askguess": ask, "spyfall": spy, "tofukingdom": tofu}


def format_gameeval(rows: dict[str, list[dict]]) -> str:
    if not rows or not any(rows.values()):
        return "(no GameEval games yet)"
    blocks = []
    if rows.get("askguess"):
        blocks.append("GameEval Ask-Guess, scored as the authors' compute.py (% of each word's trials, averaged over "
                      "words; [95% interval], a bootstrap over the words; ranks: those ST's interval allows; "
                      "every trial counts, CE included (an empty reply; a failed backend call is no CE: the game is "
                      "missing and replayed); placeholder moves: moves repeating the prompt's placeholder text, "
                      "flagged, no chat error; rounds: per word the mean round of its ST games, "
                      "questions - 1 without the description, 30 if never guessed, then over the words; matchers "
                      "differ: games the other matcher would score differently)\n" + _table(
                          ["model", "setting", "ranks", "words", "trials", "ST", "EE", "RLE", "AME", "CE",
                           "placeholder moves", "rounds", "missing", "matchers differ"],
                          [[r["model"] or NO_MODEL, SETTINGS.get(r["setting"], r["setting"] or "-"),
                            r.get("st_ranks") or "-", str(r["words"]), str(r["trials"]), _num(r["st"]) + _ci(r, "st"),
                            *(_num(r[k]) for k in ("ee", "rle", "ame", "ce")), _count(r, "placeholder_moves"),
                            _num(r["mean_rounds"]) + _ci(r, "mean_rounds"), str(r["missing"]),
                            str(r.get("matchers_differ") or 0)]
                           for r in rows["askguess"]], left=2))
    if rows.get("spyfall"):
        blocks.append("GameEval SpyFall (finished games only; win rate = spy wins / finished games and living rounds "
                      "= mean rounds the spy lived, per word pair, then the true mean over the word pairs; pub. = "
                      "the paper's Table 3 formula, sum over word pairs / (pairs - 1); discarded: most votes for no "
                      "living player, left out; [95% interval], a bootstrap over the word pairs and their games; "
                      "chat errors and placeholder moves (moves repeating the prompt's placeholder text, flagged, no "
                      "chat error) over every played game)\n" + _table(
                          ["spy", "villagers", "games", "spy wins", "pairs", "win rate", "living rounds",
                           "win rate pub.", "living rounds pub.", "unfinished", "discarded", "chat errors",
                           "placeholder moves", "missing"],
                          [[r["spy_model"] or NO_MODEL, r["villager_model"] or NO_MODEL, str(r["games"]),
                            str(r["spy_wins"]), str(r["word_pairs"]),
                            _num(r["spy_win_rate"]) + _ci(r, "spy_win_rate"),
                            _num(r["spy_living_rounds"]), _num(r["spy_win_rate_published"]),
                            _num(r["spy_living_rounds_published"]), str(r["unfinished"]), str(r["discarded"]),
                            str(r["chat_errors"]), _count(r, "placeholder_moves"), str(r["missing"])]
                           for r in rows["spyfall"]],
                          left=2))
    if rows.get("tofukingdom"):
        models: dict[str, dict] = {}
        counts = ("games", "points", "unfinished", "missing", "chat_errors", "placeholder_moves")
        for r in rows["tofukingdom"]:
            m = models.setdefault(r["model"] or NO_MODEL, dict.fromkeys(counts, 0))
            for k in counts:
                m[k] += r.get(k) or 0
            m[r["camp"]] = f"{r['points']}/{r['games']}" + _ci(r, "win_rate")
        ranked = sorted(models.items(), key=lambda kv: (-kv[1]["points"], kv[0]))
        blocks.append("GameEval TofuKingdom (a point per finished game the model's camp won; per camp: points/games "
                      "and the [95% interval] of that win rate, a bootstrap over the games; unfinished games score "
                      "nothing; chat errors and placeholder moves: the model's own moves, in every camp, over every "
                      "played game)\n" + _table(
                          ["model", "points", "games", "prince", "spy", "queen", "unfinished", "chat errors",
                           "placeholder moves", "missing"],
                          [[name, str(m["points"]), str(m["games"]),
                            *(m.get(c, "-") for c in ("prince", "spy", "queen")), str(m["unfinished"]),
                            str(m["chat_errors"]), str(m["placeholder_moves"]), str(m["missing"])]
                           for name, m in ranked]))
    return "\n\n".join(blocks)


def _table(header: list[str], body: list[list[str]], left: int = 1) -> str:
    lines = [header] + body
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = ["  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths)))
           for line in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)


def _count(row: dict, column: str) -> str:
    """A count column, 0 when the row has none (rows built before the column existed)."""
    return str(row.get(column) or 0)


def _num(value) -> str:
    return "-" if value is None else f"{value:.2f}"


def _ci(row: dict, column: str) -> str:
    """" [low, high]" of ``row[column]``'s 95% interval (``with_intervals``), or '' without one."""
    low, high = row.get(f"{column}_ci_low"), row.get(f"{column}_ci_high")
    return "" if low is None else f" [{low:.2f}, {high:.2f}]"
