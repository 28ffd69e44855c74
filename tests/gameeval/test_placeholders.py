"""Moves that repeat the prompt's placeholder text (what the embedded 135M model does when it is held to a move's
schema): read like any move, no chat error (the authors' host reads ``speak`` whatever it says), but flagged on the
transcript entry, counted in the row and the stage's detail, and shown in the explorer record."""

from __future__ import annotations

import json

import pytest

from dialogbench.explorer.records import Source
from dialogbench.gameeval import explorer
from dialogbench.gameeval.placeholders import placeholders, repeated
from dialogbench.gameeval.spyfall import DESCRIBE, HOLDERS, VOTE, SpyFall
from dialogbench.gameeval.tofukingdom import HOLDERS as TOFU_HOLDERS
from dialogbench.gameeval.tofukingdom import TofuKingdom
from dialogbench.run.registry import open_lake
from dialogbench.lake.catalog import connect
from tests import stage_runner as stage
from tests.gameeval.helpers import drive, setup
from tests.gameeval.test_stage import game_config


def test_the_placeholders_are_read_off_the_prompts():
    assert HOLDERS["describe"] == {"thought": "what you infer about the words and the players, and your plan",
                                   "speak": "your description"} == placeholders(DESCRIBE.format(name="player1"))
    assert HOLDERS["vote"] == {"thought": "your reasoning", "speak": "what you say to the others",
                               "name": "the player you vote for"} == placeholders(VOTE.format(name="p", living="p"))
    assert TOFU_HOLDERS["answer"] == {"thought": "your reasoning", "speak": "your answer"}
    assert "question" not in TOFU_HOLDERS["question"]  # `"question": 1, 2 or 3` is no text placeholder


@pytest.mark.parametrize("speak,flagged", [
    ("your description", True), ("Your Description.", True), ("{your description}", True), ("'your  description'", True),
    ("your desc", True),                   # cut short by the field's length: still the placeholder's first two words
    ("your", False),                       # one word: too little to tell
    ("your description of a car", False),  # something of its own after it
    ("a car with a star", False), ("", False)])
def test_a_field_repeats_its_placeholder(speak, flagged):
    assert repeated({"thought": "I think so", "speak": speak}, HOLDERS["describe"]) == (["speak"] if flagged else [])


def test_a_cut_thought_is_flagged_and_non_text_values_are_not():
    cut = "what you infer about the words and th"  # the demo's thought budget cuts the 63-character placeholder
    assert repeated({"thought": cut, "speak": 3}, HOLDERS["describe"]) == ["thought"]
    assert repeated({"name": None}, HOLDERS["vote"]) == []


def test_a_spyfall_game_of_placeholder_moves_is_played_flagged_and_counted():
    g = SpyFall(setup("spyfall", item="BMW,BENZ", assignment={"spy": "a", "villager": "b"}), max_rounds=1)

    def respond(move):
        if move.kind == "describe":
            return json.dumps({"thought": "what you infer about the words and the players, and your plan",
                               "speak": "your description"})
        return json.dumps({"thought": "your reasoning", "speak": "what you say to the others",
                           "name": next(n for n in g.living if n != move.player)})
    drive(g, respond)
    row = g.row(run_id="r")
    assert len(row["move_flags"]) == len(row["transcript"])
    flags = {e["kind"]: f for e, f in zip(row["transcript"], row["move_flags"]) if e["kind"] in ("describe", "vote")}
    assert flags == {"describe": "placeholder: thought, speak", "vote": "placeholder: thought, speak"}
    assert row["placeholder_moves"] == 12 and row["chat_errors"] == 0  # moves by the rules: no chat error
    describes = [e for e in row["transcript"] if e["kind"] == "describe"]
    assert all(e["valid"] and e["text"] == "your description" for e in describes)  # heard as said
    assert {"role": "user", "content": f"{g.order[0]}: your description"} in g.players[g.order[1]].history
    assert g.end_reason is not None and {f for e, f in zip(row["transcript"], row["move_flags"])
                                          if e["speaker"] == "host"} == {None}


def test_a_tofukingdom_answer_that_repeats_its_placeholder_is_flagged():
    g = TofuKingdom(setup("tofukingdom", seed=5, assignment={"prince": "p", "queen": "q", "spy": "s"}))

    def respond(move):
        if move.kind in ("question", "extra"):
            return json.dumps({"thought": "t", "question": 2, "ask": "player1", "name": "player2"})
        if move.kind == "answer":
            return json.dumps({"thought": "your reasoning", "speak": "your answer"})
        return json.dumps({"thought": "t", "name": "player1"})
    drive(g, respond)
    answers = [f for e, f in zip(g.transcript, g.move_flags) if e["kind"] == "answer"]
    assert answers == ["placeholder: thought, speak"] * 8 and g.placeholder_moves == 8 and g.chat_errors == 0
    assert g.finished


def test_placeholder_moves_in_the_row_the_stage_detail_the_transcripts_view_and_the_explorer(make_config, lake_dir):
    move = json.dumps({"thought": "your reasoning", "speak": "your description", "name": "player1"})
    models = [{"name": "a", "backend": "scripted", "script": [move]}, {"name": "b", "backend": "scripted",
                                                                        "script": [move]}]
    config = game_config(make_config, lake_dir, models=models, spyfall={"max_rounds": 1})
    report = stage.run_game(config, "spyfall", "run-1")
    games = open_lake(lake_dir).read("gameeval_games", where="game = 'spyfall'").to_pylist()
    # describe: speak is the description's placeholder; vote: thought is the vote's
    assert all(g["placeholder_moves"] == 12 for g in games) and len(games) == 2
    assert report.detail["placeholder_moves"] == 24
    with connect(open_lake(lake_dir)) as con:
        flags = con.sql("select kind, flags, count(*) from gameeval_transcripts where game = 'spyfall' "
                        "group by all order by all").fetchall()
        part = explorer.explore(Source(con, limit=50))
    assert flags == [("announce", None, 6), ("describe", "placeholder: speak", 12), ("result", None, 2),
                     ("vote", "placeholder: thought", 12)]
    [record, _] = [r for r in part.records if r.protocol == "gameeval_spyfall"]
    assert record.result["placeholder moves"] == 12 and "placeholder" in record.search
    rows = next(b for b in record.blocks if b["kind"] == "turns")["rows"]
    marked = [row for row in rows if row["mark"]]
    assert len(marked) == 12 and all("⚑ placeholder: " in row["who"] for row in marked)
    assert not any("⚑" in row["who"] for row in rows if not row["mark"])
