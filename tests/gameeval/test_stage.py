"""The GameEval stage with scripted models: batching, caching, failures, a killed run, the views."""

from __future__ import annotations

import json

import pytest

from tests import stage_runner as stage
from dialogbench.gameeval.cells import plan_setups
from dialogbench.run.registry import open_lake
from dialogbench.lake.catalog import connect, data_tests

MOVE = json.dumps({"thought": "t", "speak": "a thing", "name": "player1", "question": 2, "ask": "player2"})


def game_config(make_config, lake_dir, *, models=None, **gameeval):
    base = {"enabled": True, "askguess": {"limit": 2, "trials": 2, "max_rounds": 2},
            "spyfall": {"limit": 1, "max_rounds": 2}, "tofukingdom": {"trials": 1}}
    for key, value in gameeval.items():
        base[key] = {**base.get(key, {}), **value} if isinstance(value, dict) else value
    data = {"lake": str(lake_dir),
            "models": models or [{"name": "a", "backend": "scripted", "script": [MOVE]},
                                 {"name": "b", "backend": "scripted", "script": [MOVE]}],
            "botchat": {"enabled": False}, "gameeval": base}
    return make_config(data)


def rows(lake_dir, game):
    return open_lake(lake_dir).read("gameeval_games", where=f"game = '{game}'").to_pylist()


def test_every_step_is_one_batch_per_model(make_config, lake_dir, backend_calls):
    config = game_config(make_config, lake_dir)
    report = stage.run_game(config, "askguess", "run-1")
    # 2 words x 2 settings x 2 trials per model; with a description 5 steps (2 questions), without 6 (3 questions:
    # the authors' round counter counts the description, so max_rounds + 1 questions without it)
    assert (report.planned, report.cached, report.computed, report.failed) == (16, 0, 16, 0)
    assert backend_calls == {"a": [8, 8, 8, 8, 8, 4], "b": [8, 8, 8, 8, 8, 4]}
    games = rows(lake_dir, "askguess")
    assert {g["outcome"] for g in games} == {"RLE"}
    assert {(g["setting"], g["rounds"]) for g in games} == {("with_description", 2), ("without_description", 3)}
    assert len({g["seed"] for g in games}) == 8  # a seed per (word, setting, trial), shared by the models


def test_a_rerun_plays_nothing_and_a_changed_limit_plays_again(make_config, lake_dir, backend_calls):
    stage.run_game(game_config(make_config, lake_dir), "askguess", "run-1")
    backend_calls.clear()
    again = stage.run_game(game_config(make_config, lake_dir), "askguess", "run-2")
    assert (again.planned, again.cached, again.computed) == (16, 16, 0) and backend_calls == {}
    changed = stage.run_game(game_config(make_config, lake_dir, askguess={"max_rounds": 3}), "askguess", "run-3")
    assert changed.computed == 16


def test_concurrency_caps_games_in_flight_and_refills(make_config, lake_dir, backend_calls):
    config = game_config(make_config, lake_dir, concurrency=3,
                         askguess={"settings": ["without_description"], "max_rounds": 1})
    stage.run_game(config, "askguess", "run-1")
    assert len(rows(lake_dir, "askguess")) == 8
    sizes = backend_calls["a"] + backend_calls["b"]
    assert sum(sizes) == 8 * 4 and max(sizes) <= 3  # 4 moves a game (2 questions); never more than 3 in flight


def test_spyfall_and_tofukingdom_cells_and_views(make_config, lake_dir):
    config = game_config(make_config, lake_dir)
    for game in ("spyfall", "tofukingdom"):
        stage.run_game(config, game, "run-1")
    spyfall = rows(lake_dir, "spyfall")
    assert sorted((g["assignment"][0], g["assignment"][1]) for g in spyfall) == \
        [(("spy", "a"), ("villager", "b")), (("spy", "b"), ("villager", "a"))]
    tofu = rows(lake_dir, "tofukingdom")
    assert len(tofu) == 6  # two models: every camp assignment that uses both
    assert all(g["transcript"] for g in spyfall + tofu)
    with connect(open_lake(lake_dir)) as con:
        assert con.sql("select count(*) from gameeval_spyfall").fetchall()[0][0] == 2
        events = con.sql("select count(*) from gameeval_transcripts where game = 'tofukingdom'").fetchall()[0][0]
    assert events == sum(len(g["transcript"]) for g in tofu)
    assert data_tests(open_lake(lake_dir)) == {}


def test_backend_errors_end_games_unfinished_and_they_are_replayed(make_config, lake_dir):
    models = [{"name": "a", "backend": "scripted", "script": ["!error:server down"]}]
    config = game_config(make_config, lake_dir, models=models, max_retries=1,
                         askguess={"limit": 1, "trials": 1, "settings": ["without_description"]})
    first = stage.run_game(config, "askguess", "run-1")
    assert (first.computed, first.failed) == (0, 1)
    [game] = rows(lake_dir, "askguess")
    # no outcome, no chat error: a model whose backend never answered is missing, never scored
    assert (game["outcome"], game["end_reason"], game["finished"], game["chat_errors"]) == (None, "backend_error", False, 0)
    failures = open_lake(lake_dir).read("failures").to_pylist()
    assert [f["error"] for f in failures] == ["server down", "server down"]
    second = stage.run_game(config, "askguess", "run-2")
    assert (second.cached, second.failed) == (0, 1)  # replayed, not cached


def test_a_run_killed_mid_play_keeps_finished_games_and_replays_the_rest(make_config, lake_dir, monkeypatch,
                                                                        scripted_calls):
    from dialogbench.gameeval import play_stage as game_stage

    monkeypatch.setattr(game_stage, "WRITE_EVERY_GAMES", 1)
    config = game_config(make_config, lake_dir, concurrency=2,
                         askguess={"settings": ["without_description"], "max_rounds": 1})

    def dying(backend, conversations, script):
        if len(scripted_calls.calls) == 6:
            raise KeyboardInterrupt  # the process dies here
        return script(conversations)

    scripted_calls.instead = dying
    with pytest.raises(KeyboardInterrupt):
        stage.run_game(config, "askguess", "run-1")
    kept = len(rows(lake_dir, "askguess"))
    assert 0 < kept < 8
    scripted_calls.instead = None
    rerun = stage.run_game(config, "askguess", "run-2")
    assert (rerun.cached, rerun.computed) == (kept, 8 - kept)
    games = rows(lake_dir, "askguess")
    assert len(games) == len({g["cell_key"] for g in games}) == 8


def test_a_run_stopped_mid_play_writes_the_games_that_ended(make_config, lake_dir, scripted_calls):
    """Finished games wait in a buffer (64 games or 30 s); a chunk the run's stop ends (SIGTERM, SIGINT) flushes
    them, so only the games in flight are replayed."""
    from dialogbench.run import stopping

    config = game_config(make_config, lake_dir, concurrency=2,
                         askguess={"settings": ["without_description"], "max_rounds": 1})

    def abandoned(backend, conversations, script):
        if len(scripted_calls.calls) == 6:
            raise stopping.Stopped()  # what a call in flight at the stop's deadline raises
        return script(conversations)

    scripted_calls.instead = abandoned
    with pytest.raises(stopping.Stopped) as stopped:
        stage.run_game(config, "askguess", "run-1")
    kept = len(rows(lake_dir, "askguess"))
    assert 0 < kept < 8 and stopped.value.report.computed == kept
    scripted_calls.instead = None
    rerun = stage.run_game(config, "askguess", "run-2")
    assert (rerun.cached, rerun.computed) == (kept, 8 - kept)
    games = rows(lake_dir, "askguess")
    assert len(games) == len({g["cell_key"] for g in games}) == 8 and data_tests(open_lake(lake_dir)) == {}


def test_cells_cover_the_papers_design(make_config, lake_dir):
    three = [{"name": n, "backend": "scripted", "script": [MOVE]} for n in ("x", "y", "z")]
    config = game_config(make_config, lake_dir, models=three, askguess={"limit": None, "trials": 1},
                         spyfall={"limit": None})
    assert len(plan_setups(config, "askguess")) == 100 * 2 * 3
    assert len(plan_setups(config, "spyfall")) == 11 * 6   # 11 word pairs x 6 ordered model pairs
    tofu = plan_setups(config, "tofukingdom")
    assert len(tofu) == 6 and len({tuple(s.assignment.values()) for s in tofu}) == 6
    assert len({s.cell_key for s in plan_setups(config, "askguess")}) == 600


def test_spyfall_cell_keys_change_with_the_rules_version_and_the_mask(make_config, lake_dir, monkeypatch):
    """Games played under the earlier rules (spyfall-v3: a blank speak heard as the raw reply, thought included;
    spyfall-v2: an own word masked; spyfall-v1) are other cells, and so are games with the other mask_own_word: a
    rerun replays them, never mixes them."""
    from dialogbench.gameeval.spyfall import SpyFall

    config = game_config(make_config, lake_dir)
    now = [s.cell_key for s in plan_setups(config, "spyfall")]
    assert SpyFall.VERSION == "spyfall-v4" and config.gameeval.spyfall.mask_own_word is False
    masked = game_config(make_config, lake_dir, spyfall={"mask_own_word": True})
    assert set(now).isdisjoint(s.cell_key for s in plan_setups(masked, "spyfall"))
    for version in ("spyfall-v3", "spyfall-v2", "spyfall-v1"):
        monkeypatch.setattr(SpyFall, "VERSION", version)
        assert set(now).isdisjoint(s.cell_key for s in plan_setups(config, "spyfall"))


def test_tofukingdom_cell_keys_change_with_the_rules_version(make_config, lake_dir, monkeypatch):
    """Games played under the earlier rules (tofukingdom-v2: a blank answer heard as the raw reply, thought included,
    numbered question 3 read as question 2; tofukingdom-v1) are other cells: a rerun replays them."""
    from dialogbench.gameeval.tofukingdom import TofuKingdom

    config = game_config(make_config, lake_dir)
    now = [s.cell_key for s in plan_setups(config, "tofukingdom")]
    assert TofuKingdom.VERSION == "tofukingdom-v3" and now
    for version in ("tofukingdom-v2", "tofukingdom-v1"):
        monkeypatch.setattr(TofuKingdom, "VERSION", version)
        assert set(now).isdisjoint(s.cell_key for s in plan_setups(config, "tofukingdom"))


def test_askguess_cell_keys_change_with_the_rules_version_and_the_matcher(make_config, lake_dir, monkeypatch):
    """Games played under the earlier rules (askguess-v2: the hard-mode answerer also offered hints, the questioner
    not told answers are yes or no; askguess-v1: whole-word matching, 30 questions without the description) are other
    cells, and so are games of the other matcher: a rerun replays them, never mixes them."""
    from dialogbench.gameeval.askguess import AskGuess

    config = game_config(make_config, lake_dir)
    now = [s.cell_key for s in plan_setups(config, "askguess")]
    assert AskGuess.VERSION == "askguess-v3"
    whole = game_config(make_config, lake_dir, askguess={"matcher": "whole_word"})
    assert set(now).isdisjoint(s.cell_key for s in plan_setups(whole, "askguess"))
    for version in ("askguess-v2", "askguess-v1"):
        monkeypatch.setattr(AskGuess, "VERSION", version)
        assert set(now).isdisjoint(s.cell_key for s in plan_setups(config, "askguess"))
