"""MT-Bench-101's part of the dialogue explorer (``Family.explorer``): every judged turn of each (model, judge)'s
current plan (the latest rating of each cell, as mtbench101_turns reads it) with the question, the context the
model answered in, its answer, the judge's reply and the rating read from it.

The question is the one stored with the answer (newer lakes); the golden context, the reference answer and a
question the lake lacks are read from the dataset file of the config the latest MT-Bench-101 run named, else the
vendored one, when it agrees with the questions stored. In self context the earlier turns show the model's own
answers, as it saw them."""

from __future__ import annotations

from pathlib import Path


from dialogbench.explorer.records import Part, Record, Source, text, turn, turns
from dialogbench.mtbench101.dataset import DatasetError, Dialogue, read_dialogues
from dialogbench.mtbench101.tables import JUDGE_STAGE
from dialogbench.mtbench101.taxonomy import TASK_BY_CODE
from dialogbench.text.yamlbounds import read_yaml_file

FAMILY, PROTOCOL = "mtbench101", "mtbench101"
TITLES = {PROTOCOL: "MT-Bench-101"}
REPO = Path(__file__).resolve().parents[2]
VENDORED = REPO / "data_lake" / "raw" / "mtbench101" / "mtbench101.jsonl"
TURNS_SQL = rf"""
    with cells as (
        select cell_key, model, judge, task from current_cells where stage = '{JUDGE_STAGE}'
    ),
    ratings as (
        select * from mtbench101_judgments
        qualify row_number() over (partition by cell_key order by created_at desc) = 1
    )
    select r.cell_key, r.item_id, c.model, c.judge, c.task, r.generation_key, r.raw_output, r.parsed,
           r.parse_error, r.score, r.protocol_version,
           try_cast(nullif(regexp_extract(r.raw_output, '\[([0-9]+)\]', 1), '') as bigint) as opencompass_score
    from cells c join ratings r using (cell_key)"""
ANSWERS_SQL = ("select * from mtbench101_answers where dialogue_id in ({}) "  # `question` only in newer lakes
               "order by created_at, cell_key")
RUN_CONFIG_SQL = (f"select config from runs where stage = '{JUDGE_STAGE}' and config is not null "
                  "order by started_at desc limit 1")


def explore(source: Source) -> Part:
    rows = source.capped(PROTOCOL, TURNS_SQL, by="model", order="task, item_id, cell_key")
    if not rows:
        return Part(titles=TITLES)
    answers = source.keyed(ANSWERS_SQL, sorted({r["item_id"].rsplit(":", 1)[0] for r in rows}))
    by_key = {a["cell_key"]: a for a in answers}
    own, asked = {}, {}  # the newest answer of (model, context, dialogue, turn); the stored question of a turn
    for a in answers:  # oldest first
        own[(a["model"], a["context"], a["dialogue_id"], a["turn"])] = a["answer"]
        if a.get("question"):
            asked[(a["dialogue_id"], a["turn"])] = a["question"]
    found, path = dataset(source)
    part = Part(titles=TITLES, notes=[
        f"MT-Bench-101: the golden context (and a question the lake did not store with its answer) is read from "
        f"{path}." if path else "MT-Bench-101: no dataset file could be read, so the golden context is not shown."])
    part.records = [record(r, by_key.get(r["generation_key"]), found, own, asked) for r in rows]
    return part


def candidates(config_path: str | None) -> list[Path]:
    """The dataset the config of the latest run names (as given, then beside the config, then in the repository),
    then the vendored file."""
    paths = []
    if config_path:
        try:
            raw = read_yaml_file(config_path) or {}  # within bounds, as load_config reads it
            named = (raw.get("mtbench101") or {}).get("dataset")
        except (OSError, AttributeError, ValueError):
            named = None
        if isinstance(named, str) and named:
            paths += [Path(named), Path(config_path).parent / named, REPO / named]
    return [*paths, VENDORED]


def dataset(source: Source) -> tuple[dict[str, Dialogue], Path | None]:
    """The dialogues by id (as text) of the first candidate that reads, and its path."""
    runs = source.read(RUN_CONFIG_SQL) or []
    for path in candidates(runs[0]["config"] if runs else None):
        if not path.is_file():
            continue
        try:
            return {str(d.id): d for d in read_dialogues(path)}, path.resolve()
        except (DatasetError, OSError, ValueError):
            continue
    return {}, None


def matching(found: Dialogue | None, dialogue_id: str, number: int, asked: dict) -> Dialogue | None:
    """The dataset's dialogue when it has the turn and agrees with every question the lake stored for it."""
    if found is None or number >= len(found.turns):
        return None
    agrees = all(asked.get((dialogue_id, i), t.user) == t.user for i, t in enumerate(found.turns[:number + 1]))
    return found if agrees else None


def record(r: dict, answer: dict | None, dialogues: dict[str, Dialogue], own: dict, asked: dict) -> Record:
    dialogue_id, turn_no = r["item_id"].rsplit(":", 1)
    number, task = int(turn_no), TASK_BY_CODE.get(r["task"])
    found = matching(dialogues.get(dialogue_id), dialogue_id, number, asked)
    context = answer["context"] if answer else None
    blocks = []
    history = []
    for i in range(number):
        user = found.turns[i].user if found else asked.get((dialogue_id, i))
        mine = own.get((r["model"], context, dialogue_id, i)) if context == "self" else None
        golden = found.turns[i].bot if found else None
        history += [turn("user", user if user is not None else "(not stored in the lake; no dataset file matched)"),
                    turn(f"assistant ({r['model']})" if mine is not None else "assistant (golden)",
                         mine if mine is not None else golden if golden is not None else "(golden reply: no dataset "
                         "file matched)")]
    if history:
        blocks.append(turns(f"Context: turns 1–{number} ({context or 'unknown'} context)", history))
    question = asked.get((dialogue_id, number)) or (found.turns[number].user if found else None)
    blocks.append(text(f"Question (turn {number + 1})", question if question is not None else
                       "(not stored in the lake with the answer, and no dataset file matched)"))
    blocks.append(text(f"Answer of {r['model']}", answer["answer"] if answer else "(the answer is not in the lake)"))
    if found:
        blocks.append(text("Reference answer (golden)", found.turns[number].bot, folded=True))
    label = f"score {r['score']}" if r["parsed"] and r["score"] is not None else "unparsed"
    return Record(
        id=f"mtbench101:{r['cell_key']}", family=FAMILY, protocol=PROTOCOL,
        title=(f"MT-Bench-101 · {r['model']} · {r['task']}{f' ({task.name})' if task else ''} · dialogue "
               f"{dialogue_id} turn {number + 1}"),
        models=(r["model"],), judge=r["judge"], verdict=label, parsed=bool(r["parsed"]), raw_output=r["raw_output"],
        result={"score": r["score"], "parse_error": r["parse_error"],
                "OpenCompass rule (first [n])": r["opencompass_score"]},
        blocks=tuple(blocks), search=f"{r['task']} {r['item_id']} {r['cell_key']}")
