"""Placeholder moves (a move whose text repeats its prompt's placeholder: flagged, never a chat error) counted per model
beside the chat errors: in every GameEval leaderboard view, in ``gameeval_moves``, in the CLI's tables and in the
report's section. Real games played through the state machines, each with known placeholder moves and chat errors of
known models, written to a lake and read back through the views."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from dialogbench.gameeval.askguess import AskGuess
from dialogbench.gameeval.leaderboard import format_gameeval, gameeval_leaderboard
from dialogbench.gameeval.report import gameeval
from dialogbench.gameeval.spyfall import SpyFall
from dialogbench.gameeval.tofukingdom import TofuKingdom
from dialogbench.lake.catalog import connect, data_tests
from dialogbench.report.data import collect
from dialogbench.run import registry
from tests.gameeval.helpers import drive, setup
from tests.gameeval.test_views import NEW, at, gameeval_lake, plan_row, query


def spyfall_game() -> SpyFall:
    """x spies, y are the villagers: the spy describes with the prompt's placeholder (x: 1 placeholder move), the
    first villager in prose (y: 1 chat error); one round (round_limit: played, unfinished)."""
    g = SpyFall(setup("spyfall", item="BMW,BENZ", trial=1, seed=3, assignment={"spy": "x", "villager": "y"}),
                max_rounds=1)
    villager = next(n for n in g.order if n != g.spy)

    def respond(move):
        if move.kind == "describe":
            if move.player == g.spy:
                return json.dumps({"thought": "t", "speak": "your description"})
            return "It has wheels." if move.player == villager else json.dumps({"thought": "t", "speak": "a car"})
        return json.dumps({"thought": "t", "speak": "s", "name": next(n for n in g.living if n not in (g.spy,
                                                                                                      move.player))})
    drive(g, respond)
    return g


def tofu_game() -> TofuKingdom:
    """x the prince camp, y the queen camp, z the spy camp: the Prince's first question is about the Queen (x: 1 chat
    error), the Queen answers with the placeholder (y: 1 placeholder move), the Spy in prose (z: 1 chat error)."""
    g = TofuKingdom(setup("tofukingdom", trial=1, seed=5, assignment={"prince": "x", "queen": "y", "spy": "z"}))
    seat = {r: n for n, r in g.identity.items()}

    def respond(move):
        if move.kind == "question":
            question = "Who is the Queen?" if g.round == 0 else 2
            return json.dumps({"thought": "t", "question": question})
        if move.kind == "extra":
            return json.dumps({"thought": "t", "ask": seat["Princess"], "question": 2})
        if move.kind == "answer":
            if move.player == seat["Queen"]:
                return json.dumps({"thought": "your reasoning", "speak": "your answer"})
            return "I am the Spy." if move.player == seat["Spy"] else json.dumps({"thought": "t", "speak": "I am me"})
        return json.dumps({"thought": "t", "name": seat["Princess"]})
    drive(g, respond)
    return g


def askguess_game() -> AskGuess:
    """x asks an empty question: CE, one chat error, no placeholder (plain-text replies)."""
    g = AskGuess(setup("askguess", item="apple", setting="without_description", trial=1,
                       assignment={"questioner": "x", "answerer": "x"}))
    drive(g, lambda m: "")
    return g


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    games = {"spyfall": spyfall_game(), "tofukingdom": tofu_game(), "askguess": askguess_game()}
    rows = []
    for game, g in games.items():
        row = g.row(run_id=NEW)
        if game == "askguess":
            row["item_id"] = "apple/without_description/1"
        rows.append(row)
    plans = [plan_row(NEW, r["game"], r["cell_key"], r["item_id"], dict(r["assignment"]), at(1)) for r in rows]
    return games, gameeval_lake(tmp_path_factory.mktemp("placeholders") / "lake", rows, plans)


def test_the_games_counted_what_was_injected(played):
    games, _ = played
    assert (games["spyfall"].placeholder_moves, games["spyfall"].chat_errors) == (1, 1)
    assert (games["tofukingdom"].placeholder_moves, games["tofukingdom"].chat_errors) == (1, 2)
    assert (games["askguess"].placeholder_moves, games["askguess"].chat_errors, games["askguess"].outcome) == \
        (0, 1, "CE")
    assert games["tofukingdom"].finished and not games["spyfall"].finished


def test_gameeval_moves_counts_each_models_moves_per_side(played):
    games, lake = played
    rows = {(r["game"], r["model"], r["side"]): (r["games"], r["moves"], r["chat_errors"], r["placeholder_moves"])
            for r in query(lake, "select * from gameeval_moves")}
    spy = games["spyfall"]
    assert rows == {
        ("askguess", "x", "without_description"): (1, 1, 1, 0),  # the empty question, the only move
        ("spyfall", "x", "spy"): (1, 2, 0, 1),  # its description (the placeholder) and its vote
        ("spyfall", "y", "villager"): (1, 2 * (len(spy.order) - 1), 1, 0),
        # the Prince's 8 questions and choice, the Princess's two answers and the Chef's
        ("tofukingdom", "x", "prince"): (1, 12, 1, 0),
        ("tofukingdom", "y", "queen"): (1, 3, 0, 1),
        ("tofukingdom", "z", "spy"): (1, 2, 1, 0)}
    # per game, the per-move counts add up to the games' own counters
    for game, g in games.items():
        mine = [v for k, v in rows.items() if k[0] == game]
        assert sum(v[2] for v in mine) == g.chat_errors and sum(v[3] for v in mine) == g.placeholder_moves


def test_every_leaderboard_view_has_the_count_beside_its_chat_errors(played):
    _, lake = played
    (ask,) = query(lake, "select * from gameeval_askguess")
    assert (ask["model"], ask["ce"], ask["placeholder_moves"]) == ("x", 100, 0)
    (spy,) = query(lake, "select * from gameeval_spyfall")
    assert (spy["spy_model"], spy["chat_errors"], spy["placeholder_moves"], spy["unfinished"]) == ("x", 1, 1, 1)
    (pair,) = query(lake, "select * from gameeval_spyfall_pairs")
    assert (pair["chat_errors"], pair["placeholder_moves"]) == (1, 1)
    camps = {r["camp"]: (r["model"], r["chat_errors"], r["placeholder_moves"])
             for r in query(lake, "select * from gameeval_tofukingdom")}
    assert camps == {"prince": ("x", 1, 0), "queen": ("y", 0, 1), "spy": ("z", 1, 0)}
    (perm,) = query(lake, "select * from gameeval_tofukingdom_permutations")
    assert (perm["chat_errors"], perm["placeholder_moves"]) == (2, 1)
    status = {r["game"]: (r["chat_errors"], r["placeholder_moves"])
              for r in query(lake, "select * from report_gameeval_status")}
    assert status == {"askguess": (1, 0), "spyfall": (1, 1), "tofukingdom": (2, 1)}


def test_the_columns_follow_the_views_columns_order(played):
    """placeholder_moves sits beside the chat errors: after CE (Ask-Guess), after chat_errors (the others)."""
    _, lake = played
    for view, before in (("gameeval_askguess", "ce"), ("gameeval_spyfall", "chat_errors"),
                         ("gameeval_spyfall_pairs", "chat_errors"), ("gameeval_tofukingdom", "chat_errors"),
                         ("gameeval_tofukingdom_permutations", "chat_errors")):
        with connect(lake) as con:
            columns = [d[0] for d in con.execute(f"select * from {view} limit 0").description]
        assert columns[columns.index(before) + 1] == "placeholder_moves", view


def test_the_data_test_checks_each_games_count_against_its_flags(played, tmp_path):
    games, lake = played
    assert data_tests(lake) == {}
    row = games["spyfall"].row(run_id=NEW)
    broken = {**row, "placeholder_moves": 2}  # one move flagged, two counted
    plans = [plan_row(NEW, "spyfall", row["cell_key"], row["item_id"], dict(row["assignment"]), at(1))]
    failing = data_tests(gameeval_lake(tmp_path / "lake", [broken], plans))
    assert failing == {"gameeval_placeholder_moves_add_up": 1}


def test_the_cli_tables_show_placeholder_moves_per_model(played):
    _, lake = played
    config = SimpleNamespace(enabled=lambda name: name == "gameeval")
    with connect(lake) as con:
        text = format_gameeval(gameeval_leaderboard(config, con))
    blocks = {b.split()[1]: b.splitlines() for b in text.split("\n\n")}
    _, ask_head, _, ask = blocks["Ask-Guess,"]  # caption, header, rule, the one row
    head = ask_head.split()
    assert head[head.index("CE"):head.index("CE") + 4] == ["CE", "placeholder", "moves", "rounds"]
    cells = ask.split()
    assert cells[:3] == ["x", "w/o", "description"] and cells[10:12] == ["100.00", "0"]  # CE, then placeholder moves
    _, spy_head, _, spy = blocks["SpyFall"]
    assert spy.split()[-3:] == ["1", "1", "0"] and spy_head.split()[-4:] == ["errors", "placeholder", "moves",
                                                                               "missing"]
    tofu = {line.split()[0]: line.split() for line in blocks["TofuKingdom"][3:]}
    # chat errors, placeholder moves, missing: each model's own moves
    assert {m: cells[-3:] for m, cells in tofu.items()} == {"x": ["1", "0", "0"], "y": ["0", "1", "0"],
                                                            "z": ["1", "0", "0"]}


def test_the_report_shows_placeholder_moves_beside_chat_errors(played):
    _, lake = played
    section = gameeval(collect(lake, families=registry.families())["families"]["gameeval"])
    assert "SpyFall: 1 game planned, 1 played (0 finished, 1 unfinished), 0 missing, 1 chat error, 1 placeholder move" \
        in section.intro
    assert "TofuKingdom: 1 game planned, 1 played (1 finished, 0 unfinished), 0 missing, 2 chat errors, " \
           "1 placeholder move" in section.intro
    assert "0 placeholder moves" in section.intro.split("SpyFall:")[0]  # Ask-Guess's
    (moves,) = [t for t in section.tables if t.caption.startswith("Moves per model")]
    assert moves.collapsed and moves.headers == ["Model", *["moves", "chat errors", "placeholder moves"] * 3]
    assert moves.groups == [[("", 1), ("Ask-Guess", 3), ("SpyFall", 3), ("TofuKingdom", 3)]]
    by_model = {r[0]: r[1:] for r in moves.rows}
    assert by_model == {"x": ["1", "1", "0", "2", "0", "1", "12", "1", "0"],
                        "y": ["-", "-", "-", "10", "1", "0", "3", "0", "1"],
                        "z": ["-", "-", "-", "-", "-", "-", "2", "1", "0"]}
    (detail,) = [t for t in section.tables if t.caption.startswith("All SpyFall model pairs")]
    at_ = detail.headers.index("placeholder moves")
    assert detail.headers[at_ - 1] == "chat errors" and str(detail.rows[0][at_]) == "1"
