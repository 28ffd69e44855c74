"""``gameeval_games.move_prompt_tokens`` / ``move_completion_tokens``: the backend's token counts of each
transcript entry's move (aligned with ``transcript``, null for the host's entries), a failed move included; they add
up to the game's totals, which the data test ``gameeval_move_tokens_add_up`` checks on every lake."""

from __future__ import annotations

import json

import pyarrow as pa

from dialogbench.backends.base import Completion
from dialogbench.gameeval.askguess import AskGuess
from dialogbench.gameeval.spyfall import SpyFall
from dialogbench.gameeval.tables import GAMEEVAL_GAMES
from dialogbench.run.registry import open_lake
from dialogbench.lake.catalog import data_tests
from tests import stage_runner as stage
from tests.gameeval.helpers import setup
from tests.gameeval.test_stage import game_config, rows


def play(game, reply) -> list[tuple[str, int, int]]:
    """Drive ``game`` to its end; ``reply(move, n)`` gives the n-th move's text (None: a backend error). Each move's
    completion gets its own counts (prompt 100 + n, completion n + 1); returns (player, prompt, completion) per move."""
    spent, n = [], 0
    while not game.ended:
        replies = {}
        for move in game.pending():
            text = reply(move, n)
            completion = (Completion(text=text, prompt_tokens=100 + n, completion_tokens=n + 1) if text is not None
                          else Completion(text=None, prompt_tokens=100 + n, error="boom"))
            replies[move.player] = completion
            spent.append((move.player, completion.prompt_tokens, completion.completion_tokens))
            n += 1
        game.resolve(replies)
    return spent


def test_each_move_entry_carries_its_own_counts_host_entries_none():
    g = SpyFall(setup("spyfall", item="BMW,BENZ", assignment={"spy": "a", "villager": "b"}), max_rounds=1)

    def reply(move, n):
        if n == 1:
            return None  # a backend error: its entry keeps the failed call's prompt tokens, 0 completion tokens
        if move.kind == "describe":
            return json.dumps({"thought": "t", "speak": "a car"})
        return json.dumps({"thought": "t", "speak": "s", "name": next(p for p in g.living if p != move.player)})

    spent = play(g, reply)
    row = g.row(run_id="r")
    transcript = row["transcript"]
    assert len(row["move_prompt_tokens"]) == len(row["move_completion_tokens"]) == len(transcript)
    moves = [(e["speaker"], p, c) for e, p, c in zip(transcript, row["move_prompt_tokens"],
                                                     row["move_completion_tokens"]) if e["model"] is not None]
    assert moves == spent  # in order, one entry per reply, each with its own counts
    failed = [e for e in transcript if e["model"] is not None][1]
    assert moves[1][1:] == (101, 0) and not failed["valid"] and failed["error"] == "backend: boom"
    hosts = [(p, c) for e, p, c in zip(transcript, row["move_prompt_tokens"], row["move_completion_tokens"])
             if e["speaker"] == "host"]
    assert hosts and set(hosts) == {(None, None)}
    assert sum(p for _, p, _ in spent) == row["prompt_tokens"] and sum(c for *_, c in spent) == row["completion_tokens"]


def test_a_move_that_ends_the_game_keeps_its_counts():
    """Ask-Guess ends on an empty reply: the last entry is that move, with its counts."""
    g = AskGuess(setup("askguess", item="apple", setting="without_description", assignment={"questioner": "a",
                                                                                           "answerer": "a"}))
    spent = play(g, lambda move, n: "Is it red?" if n == 0 else "")
    row = g.row(run_id="r")
    assert g.end_reason == "empty_reply"
    assert (row["move_prompt_tokens"][-1], row["move_completion_tokens"][-1]) == spent[-1][1:] == (101, 2)
    assert sum(p for p in row["move_prompt_tokens"] if p is not None) == row["prompt_tokens"] == 201


def test_stage_rows_add_up_and_the_data_test_catches_a_row_that_does_not(make_config, lake_dir):
    config = game_config(make_config, lake_dir)
    stage.run_game(config, "spyfall", "run-1")
    games = rows(lake_dir, "spyfall")
    assert len(games) == 2
    for g in games:
        assert len(g["move_prompt_tokens"]) == len(g["transcript"])
        assert sum(p for p in g["move_prompt_tokens"] if p is not None) == g["prompt_tokens"] > 0
        assert sum(c for c in g["move_completion_tokens"] if c is not None) == g["completion_tokens"] > 0
        players = [e["model"] is not None for e in g["transcript"]]
        assert [p is not None for p in g["move_prompt_tokens"]] == players
    assert data_tests(open_lake(lake_dir)) == {}
    broken = {**games[0], "cell_key": "broken", "move_prompt_tokens": [None] * len(games[0]["transcript"])}
    open_lake(lake_dir).write("gameeval_games", pa.Table.from_pylist([broken], schema=GAMEEVAL_GAMES),
                         partition={"game": "spyfall"})
    assert data_tests(open_lake(lake_dir)) == {"gameeval_move_tokens_add_up": 1}
