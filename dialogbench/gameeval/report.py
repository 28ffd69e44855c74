"""GameEval's report section: Ask-Guess outcomes (Table 2), SpyFall spy win rate and living rounds per ordered
model pair (Table 3) and per word pair (Figure 6), TofuKingdom points per camp permutation and per model (Table 4),
and one example transcript per game. Ask-Guess counts every trial (CE included); SpyFall and TofuKingdom count only
finished games, as the paper counts only successful trials; SpyFall games the authors' rules discard (the most-voted
name was no living player) are counted apart. Each number links to the explorer showing the games behind it
(``games``: of the game, the model or the seats, the setting or word pair); the explorer lists every played game,
unfinished ones too, each with its outcome."""

from __future__ import annotations

from dialogbench.explorer.hrefs import explorer_href
from dialogbench.report.checks import coverage, few, few_warning, flag
from dialogbench.report.section import Context, ReportSection, Rows
from dialogbench.stats import shown
from dialogbench.stats.shown import Shown, slice_text
from dialogbench.report.tables import Section, Table, link, num

QUERIES = {
    "status": "select * from report_gameeval_status order by game",
    "askguess": "select * from gameeval_askguess order by setting, model",
    "spyfall": "select * from gameeval_spyfall order by spy_model, villager_model",
    "spyfall_pairs": "select * from gameeval_spyfall_pairs order by item, spy_model, villager_model",
    "tofukingdom_permutations": ("select * from gameeval_tofukingdom_permutations "
                                 "order by prince_model, spy_model, queen_model"),
    "tofukingdom": "select * from gameeval_tofukingdom order by model, camp",
    "moves": "select * from gameeval_moves order by model, game, side",
    # the 95% intervals and rank ranges of the board's latest run (cluster bootstrap over words, word pairs, games)
    "headline": f"{shown.SQL} where family = 'gameeval'",
}
# The example games (one per game), then their transcripts by key (a filter DuckDB pushes below the transcript
# unnest; a join would unnest every game)
EXAMPLE_GAMES_SQL = "select * from report_gameeval_example_games order by game"
EXAMPLE_EVENTS_SQL = "select * exclude (raw) from gameeval_transcripts where cell_key in ({}) order by game, event"
TITLE = "GameEval"
EMPTY = "No GameEval games yet: the protocol has not run (enable gameeval in the config)."
GAMES = {"askguess": "Ask-Guess", "spyfall": "SpyFall", "tofukingdom": "TofuKingdom"}
SETTINGS = {"with_description": "w/ prior description", "without_description": "w/o prior description"}
OUTCOMES = ("st", "ee", "rle", "ame", "ce")
CAMPS = ("prince", "spy", "queen")  # Table 4's column order
CAMP_ROLES = {"prince": "Prince, Princess, Chef", "queen": "Queen, Minister, Guard", "spy": "Spy, Maid"}
MOVE_COUNTS = ("moves", "chat_errors", "placeholder_moves")  # the moves table's columns per game (gameeval_moves)
MOVE_HEADS = {"moves": "moves", "chat_errors": "chat errors", "placeholder_moves": "placeholder moves"}
EXAMPLE_EVENTS = 40  # transcript rows shown per example game
TEXT_CHARS, THOUGHT_CHARS = 80, 50  # shortened; the full texts are in the gameeval_transcripts view
NOT_PLAYED = "-"
# SpyFall Table 3's values: the true mean over word pairs, then the paper's formula (sum over word pairs / (pairs - 1))
SPYFALL_TRUE = ("spy_win_rate", "spy_living_rounds")
SPYFALL_PUBLISHED = ("spy_win_rate_published", "spy_living_rounds_published")


def derive(rows: dict[str, Rows], context: Context) -> dict:
    """The rows, and the example games with their transcripts."""
    games = context.read(EXAMPLE_GAMES_SQL) or []
    events = context.read(EXAMPLE_EVENTS_SQL.format(", ".join("?" * len(games))),
                          [g["cell_key"] for g in games]) if games else []
    return {**rows, "examples": example_games(games, events or [])}


def example_games(games: list[dict], events: list[dict]) -> list[dict]:
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


def games(game: str, *models: str, seats: dict[str, str] | None = None, keys: tuple[str, ...] = ()) -> str:
    """The explorer showing the played games of ``game`` (askguess, spyfall, tofukingdom) of any of ``models``, with
    each role of ``seats`` played by its model and each of ``keys`` (a setting, a word pair) among their keys."""
    return explorer_href(protocol=f"gameeval_{game}", models=models, seats=seats or {}, keys=keys)


def two(v) -> str:
    return num(v, 2)


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def clip(text: str | None, limit: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def status_line(status: dict[str, dict]) -> str:
    parts = []
    for game, name in GAMES.items():
        s = status.get(game)
        if not s:
            parts.append(f"{name}: not run")
            continue
        failed = s.get("backend_errors") or 0
        failed = f" ({failed:,} of them failed on backend errors: no outcome, replayed by the next run)" if failed else ""
        discarded = f", {s['discarded']:,} discarded" if s.get("discarded") else ""
        parts.append(f"{name}: {plural(s['planned'], 'game')} planned, {s['played']:,} played "
                     f"({s['finished']:,} finished, {s['unfinished']:,} unfinished{discarded}), "
                     f"{s['missing']:,} missing{failed}, {plural(s['chat_errors'] or 0, 'chat error')}, "
                     f"{plural(s.get('placeholder_moves') or 0, 'placeholder move')}")
    return "; ".join(parts) + "."


def banded(text: str, band: str) -> str:
    """A number with its 95% interval below it (none recorded: the number alone)."""
    return f"{text}\n{band}" if band else text


def position(i: int, ranks: str) -> str:
    """A leaderboard position and, below it in brackets, the ranks its number's interval allows (when more)."""
    return str(i) + (f"\n({ranks})" if ranks and ranks != str(i) else "")


def askguess_tables(rows: list[dict], status: dict | None, lowest: int = 10, found: Shown = Shown()) -> list[Table]:
    """Table 2: a block per setting (w/ prior description first), best ST first, then fewer rounds; ST and Round
    with their 95% intervals and # with the ranks ST's interval allows (``found``: the latest run's)."""
    if not status:
        return []
    unassigned = {}  # planned trials of a model with no game of the plan played yet: counted per setting only
    for r in rows:
        if r["model"] is None:
            unassigned[r["setting"]] = unassigned.get(r["setting"], 0) + (r["missing"] or 0)
    rows = [r for r in rows if r["model"] is not None and r["setting"] is not None]
    order = [s for s in SETTINGS if any(r["setting"] == s for r in rows)]
    order += sorted({r["setting"] for r in rows} - set(order))
    tables = []
    for setting in order:
        block = sorted((r for r in rows if r["setting"] == setting),
                       key=lambda r: (r["st"] is None, -(r["st"] or 0), r["mean_rounds"] is None,
                                      r["mean_rounds"] or 0, r["model"]))
        missing = sum(r["missing"] or 0 for r in block)
        differ, trials = sum(r.get("matchers_differ") or 0 for r in block), sum(r["trials"] or 0 for r in block)
        asked = "questions - 1" if setting == "without_description" else "questions asked"
        caption = (f"Table 2, Ask-Guess {SETTINGS.get(setting, setting)}, scored as the authors' compute.py: ST-CE % "
                   f"of each word's trials, averaged over words; every played trial counts, CE included; Round: per "
                   f"word the mean over its ST games ({asked}), 30 for a word never guessed, then the mean over the "
                   f"words; {missing:,} missing; matchers: {differ:,} of {trials:,} played games would score "
                   f"differently under the other matcher (authors' substring guess and ' word ' mention vs whole "
                   f"words; gameeval_askguess_matchers)")
        if unassigned.get(setting):
            caption += f" (+{unassigned[setting]:,} of models with no game yet, not listed)"
        caption += ("; below ST and Round: their 95% intervals, a bootstrap over the words (the board's latest "
                    "run's); below # in brackets: the ranks ST's interval allows, when more than the position")
        played = lambda r: games("askguess", r["model"], keys=(setting,))  # noqa: E731
        key = slice_text(setting=setting)
        band = lambda r, metric: found.interval_text("gameeval_askguess", metric, r["model"], key,  # noqa: E731
                                                     r[metric])
        body = [[position(i, found.rank_text("gameeval_askguess", "st", r["model"], key, r["st"]))
                 if r["st"] is not None else "–", r["model"],
                 *(link(text, played(r)) for text in
                   (banded(two(r["mean_rounds"]), band(r, "mean_rounds")), banded(two(r["st"]), band(r, "st")),
                    *(two(r[k]) for k in OUTCOMES[1:]), num(r["words"], 0),
                    flag(num(r["trials"], 0), few(r["trials"], lowest)))),
                 num(r["missing"], 0)] for i, r in enumerate(block, 1)]
        tables.append(Table(["#", "Model", "Round", "ST", "EE", "RLE", "AME", "CE", "words", "trials", "missing"],
                            body, caption, unbroken=(1,)))
    return tables


def spyfall_tables(rows: list[dict], pairs: list[dict], status: dict | None, lowest: int = 10,
                   found: Shown = Shown()) -> list[Table]:
    """Table 3 as two spy model x villager model matrices (w, then l; each cell with its value by the paper's
    formula and its 95% interval below it), Figure 6 as a table (win rate per word pair, a row per ordered model
    pair), all pairs."""
    rows = [r for r in rows if r["spy_model"] is not None and r["villager_model"] is not None]
    if not status or not rows:
        return []
    models = sorted({r["spy_model"] for r in rows} | {r["villager_model"] for r in rows})
    by = {(r["spy_model"], r["villager_model"]): r for r in rows}
    w_rows, l_rows = [], []
    for spy in models:
        w_line, l_line = [spy], [spy]
        for villager in models:
            r = by.get((spy, villager))
            if not r or not r["games"]:
                w_line.append(NOT_PLAYED)
                l_line.append(NOT_PLAYED)
                continue
            seated = games("spyfall", seats={"spy": spy, "villager": villager})
            band = lambda metric: found.interval_text("gameeval_spyfall", metric, spy,  # noqa: E731
                                                      slice_text(villager_model=villager), r[metric])
            w_line.append(link(flag(banded(f"{two(r[SPYFALL_TRUE[0]])}\n({two(r[SPYFALL_PUBLISHED[0]])})"
                                           f"\nn={r['games']:,}", band(SPYFALL_TRUE[0])),
                                    few(r["games"], lowest)), seated))
            l_line.append(link(banded(f"{two(r[SPYFALL_TRUE[1]])}\n({two(r[SPYFALL_PUBLISHED[1]])})",
                                      band(SPYFALL_TRUE[1])), seated))
        w_rows.append(w_line)
        l_rows.append(l_line)
    unfinished, missing, discarded = status["unfinished"], status["missing"], status.get("discarded") or 0
    counted = (f"finished games only, {unfinished:,} unfinished left out, "
               + (f"{discarded:,} discarded (most votes for no living player) left out, " if discarded else "")
               + f"{missing:,} missing")
    villagers = [[("", 1), ("Villagers", len(models))]]
    tables = [Table(["Spy", *models], w_rows,
                    "Table 3, SpyFall, w: spy win rate, row model as spy against the column model's villagers, per "
                    "word pair then the mean over the word pairs; below it, in parentheses, pub.: the same by the "
                    "paper's Table 3 formula, sum over word pairs / (word pairs - 1) ('–' below two word pairs), "
                    f"then n, its finished games, and the 95% interval of w, a bootstrap over the word pairs and the "
                    f"games within them (the board's latest run's); {counted}", groups=villagers),
              Table(["Spy", *models], l_rows,
                    "Table 3, SpyFall, l: spy living rounds, per word pair then the mean over the word pairs; below "
                    f"it, in parentheses, pub.: the same by the paper's formula, then its 95% interval; {counted}",
                    groups=villagers)]
    pairs = [p for p in pairs if p["spy_model"] is not None and p["villager_model"] is not None]
    if pairs:
        matchups = sorted({(p["spy_model"], p["villager_model"]) for p in pairs})
        items = sorted({p["item"] for p in pairs})
        cell = {(p["item"], p["spy_model"], p["villager_model"]): p for p in pairs}
        fig = []
        for spy, villager in matchups:
            line = [spy, villager]
            for item in items:
                p = cell.get((item, spy, villager))
                line.append(link(f"{two(p['spy_win_rate'])}\n{p['spy_wins']:,} / {p['games']:,}",
                                 games("spyfall", seats={"spy": spy, "villager": villager}, keys=(item,)))
                            if p and p["games"] else NOT_PLAYED)
            fig.append(line)
        words = [f"{spy_word} / {common}" if common else spy_word
                 for spy_word, _, common in (item.partition(",") for item in items)]
        tables.append(Table(["Spy", "Villagers", *words], fig,
                            "Figure 6, SpyFall spy win rate per word pair (spy word / common word), a row per spy and "
                            "villager model (below: spy wins / finished games; finished games only; Table 3's w "
                            "averages these over the word pairs)", numeric_from=2, collapsed=True,
                            groups=[[("", 2), ("Word pairs", len(words))]]))
    detail = [[r["spy_model"], r["villager_model"],
               *(link(text, games("spyfall", seats={"spy": r["spy_model"], "villager": r["villager_model"]}))
                 for text in (num(r["games"], 0), num(r["spy_wins"], 0), num(r["word_pairs"], 0),
                              *(two(r[k]) for k in (*SPYFALL_TRUE, *SPYFALL_PUBLISHED)), num(r["unfinished"], 0),
                              num(r["discarded"], 0), num(r["chat_errors"], 0),
                              num(r.get("placeholder_moves") or 0, 0))),
               num(r["missing"], 0)]
              for r in rows]
    tables.append(Table(["Spy", "Villagers", "finished games", "spy wins", "word pairs", "spy win rate",
                         "spy living rounds", "spy win rate pub.", "spy living rounds pub.", "unfinished",
                         "discarded", "chat errors", "placeholder moves", "missing"], detail,
                        "All SpyFall model pairs: finished games, unfinished, discarded and missing ones, chat errors, "
                        "placeholder moves (moves repeating the prompt's placeholder text: flagged, no chat error); "
                        "spy win rate and living rounds: mean over the word pairs with a finished game of each "
                        "pair's value (not spy wins / finished games); pub.: sum over those pairs / (pairs - 1), the "
                        "paper's Table 3 formula",
                        numeric_from=2, collapsed=True))
    return tables


def tofukingdom_table(perms: list[dict], status: dict | None, lowest: int = 10, camps: list[dict] | None = None,
                      found: Shown = Shown()) -> list[Table]:
    """Table 4: a row per camp permutation, the points of each camp (its wins: a point to the model playing it), then
    each model's Total Points in a table of their own (a column per model would not fit the page at 14 models)."""
    perms = [p for p in perms if all(p[f"{c}_model"] is not None for c in CAMPS)]
    if not status or not perms:
        return []
    models = sorted({p[f"{c}_model"] for p in perms for c in CAMPS})
    body, totals = [], dict.fromkeys(models, 0)
    for p in perms:
        for m in models:
            totals[m] += sum(p[f"{c}_wins"] for c in CAMPS if p[f"{c}_model"] == m)
        seated = games("tofukingdom", seats={c: p[f"{c}_model"] for c in CAMPS})
        body.append([*(p[f"{c}_model"] for c in CAMPS),
                     *(link(text, seated) for text in (flag(num(p["games"], 0), few(p["games"], lowest)),
                                                        num(p["unfinished"], 0),
                                                        *(num(p[f"{c}_wins"], 0) for c in CAMPS)))])
    body.append(["Total", "", "", num(sum(p["games"] for p in perms), 0),
                 num(sum(p["unfinished"] for p in perms), 0), "", "", ""])
    unfinished, missing = status["unfinished"], status["missing"]
    caption = (f"Table 4, TofuKingdom: points per camp permutation, a point to the model of a camp per finished game "
               f"the camp won; finished games only, {unfinished:,} unfinished left out, {missing:,} missing")
    ranked = sorted(models, key=lambda m: (-totals[m], m))
    by_camp = {(r["model"], r["camp"]): r for r in camps or [] if r["model"] is not None}

    def rate(m: str, camp: str) -> str:  # the camp's win rate (points / finished games), its interval and ranks
        r = by_camp.get((m, camp))
        if not r or not r["games"]:
            return NOT_PLAYED
        value, key = r["points"] / r["games"], slice_text(camp=camp)
        ranks = found.rank_text("gameeval_tofukingdom", "win_rate", m, key, value)
        return link(banded(f"{two(value)}\n{r['points']:,} / {r['games']:,}",
                           found.interval_text("gameeval_tofukingdom", "win_rate", m, key, value))
                    + (f"\nrank {ranks}" if ranks else ""), games("tofukingdom", m, seats={camp: m}))

    return [Table(["Prince", "Spy", "Queen", "games", "unfinished", *(c.capitalize() for c in CAMPS)], body, caption,
                  numeric_from=3, groups=[[("Camps", 3), ("", 2), ("Points", len(CAMPS))]]),
            Table(["Model", "Total Points", *(f"{c.capitalize()} win rate" for c in CAMPS)],
                  [[m, link(num(totals[m], 0), games("tofukingdom", m)), *(rate(m, c) for c in CAMPS)]
                   for m in ranked],
                  "Table 4, TofuKingdom Total Points: each model's points over every permutation it played, most "
                  "first; then its win rate in each camp (points / finished games), with its 95% interval, a "
                  "bootstrap over the games (the board's latest run's), and the ranks that interval allows among "
                  "the models of that camp")]


def moves_table(moves: list[dict]) -> list[Table]:
    """Each model's moves, chat errors and placeholder moves in each game (``gameeval_moves``, summed over its sides:
    Ask-Guess settings, SpyFall roles, TofuKingdom camps), folded: a row per model."""
    rows = [r for r in moves if r["model"] is not None]
    if not rows:
        return []
    games = [g for g in GAMES if any(r["game"] == g for r in rows)]
    totals: dict[tuple[str, str], dict] = {}
    for r in rows:
        t = totals.setdefault((r["model"], r["game"]), dict.fromkeys(MOVE_COUNTS, 0))
        for k in MOVE_COUNTS:
            t[k] += r[k] or 0
    body = [[m, *(num(totals[(m, g)][k], 0) if (m, g) in totals else NOT_PLAYED for g in games for k in MOVE_COUNTS)]
            for m in sorted({r["model"] for r in rows})]
    return [Table(["Model", *(MOVE_HEADS[k] for _ in games for k in MOVE_COUNTS)], body,
                  "Moves per model: each model's own moves in the played games of each game (every role, setting and "
                  "camp it played), the chat errors among them (moves the host could not read or that broke a rule: "
                  "a fallback applied; a failed backend call is no move) and its placeholder moves (moves that repeat "
                  "the prompt's placeholder text, such as \"speak\": \"your description\": flagged, no chat error, "
                  "outcomes untouched)", collapsed=True,
                  groups=[[("", 1), *((GAMES[g], len(MOVE_COUNTS)) for g in games)]])]


def example_table(g: dict) -> Table:
    """One game's transcript: who spoke, what the others heard, and the speaker's private thought."""
    events = g["events"]
    rows = []
    for e in events[:EXAMPLE_EVENTS]:
        who = e["speaker"] or ""
        if e["role"] and e["role"] not in (who, "host"):
            who += f" ({e['role']})"
        said = clip(e["text"], TEXT_CHARS) or "(nothing public)"
        if e["target"]:
            said += f" → {e['target']}"
        if e["valid"] is False:
            said += f" [invalid: {clip(e['error'], 60)}]"
        rows.append([str(e["event"]), str(e["round"] if e["round"] is not None else ""), who,
                     e["model"] or "host", said, clip(e["thought"], THOUGHT_CHARS)])
    if len(events) > EXAMPLE_EVENTS:
        rows.append(["…", "", "", "", f"{len(events) - EXAMPLE_EVENTS:,} more events (gameeval_transcripts)", ""])
    what = {"askguess": f"word '{g['item']}', {SETTINGS.get(g['setting'], g['setting'])}",
            "spyfall": "spy word / common word '{}'".format(g["item"].replace(",", " / ")),
            }.get(g["game"], "camps")
    players = ", ".join(f"{role}={model}" for role, model in g["assignment"].items())
    if g["finished"]:
        side = "camp" if g["game"] == "tofukingdom" else "side"
        result = f"outcome {g['outcome']}" if g["game"] == "askguess" else f"won by the {g['outcome']} {side}"
    elif g["outcome"] == "discarded":
        result = "discarded (the most votes went to no living player)"
    else:
        result = f"unfinished ({g['end_reason'] or 'no reason'})"
        if g["game"] == "askguess":
            result = f"outcome {g['outcome']}, " + result
    caption = (f"Example {GAMES.get(g['game'], g['game'])} game ({g['item_id']}): {what}; {players}; {result} after "
               f"{plural(g['rounds'] or 0, 'round')}")
    return Table(["#", "round", "speaker", "model", "said (public)", "thought (private)"], rows, caption,
                 numeric_from=6, collapsed=True)


def gameeval(data: dict) -> Section:
    status = {r["game"]: r for r in data.get("status") or []}
    if not status:
        return Section("gameeval", TITLE, empty=EMPTY)
    intro = ("GameEval (Qiao et al., 2023): models play goal-driven conversational games with a rule-driven host; the "
             "outcomes are the score, with no judge. The games of each game's latest plan: "
             f"{status_line(status)} Missing: planned games not played yet (counted nowhere else). "
             "Ask-Guess (Table 2) counts every played trial, chat errors included: ST successful trial, EE ending "
             "error ('gameover' before the word was guessed), RLE round limit, AME answer mentioned, CE chat error "
             "(an empty reply; a backend call that keeps failing is no CE: its game has no outcome, counts as missing "
             "and is replayed), each the share (%) of a word's trials averaged over the words; "
             "Round: the authors' rounds to success (askguess/compute.py: per word over its ST games, 30 for a word "
             "never guessed, then over the words; without the description a game's round is its questions - 1); the "
             "host matches guesses and mentions as the authors' code does unless gameeval.askguess.matcher says "
             "whole_word, and each Table 2 caption counts the games the other matcher would score differently. "
             "SpyFall and TofuKingdom count only the games that finished by "
             "the rules (the paper's successful trials): unfinished games are left out of their rates and points, and "
             "so are SpyFall games discarded by the authors' rules (the most votes went to no living player), "
             "counted apart. "
             "SpyFall (Table 3, its w and l as two matrices): the row model plays the spy against the column model's "
             "five villagers; w: spy wins / finished games, l: mean rounds the spy lived, both per word pair, then "
             "averaged over the word pairs (as the authors' compute_adversarial.py does), with the value by the "
             "paper's formula below in parentheses (pub.: the sum over word pairs divided by one pair fewer: compare "
             "these with the paper); '-': pair not played or no finished game. TofuKingdom (Table 4): one model plays every role of a camp (" +
             "; ".join(f"{c}: {r}" for c, r in CAMP_ROLES.items()) +
             ") and scores a point per finished game its camp won: a row per permutation with each camp's points, "
             "then each model's Total Points. Placeholder moves (a move whose text repeats the prompt's "
             "placeholder, as a model too small to play does under constrained decoding) are read as moves, flagged "
             "and counted beside the chat errors (the intro's counts, the SpyFall pairs and the moves per model), "
             "never a chat error. Example transcripts: 'said' is what the other "
             "players heard, 'thought' the speaker's private reasoning (in no other player's history), both shortened "
             "(in full: the gameeval_transcripts view).")
    lowest, found = data.get("min_cells", 10), Shown.from_rows(data.get("headline"))
    tables = [*askguess_tables(data.get("askguess") or [], status.get("askguess"), lowest, found),
              *spyfall_tables(data.get("spyfall") or [], data.get("spyfall_pairs") or [],
                              status.get("spyfall"), lowest, found),
              *tofukingdom_table(data.get("tofukingdom_permutations") or [], status.get("tofukingdom"), lowest,
                                 data.get("tofukingdom"), found),
              *moves_table(data.get("moves") or []),
              *map(example_table, data.get("examples") or [])]
    return Section("gameeval", TITLE, intro, tables, tables_first=True, warnings=warnings(data, status, lowest))


def warnings(data: dict, status: dict, lowest: int) -> list[str]:
    """Numbers on fewer than ``lowest`` games (Ask-Guess trials per model and setting, SpyFall finished games per
    ordered pair, TofuKingdom finished games per permutation) and players short of their plan."""
    small = [f"Ask-Guess {SETTINGS.get(r['setting'], r['setting'])} of {r['model']} ({r['trials']} trials)"
             for r in data.get("askguess") or [] if r["model"] is not None and status.get("askguess")
             and few(r["trials"], lowest)]
    small += [f"SpyFall {r['spy_model']} (spy) vs {r['villager_model']} ({r['games']} finished games)"
              for r in data.get("spyfall") or [] if r["spy_model"] is not None and status.get("spyfall")
              and few(r["games"], lowest)]
    small += [f"TofuKingdom {'/'.join(p[f'{c}_model'] for c in CAMPS)} ({p['games']} finished games)"
              for p in data.get("tofukingdom_permutations") or []
              if status.get("tofukingdom") and all(p[f"{c}_model"] is not None for c in CAMPS)
              and few(p["games"], lowest)]
    return few_warning(small, lowest, "games") + coverage(data.get("coverage"), ("gameeval",))[0]


REPORT = ReportSection(queries=QUERIES, derive=derive, sections=lambda data: [gameeval(data)])
