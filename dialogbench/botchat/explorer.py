"""BotChat's part of the dialogue explorer (``Family.explorer``): every verdict of each (model, judge)'s current
UniEval, Arena and GTEval plans (the cells the metrics count), with the dialogue(s) the judge read, cut where it
was cut. A dialogue is stored once (``texts``, by its generation key; the human one by its seed) however many
verdicts show it."""

from __future__ import annotations

from dialogbench.explorer.records import Part, Record, Source, dialogue, fields

FAMILY = "botchat"
UNIEVAL_SQL = """
    select j.cell_key, j.item_id, j.model, j.judge, j.generation_key, j.n_judged, j.raw_output, j.parsed,
           j.parse_error, j.choice, j.ai_index, j.reason, j.protocol_version
    from unieval_judgments j semi join (select cell_key from current_cells where stage = 'botchat_unieval') c
        using (cell_key)"""
# Arena rows file the model shown first as `model` (position 1), its opponent shown second
ARENA_SQL = """
    select j.cell_key, j.item_id, j.model, j.opponent, j.judge, j.generation_key, j.opponent_generation_key,
           j.n_judged, j.raw_output, j.parsed, j.parse_error, j.verdict, j.winner, j.reason, j.protocol_version
    from arena_judgments j semi join (select cell_key from current_cells where stage = 'botchat_arena') c
        using (cell_key)"""
GTEVAL_SQL = """
    select j.cell_key, j.item_id, j.model, j.opponent, j.judge, j.generation_key, j.position, j.n_judged,
           j.raw_output, j.parsed, j.parse_error, j.verdict, j.winner, j.reason, j.protocol_version
    from gteval_judgments j semi join (select cell_key from current_cells where stage = 'botchat_gteval') c
        using (cell_key)"""
DIALOGUES_SQL = "select cell_key, utterances from generations where cell_key in ({}) order by cell_key, created_at"
HUMAN_SQL = "select seed_id, dialogue, seed from seeds where seed_id in ({}) order by seed_id"
# What the judge named as AI-involved, and who that makes the winner (BotChat: the side not judged AI wins)
VERDICTS = {"conversation_1": "1st AI-like: 2nd wins", "conversation_2": "2nd AI-like: 1st wins",
            "both": "both AI-like: tie", "neither": "neither AI-like: tie"}
UNPARSED = "unparsed"


TITLES = {"botchat_unieval": "UniEval", "botchat_arena": "Arena", "botchat_gteval": "GTEval"}


def explore(source: Source) -> Part:
    part = Part(titles=TITLES)
    unieval = source.capped("botchat_unieval", UNIEVAL_SQL)
    arena = source.capped("botchat_arena", ARENA_SQL)
    gteval = source.capped("botchat_gteval", GTEVAL_SQL)
    keys = {r["generation_key"] for r in [*unieval, *arena, *gteval]} | {r["opponent_generation_key"] for r in arena}
    for row in source.keyed(DIALOGUES_SQL, sorted(k for k in keys if k)):
        part.texts[row["cell_key"]] = {"lines": list(row["utterances"] or []), "speakers": ["A", "B"], "seed": 2}
    for row in source.keyed(HUMAN_SQL, sorted({r["item_id"] for r in gteval})):
        part.texts[human_key(row["seed_id"])] = {"lines": list(row["dialogue"] or []), "speakers": ["A", "B"],
                                                 "seed": len(row["seed"] or [])}
    part.records += [unieval_record(r, part.texts) for r in unieval]
    part.records += [arena_record(r, part.texts) for r in arena]
    part.records += [gteval_record(r, part.texts) for r in gteval]
    return part


def human_key(seed_id: str) -> str:
    return f"human:{seed_id}"


def shown(key: str | None, texts: dict, title: str, **kw) -> dict:
    """A dialogue block, or a note that the lake no longer holds the dialogue."""
    if key and key in texts:
        return dialogue(title, key, **kw)
    return fields(title, {"dialogue": f"not in the lake (generation {key})"})


def unieval_record(r: dict, texts: dict) -> Record:
    verdict = (("AI found" if r["choice"] == "Yes" else "no AI") if r["parsed"] else UNPARSED)
    flagged = r["ai_index"] if r["parsed"] and r["choice"] == "Yes" else None
    return Record(
        id=f"botchat_unieval:{r['cell_key']}", family=FAMILY, protocol="botchat_unieval",
        title=f"UniEval · {r['model']} · seed {r['item_id']} · first {r['n_judged']} utterances",
        models=(r["model"],), judge=r["judge"], verdict=verdict, parsed=bool(r["parsed"]),
        raw_output=r["raw_output"],
        result={"choice": r["choice"], "ai_index": r["ai_index"], "reason": r["reason"],
                "parse_error": r["parse_error"]},
        blocks=(shown(r["generation_key"], texts, f"{r['model']}'s dialogue (seed {r['item_id']})",
                      upto=r["n_judged"], mark=flagged, note=r["reason"] if flagged else None),),
        search=f"{r['item_id']} {r['generation_key']} {r['cell_key']}")


def arena_record(r: dict, texts: dict) -> Record:
    first, second = r["model"], r["opponent"]
    winner = {"model_a": first, "model_b": second, "tie": "tie"}.get(r["winner"])
    verdict = VERDICTS.get(r["verdict"], r["verdict"] or "") if r["parsed"] else UNPARSED
    return Record(
        id=f"botchat_arena:{r['cell_key']}", family=FAMILY, protocol="botchat_arena",
        title=f"Arena · {first} (1st) vs {second} (2nd) · seed {r['item_id']} · {r['n_judged']} utterances",
        models=(first, second), judge=r["judge"], verdict=verdict, parsed=bool(r["parsed"]),
        raw_output=r["raw_output"],
        result={"verdict": r["verdict"], "winner": r["winner"], "winning model": winner, "reason": r["reason"],
                "parse_error": r["parse_error"]},
        blocks=(shown(r["generation_key"], texts, f"Conversation 1: {first}", upto=r["n_judged"]),
                shown(r["opponent_generation_key"], texts, f"Conversation 2: {second}", upto=r["n_judged"])),
        search=f"{r['item_id']} {r['generation_key']} {r['opponent_generation_key']} {r['cell_key']}")


def gteval_outcome(r: dict) -> str | None:
    """The model's outcome: it wins when the judge takes the human conversation for the AI one."""
    if not r["parsed"]:
        return None
    if r["winner"] == "tie":
        return "tie"
    return "win" if (r["position"], r["winner"]) in ((1, "model_a"), (2, "model_b")) else "lose"


def gteval_record(r: dict, texts: dict) -> Record:
    model, human = r["model"], human_key(r["item_id"])
    sides = [shown(r["generation_key"], texts, f"{model}", upto=r["n_judged"]),
             shown(human, texts, "human (MuTual)", upto=r["n_judged"])]
    if r["position"] == 2:
        sides.reverse()
    sides = [{**block, "title": f"Conversation {i}: {block['title']}"} for i, block in enumerate(sides, 1)]
    outcome = gteval_outcome(r)
    return Record(
        id=f"botchat_gteval:{r['cell_key']}", family=FAMILY, protocol="botchat_gteval",
        title=(f"GTEval · {model} vs human · seed {r['item_id']} · {model} shown "
               f"{'first' if r['position'] == 1 else 'second'} · {r['n_judged']} utterances"),
        models=(model,), judge=r["judge"], verdict=outcome or UNPARSED, parsed=bool(r["parsed"]),
        raw_output=r["raw_output"],
        result={"verdict": r["verdict"], "winner": r["winner"], "outcome for the model": outcome,
                "reason": r["reason"], "parse_error": r["parse_error"]},
        blocks=tuple(sides), search=f"{r['item_id']} {r['generation_key']} {human} {r['cell_key']}")
