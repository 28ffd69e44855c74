"""GameEval's part of the dialogue explorer (``Family.explorer``): every played game of each game's current plan
(gameeval_current) with its whole transcript: every host announcement and move, the player's private thought, its
raw reply, why a move was invalid and its flags (a move that repeats its prompt's placeholder text is marked ⚑ and
counted in the record's result). No judge: the rules score a game, so its "verdict" is the outcome, and a game
counts as unparseable when a move could not be parsed, broke the rules or failed in the backend (chat errors)."""

from __future__ import annotations

from dialogbench.explorer.records import Part, Record, Source, fields, turn, turns

FAMILY = "gameeval"
GAMES = {"askguess": "Ask-Guess", "spyfall": "SpyFall", "tofukingdom": "TofuKingdom"}
OUTCOMES = {"askguess": {"ST": "ST (guessed)", "EE": "EE (wrong guess)", "RLE": "RLE (round limit)",
                         "AME": "AME (word mentioned)", "CE": "CE (chat error)"},
            "spyfall": {"spy": "spy wins", "villagers": "villagers win"},
            "tofukingdom": {"prince": "prince camp wins", "queen": "queen camp wins", "spy": "spy camp wins"}}
GAMES_SQL = """
    select cell_key, game, item_id, item, setting, trial, assignment, outcome, end_reason, finished, rounds,
           spy_living_rounds, chat_errors, placeholder_moves, steps,
           array_to_string(list_sort(map_values(assignment)), ',') as models,
           coalesce(chat_errors, 0) = 0 as parsed
    from gameeval_current where played and game = ?"""
EVENTS_SQL = ("select cell_key, event, round, speaker, role, model, kind, text, thought, target, raw, valid, error, "
              "flags from gameeval_transcripts where cell_key in ({}) order by cell_key, event")


def explore(source: Source) -> Part:
    games = [g for game in GAMES for g in source.capped(f"gameeval_{game}", GAMES_SQL, [game], by="models",
                                                        order="item_id, cell_key")]
    events: dict[str, list[dict]] = {}
    for e in source.keyed(EVENTS_SQL, [g["cell_key"] for g in games]):
        events.setdefault(e["cell_key"], []).append(e)
    return Part(records=[record(g, events.get(g["cell_key"], [])) for g in games],
                titles={f"gameeval_{game}": name for game, name in GAMES.items()})


def verdict(g: dict) -> str:
    if not g["finished"]:
        return f"unfinished ({g['end_reason'] or 'no reason'})"
    return OUTCOMES.get(g["game"], {}).get(g["outcome"], g["outcome"] or "no outcome")


def move(e: dict) -> dict:
    who = e["speaker"] if e["speaker"] == "host" else f"{e['speaker']} ({e['role']}, {e['model']})"
    shown = e["text"]
    if e["target"] and e["kind"] in ("vote", "choose", "question"):
        shown = f"{shown or ''}{' ' if shown else ''}→ {e['target']}"
    flags = f" · ⚑ {e['flags']}" if e.get("flags") else ""
    return turn(f"r{e['round']} {who} · {e['kind']}{flags}", shown, note=e["thought"],
                raw=e["raw"] if e["raw"] != e["text"] else None,
                bad=None if e["valid"] is not False else (e["error"] or "invalid move"), mark=bool(flags))


def record(g: dict, events: list[dict]) -> Record:
    assignment = dict(g["assignment"] or {})
    name = GAMES.get(g["game"], g["game"])
    setting = f" · {g['setting']}" if g["setting"] and g["setting"] != "default" else ""
    item = f" · {g['item']}" if g["item"] else ""
    players = ", ".join(f"{role}: {model}" for role, model in sorted(assignment.items()))
    return Record(
        id=f"gameeval_{g['game']}:{g['cell_key']}", family=FAMILY, protocol=f"gameeval_{g['game']}",
        title=f"{name}{item}{setting} · trial {g['trial']} · {players}",
        models=tuple(sorted(set(assignment.values()))), judge=None, verdict=verdict(g), parsed=bool(g["parsed"]),
        result={"outcome": g["outcome"], "end_reason": g["end_reason"], "finished": g["finished"],
                "rounds": g["rounds"], "spy_living_rounds": g["spy_living_rounds"], "chat_errors": g["chat_errors"],
                "placeholder moves": g["placeholder_moves"], "host steps": g["steps"]},
        blocks=(fields("Players", assignment),
                turns(f"Transcript ({len(events)} events)", [move(e) for e in events])),
        search=f"{g['item_id']} {g['cell_key']}" + (" placeholder" if g["placeholder_moves"] else ""))
