"""``dialogbench.explorer``: each family's records read off the lake (every current verdict and game, the judge's raw
output and what was parsed, the dialogue, answer or transcript it judged), the cap per protocol, a family added
through the registry, the embedded JSON that model text cannot break out of, and one self-contained page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.fakes.synthetic_lake import synthetic_lake
from dialogbench.run.registry import open_lake
from dialogbench.run import registry
from dialogbench.explorer import write_explorer
from dialogbench.explorer.collect import collect
from dialogbench.explorer.embed import script_json
from dialogbench.explorer.records import Part, Record, Source, dialogue
from dialogbench.run.family_spec import Family
from dialogbench.lake import Lake
from dialogbench.lake.catalog import connect
from dialogbench.report.build import write_report
from tests.explorer.lakes import EVIL
from tests.report.test_report import EVIL as REPORT_EVIL
from tests.report.test_report import MODELS, utterance


def rows(lake: Lake, sql: str) -> list[dict]:
    with connect(lake) as con:
        relation = con.execute(sql)
        columns = [d[0] for d in relation.description]
        return [dict(zip(columns, r)) for r in relation.fetchall()]


def current(lake: Lake, table: str, stage: str) -> dict[str, dict]:
    return {r["cell_key"]: r for r in rows(lake, f"select * from {table} semi join (select cell_key from current_cells "
                                                 f"where stage = '{stage}') using (cell_key)")}


@pytest.fixture(scope="module")
def data(lake) -> dict:
    return collect(lake, families=registry.families())


def by_protocol(data: dict, protocol: str) -> dict[str, dict]:
    return {r["id"].split(":", 1)[1]: r for r in data["records"] if r["protocol"] == protocol}


def test_every_current_botchat_verdict_with_its_raw_output_and_dialogue(lake, data):
    generations = {g["cell_key"]: g for g in rows(lake, "select * from generations")}
    unieval = current(lake, "unieval_judgments", "botchat_unieval")
    records = by_protocol(data, "botchat_unieval")
    assert set(records) == set(unieval) and len(records) == 12
    for key, j in unieval.items():
        r = records[key]
        assert (r["models"], r["judge"], r["parsed"]) == ([j["model"]], j["judge"], j["parsed"])
        assert r["raw"] == j["raw_output"]
        assert r["result"] == {"choice": j["choice"], "ai_index": j["ai_index"], "reason": j["reason"],
                               "parse_error": j["parse_error"]}
        assert r["verdict"] == ("unparsed" if not j["parsed"] else "AI found" if j["choice"] == "Yes" else "no AI")
        [block] = r["blocks"]
        assert (block["ref"], block["upto"]) == (j["generation_key"], j["n_judged"])
        assert block["mark"] == (j["ai_index"] if j["choice"] == "Yes" else None)
        assert data["texts"][block["ref"]]["lines"] == list(generations[j["generation_key"]]["utterances"])
    assert {r["verdict"] for r in records.values()} == {"AI found", "no AI", "unparsed"}


def test_arena_and_gteval_comparisons_show_both_sides_in_the_order_judged(lake, data):
    arena, records = current(lake, "arena_judgments", "botchat_arena"), by_protocol(data, "botchat_arena")
    assert set(records) == set(arena) and len(records) == 12
    for key, j in arena.items():
        r = records[key]
        assert r["models"] == [j["model"], j["opponent"]] and r["raw"] == j["raw_output"]
        assert [b["ref"] for b in r["blocks"]] == [j["generation_key"], j["opponent_generation_key"]]
        assert r["result"]["winning model"] == {"model_a": j["model"], "model_b": j["opponent"], "tie": "tie"}.get(
            j["winner"])
    gteval, records = current(lake, "gteval_judgments", "botchat_gteval"), by_protocol(data, "botchat_gteval")
    assert set(records) == set(gteval) and len(records) == 24
    seeds = {s["seed_id"]: s for s in rows(lake, "select * from seeds")}
    for key, j in gteval.items():
        r = records[key]
        refs = [b["ref"] for b in r["blocks"]]
        human = f"human:{j['item_id']}"
        assert refs == ([j["generation_key"], human] if j["position"] == 1 else [human, j["generation_key"]])
        assert data["texts"][human]["lines"] == list(seeds[j["item_id"]]["dialogue"])
        assert r["verdict"] in ({"win", "tie", "lose"} if j["parsed"] else {"unparsed"})
    # a judge's reason holding markup is kept as text, whatever the protocol
    assert any(EVIL in (r["raw"] or "") for r in data["records"])


def test_every_judged_mtbench101_turn_with_question_answer_and_rating(lake, data):
    judged = {r["cell_key"]: r for r in rows(lake, "select * from mtbench101_judgments")}
    answers = {a["cell_key"]: a for a in rows(lake, "select * from mtbench101_answers")}
    records = by_protocol(data, "mtbench101")
    assert set(records) == set(judged) and len(records) == 2 * 6
    for key, j in judged.items():
        r = records[key]
        assert r["raw"] == j["raw_output"] and r["parsed"] == j["parsed"] and r["result"]["score"] == j["score"]
        assert r["verdict"] == (f"score {j['score']}" if j["parsed"] else "unparsed")
        texts = {b["title"]: b["text"] for b in r["blocks"] if b["kind"] == "text"}
        assert texts[f"Answer of {j['model']}"] == answers[j["generation_key"]]["answer"]
        turn = int(j["item_id"].rsplit(":", 1)[1])
        assert texts[f"Question (turn {turn + 1})"] and not texts[f"Question (turn {turn + 1})"].startswith("(not")
        context = [b for b in r["blocks"] if b["kind"] == "turns"]
        assert len(context[0]["rows"]) == 2 * turn if turn else context == []
    assert any(r["result"]["score"] == 7 for r in records.values()) and any(not r["parsed"] for r in records.values())
    assert any("mtbench101.jsonl" in note for note in data["notes"])


def test_every_played_game_with_its_whole_transcript(lake, data):
    games = {g["cell_key"]: g for g in rows(lake, "select * from gameeval_current where played")}
    records = {r["id"].split(":", 1)[1]: r for r in data["records"] if r["family"] == "gameeval"}
    assert set(records) == set(games) and len(records) == 4 + 2 + 6
    for key, g in games.items():
        r = records[key]
        assert r["protocol"] == f"gameeval_{g['game']}" and r["judge"] is None and r["raw"] is None
        assert r["models"] == sorted(set(dict(g["assignment"]).values()))
        assert r["parsed"] == (g["chat_errors"] == 0)
        transcript = next(b for b in r["blocks"] if b["kind"] == "turns")
        assert len(transcript["rows"]) == len(g["transcript"])
        assert [row["text"] for row in transcript["rows"]][:1] == [g["transcript"][0]["text"]]
    assert any(row["bad"] for r in records.values() for b in r["blocks"] if b["kind"] == "turns" for row in b["rows"])


def test_counts_per_protocol_and_the_cap(lake, data):
    unparsed = sum(1 for r in data["records"] if not r["parsed"])
    assert sum(c["unparsed_shown"] for c in data["protocols"].values()) == unparsed > 0
    assert all(c["shown"] == c["records"] for c in data["protocols"].values())
    assert list(data["protocols"]) == ["botchat_unieval", "botchat_arena", "botchat_gteval", "mtbench101",
                                       "gameeval_askguess", "gameeval_spyfall", "gameeval_tofukingdom"]
    capped = collect(lake, limit=3, families=registry.families())
    for protocol, counts in capped["protocols"].items():
        kept = [r for r in capped["records"] if r["protocol"] == protocol]
        assert counts["records"] == data["protocols"][protocol]["records"]  # counted before the cap
        assert counts["shown"] == len(kept) == min(3, counts["records"])
        assert counts["unparsed_shown"] == sum(1 for r in kept if not r["parsed"])
    # an even share of each model, its unparseable records first
    unieval = [r for r in capped["records"] if r["protocol"] == "botchat_unieval"]
    assert {r["models"][0] for r in unieval} == {"bot-a", "bot-b"}
    for model in ("bot-a", "bot-b"):
        mine = [r for r in data["records"] if r["protocol"] == "botchat_unieval" and r["models"] == [model]]
        kept = [r for r in unieval if r["models"] == [model]]
        assert sum(not r["parsed"] for r in kept) == min(len(kept), sum(not r["parsed"] for r in mine))
    texts = {b["ref"] for r in capped["records"] for b in r["blocks"] if b["kind"] == "dialogue"}
    assert set(capped["texts"]) == texts  # only the dialogues the kept records show
    with pytest.raises(ValueError):
        collect(lake, limit=0, families=registry.families())


def test_the_synthetic_report_lake(tmp_path):
    synthetic_lake(tmp_path / "lake", models=MODELS, seeds=12, arena_seeds=6, utterance=utterance, seed=3)
    found = collect(open_lake(tmp_path / "lake"), families=registry.families())
    counts = {p: c["records"] for p, c in found["protocols"].items()}
    assert counts == {"botchat_unieval": 36, "botchat_arena": 72, "botchat_gteval": 36, "mtbench101": 0,
                      "gameeval_askguess": 0, "gameeval_spyfall": 0, "gameeval_tofukingdom": 0}
    assert any(REPORT_EVIL in line for t in found["texts"].values() for line in t["lines"])


def test_a_lake_with_nothing_yet(tmp_path):
    page = write_explorer(open_lake(tmp_path / "lake"), tmp_path / "out", families=registry.families()).read_text()
    data = embedded(page)
    assert data["records"] == [] and all(c["records"] == 0 for c in data["protocols"].values())


def toy_explorer(source: Source) -> Part:
    found = source.capped("toy_echo", "select 'k1' as cell_key, 'w' as item_id, 'parrot' as model, false as parsed")
    missing = source.read("select * from toy_view_that_does_not_exist")
    assert missing is None
    return Part(records=[Record(id=f"toy:{r['cell_key']}", family="toy_explore", protocol="toy_echo", title="echo",
                                models=(r["model"],), judge="grader", verdict="unparsed", parsed=r["parsed"],
                                raw_output="???", blocks=(dialogue("the echo", "toy:k1"),)) for r in found],
                texts={"toy:k1": {"lines": ["say w", "w"], "speakers": ["user", "parrot"], "seed": 1}},
                titles={"toy_echo": "Echo"})


def test_a_family_adds_its_records_through_the_registry(lake):
    family = registry.register(Family(name="toy_explore", title="Toy echo", section=object,
                                      stages=lambda config: [], explorer=toy_explorer))
    try:
        found = collect(lake, families=registry.families())
    finally:
        registry.unregister(family.name)
    assert found["families"]["toy_explore"] == "Toy echo"
    assert found["protocols"]["toy_echo"] == {"family": "toy_explore", "title": "Echo", "records": 1, "unparsed": 1,
                                              "shown": 1, "unparsed_shown": 1}
    assert found["records"][-1]["id"] == "toy:k1" and found["texts"]["toy:k1"]["speakers"] == ["user", "parrot"]
    assert "toy_explore" not in collect(lake, families=registry.families())["families"]


def embedded(page: str) -> dict:
    match = re.search(r'<script type="application/json" id="explorer-data">(.*?)</script>', page, re.S)
    return json.loads(match.group(1))


@pytest.mark.parametrize("text", [EVIL, "</SCRIPT >", "<!--<script>", "a\u2028b\u2029c", "&lt;&amp;", "\\u003c"])
def test_embedded_json_cannot_end_its_element(text):
    out = script_json({"t": text, "k": [text]})
    assert "<" not in out and ">" not in out and "&" not in out and "\u2028" not in out
    assert json.loads(out) == {"t": text, "k": [text]}


def test_the_page_is_one_self_contained_file(lake, data, tmp_path):
    path = write_explorer(lake, tmp_path / "site", families=registry.families())
    page = path.read_text()
    assert path.name == "explorer.html" and sorted(p.name for p in path.parent.iterdir()) == ["explorer.html"]
    assert embedded(page) == json.loads(json.dumps(data))  # every record, as collected
    assert page.count("</script>") == 2 and page.count("<script") == 2  # the data, then the code
    assert EVIL not in page and "window.pwned" in page  # in the data, escaped
    assert not re.search(r'(src|href)="(?!#|data:|report\.html)', page)  # nothing fetched from elsewhere
    assert "@import" not in page and "url(" not in page and "fetch(" not in page
    assert 'href="report.html"' not in page  # no report beside it: no link
    write_report(lake, tmp_path / "site", families=registry.families())
    assert 'href="report.html"' in write_explorer(lake, tmp_path / "site", families=registry.families()).read_text()
    again = write_explorer(lake, tmp_path / "again", families=registry.families()).read_text()
    assert again == page  # same lake, same page


def test_mtbench101_context_only_from_a_dataset_that_agrees_with_the_lake(tmp_path):
    from dialogbench.mtbench101.dataset import Dialogue, Turn
    from dialogbench.mtbench101.explorer import REPO, VENDORED, candidates, record

    found = {"7": Dialogue(id=7, task="GR", line=1, turns=(Turn("q1", "g1"), Turn("q2", "g2")))}
    row = {"cell_key": "k", "item_id": "7:1", "model": "m", "judge": "j", "task": "GR", "generation_key": "a",
           "raw_output": "Rating: [[3]]", "parsed": True, "parse_error": None, "score": 3, "opencompass_score": 3}
    own = {("m", "self", "7", 0): "my first answer"}
    answer = {"cell_key": "a", "context": "self", "answer": "my second answer"}

    def shown(asked: dict) -> dict:
        blocks = record(row, answer, found, own, asked).blocks
        return {"history": [(t["who"], t["text"]) for b in blocks if b["kind"] == "turns" for t in b["rows"]],
                **{b["title"]: b["text"] for b in blocks if b["kind"] == "text"}}

    agreeing = shown({("7", 1): "q2"})
    assert agreeing["history"] == [("user", "q1"), ("assistant (m)", "my first answer")]  # self context: its own
    assert agreeing["Question (turn 2)"] == "q2" and agreeing["Reference answer (golden)"] == "g2"
    other = shown({("7", 0): "another q1", ("7", 1): "another q2"})  # the lake's questions win over the file's
    assert other["history"] == [("user", "another q1"), ("assistant (m)", "my first answer")]
    assert other["Question (turn 2)"] == "another q2" and "Reference answer (golden)" not in other

    config = tmp_path / "c.yaml"
    config.write_text("mtbench101:\n  dataset: data/mt.jsonl\n")
    assert candidates(str(config)) == [Path("data/mt.jsonl"), tmp_path / "data/mt.jsonl", REPO / "data/mt.jsonl",
                                       VENDORED]
    assert candidates(None) == candidates(str(tmp_path / "missing.yaml")) == [VENDORED]
