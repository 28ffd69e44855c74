"""GameEval's SQL: latest row per cell, the latest plan per game, missing cells, the paper's metrics (Table 2's
per-word averaging, Table 3's spy win rate and living rounds over finished games, Table 4's points over camp
permutations), the transcript view and the data tests, on synthetic games whose values are computed by hand.
``gameeval_lake`` is also what the report tests use."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest

from dialogbench.run.registry import open_lake
from dialogbench.lake import Lake
from dialogbench.lake.catalog import connect, data_tests
from dialogbench.gameeval.tables import GAMEEVAL_GAMES
from dialogbench.lake.schemas import PLANS

T0 = dt.datetime(2026, 5, 1, 3, 0, tzinfo=dt.timezone.utc)
OLD, NEW = "run-1", "run-2"  # every game has a plan in both runs; the metrics read run-2's


def at(hours: float) -> dt.datetime:
    return T0 + dt.timedelta(hours=hours)


def event(step: int, rnd: int, speaker: str, role: str, model: str | None, kind: str, text: str | None,
          thought: str | None = None, target: str | None = None, valid: bool = True) -> dict:
    return {"step": step, "round": rnd, "speaker": speaker, "role": role, "model": model, "kind": kind,
            "text": text, "thought": thought, "target": target, "raw": text if model else None, "valid": valid,
            "error": None if valid else "unparseable"}


def summary(game: str, assignment: dict) -> str:
    """A readable assignment summary, part of the synthetic cell keys."""
    return f"{game}: " + ", ".join(f"{k}={v}" for k, v in sorted(assignment.items()))


def cell_key(game: str, assignment: dict, item_id: str, run: str = NEW) -> str:
    return f"{run}|{summary(game, assignment)}|{item_id}"


def row(game: str, item_id: str, assignment: dict, outcome: str | None, *, finished: bool = True, item: str = "",
        setting: str = "default", rounds: int = 1, living: int | None = None, chat_errors: int = 0,
        end_reason: str = "rules", run: str = NEW, hours: float = 2, transcript: list[dict] | None = None,
        key: str | None = None) -> dict:
    return {
        "cell_key": key or cell_key(game, assignment, item_id), "game": game, "game_version": "1", "item_id": item_id,
        "item": item, "setting": setting, "trial": int(item_id.rsplit("/", 1)[-1]), "seed": 7,
        "assignment": list(assignment.items()), "outcome": outcome, "end_reason": end_reason, "finished": finished,
        "rounds": rounds, "spy_living_rounds": living, "chat_errors": chat_errors, "steps": 2 * rounds,
        "prompt_tokens": 100, "completion_tokens": 20,
        "transcript": transcript if transcript is not None else [
            event(0, 0, "host", "host", None, "announce", f"{game} starts"),
            event(1, 1, "player1", "player", assignment[next(iter(assignment))], "describe", f"about {item_id}",
                  thought="I must not say it")],
        "run_id": run, "created_at": at(hours)}


def askguess(model: str, word: str, setting: str, trial: int, outcome: str, rounds: int = 1, **kw) -> dict:
    return row("askguess", f"{word}/{setting}/{trial}", {"questioner": model, "answerer": model}, outcome,
               finished=outcome != "CE", item=word, setting=setting, rounds=rounds, **kw)


def spyfall(spy: str, villager: str, pair: str, trial: int, outcome: str | None, living: int | None = None,
            **kw) -> dict:
    return row("spyfall", f"{pair}/{trial}", {"spy": spy, "villager": villager}, outcome,
               finished=outcome is not None, item=pair, living=living, **kw)


def tofu(prince: str, spy: str, queen: str, trial: int, outcome: str | None, **kw) -> dict:
    return row("tofukingdom", f"{prince}-{spy}-{queen}/{trial}", {"prince": prince, "queen": queen, "spy": spy},
               outcome, finished=outcome is not None, **kw)


ASKGUESS_TRANSCRIPT = [
    event(0, 0, "host", "host", None, "announce", "The game starts. Answerer, describe the word."),
    event(1, 0, "answerer", "answerer", "alpha", "describe", "A round fruit that grows on trees."),
    event(2, 1, "questioner", "questioner", "alpha", "ask", "Is it an apple?", thought="Round fruit on a tree."),
    event(3, 1, "answerer", "answerer", "alpha", "answer", "Gameover"),
]

GAMES = [
    # --- Ask-Guess, with description: alpha has 4 trials of apple and 2 of bus, so the per-word average (ST 62.5)
    # differs from the pooled share (4/6 = 66.7); beta one trial.
    askguess("alpha", "apple", "with_description", 1, "ST", 2, transcript=ASKGUESS_TRANSCRIPT),
    askguess("alpha", "apple", "with_description", 2, "ST", 3),
    askguess("alpha", "apple", "with_description", 3, "ST", 4),
    askguess("alpha", "apple", "with_description", 4, "EE", 6),
    askguess("alpha", "bus", "with_description", 1, "ST", 5),
    # replayed: its first row was a backend error, the newer one counts
    askguess("alpha", "bus", "with_description", 2, "CE", 0, end_reason="backend_error", hours=2),
    askguess("alpha", "bus", "with_description", 2, "AME", 2, hours=30),
    askguess("beta", "apple", "with_description", 1, "ST", 1),
    # --- without description: the latest row of trial 3 failed on backend errors (written before such games lost their
    # outcome, so it still says CE: the view goes by end_reason, it is not played but missing); trial 4 is missing
    askguess("alpha", "cloud", "without_description", 1, "ST", 7),
    askguess("alpha", "cloud", "without_description", 2, "RLE", 30),
    askguess("alpha", "cloud", "without_description", 3, "ST", 9, hours=2),
    askguess("alpha", "cloud", "without_description", 3, "CE", 0, end_reason="backend_error", hours=30),
    # --- an older plan's games (another config): never in the metrics
    askguess("alpha", "apple", "with_description", 9, "RLE", 30, run=OLD, hours=0,
             key="old|askguess|apple/with_description/9"),
    askguess("gamma", "apple", "with_description", 1, "ST", 1, run=OLD, hours=0, key="old|askguess|gamma"),

    # --- SpyFall: (alpha spy, beta villagers) 4 finished + 1 unfinished + 1 discarded; (beta spy, alpha villagers)
    # 2 finished
    spyfall("alpha", "beta", "lion,tiger", 1, "spy", 4),
    spyfall("alpha", "beta", "lion,tiger", 2, "villagers", 2),
    spyfall("alpha", "beta", "lion,tiger", 3, "spy", 4, chat_errors=1),
    spyfall("alpha", "beta", "iphone,ipad", 1, "villagers", 1),
    spyfall("alpha", "beta", "iphone,ipad", 2, None, 3, chat_errors=2, end_reason="round_limit"),
    # discarded by the authors' rules (the most votes went to no living player): in no rate, counted apart
    {**spyfall("alpha", "beta", "iphone,ipad", 3, "discarded", None, end_reason="voted_no_player"), "finished": False},
    spyfall("beta", "alpha", "lion,tiger", 1, "villagers", 2),
    spyfall("beta", "alpha", "lion,tiger", 2, "villagers", 3),
    spyfall("alpha", "alpha", "lion,tiger", 1, "spy", 5, run=OLD, hours=0, key="old|spyfall|alpha-alpha"),

    # --- TofuKingdom: three camp permutations of alpha, beta, gamma
    tofu("alpha", "beta", "gamma", 1, "prince"),
    tofu("alpha", "beta", "gamma", 2, "prince"),
    tofu("alpha", "beta", "gamma", 3, "queen"),
    tofu("alpha", "beta", "gamma", 4, None, end_reason="backend_error"),
    tofu("beta", "gamma", "alpha", 1, "spy"),
    tofu("beta", "gamma", "alpha", 2, "queen"),
    tofu("beta", "gamma", "alpha", 3, "prince"),
    tofu("gamma", "alpha", "beta", 1, "prince"),
    tofu("gamma", "alpha", "beta", 2, "spy"),
    tofu("alpha", "beta", "gamma", 9, "prince", run=OLD, hours=0, key="old|tofu|9"),
]

# planned by run-2 but never played (their assignment is the plan's roles): one Ask-Guess trial of alpha, one of a
# model with no game at all, one SpyFall and one TofuKingdom game
MISSING = [
    ("askguess", "cloud/without_description/4", {"questioner": "alpha", "answerer": "alpha"}),
    ("askguess", "dog/with_description/1", {"questioner": "delta", "answerer": "delta"}),
    ("spyfall", "lion,tiger/4", {"spy": "alpha", "villager": "beta"}),
    ("tofukingdom", "gamma-alpha-beta/3", {"prince": "gamma", "queen": "beta", "spy": "alpha"}),
]


def plan_row(run: str, game: str, key: str, item_id: str, roles: dict, created_at: dt.datetime) -> dict:
    """A GameEval plan row as the stage records it: the roles, ``model`` only when one model plays every role, and
    the empty scope (a game's latest plan replaces all its cells)."""
    models = sorted(set(roles.values()))
    return {"run_id": run, "stage": f"gameeval_{game}", "cell_key": key, "item_id": item_id,
            "model": models[0] if len(models) == 1 else None, "judge": None, "created_at": created_at, "task": None,
            "roles": list(roles.items()), "scope": []}


def plan_rows() -> list[dict]:
    rows = []
    for g in GAMES:  # run-1 planned every game (and its own), run-2 every game but run-1's own
        assignment = dict(g["assignment"])
        for run, hours in ((OLD, 0), (NEW, 1)):
            if run == NEW and g["run_id"] == OLD:
                continue
            rows.append(plan_row(run, g["game"], g["cell_key"], g["item_id"], assignment, at(hours)))
    for game, item_id, assignment in MISSING:
        rows.append(plan_row(NEW, game, cell_key(game, assignment, item_id), item_id, assignment, at(1)))
    return list({(r["run_id"], r["cell_key"]): r for r in rows}.values())  # replayed cells are planned once a run


def gameeval_lake(root: Path, games: list[dict] | None = None, plans: list[dict] | None = None) -> Lake:
    lake = open_lake(root)
    games = GAMES if games is None else games
    for game in sorted({g["game"] for g in games}):
        lake.write("gameeval_games", pa.Table.from_pylist([g for g in games if g["game"] == game],
                                                          schema=GAMEEVAL_GAMES), partition={"game": game})
    lake.write("plans", pa.Table.from_pylist(plan_rows() if plans is None else plans, schema=PLANS),
               partition={"stage": "gameeval"})
    return lake


def query(lake: Lake, sql: str) -> list[dict]:
    with connect(lake) as con:
        rel = con.execute(sql)
        cols = [d[0] for d in rel.description]
        return [dict(zip(cols, r)) for r in rel.fetchall()]


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> Lake:
    return gameeval_lake(tmp_path_factory.mktemp("gameeval") / "lake")


def test_gameeval_games_keeps_the_latest_row_of_each_cell(lake):
    rows = query(lake, "select cell_key, item_id, outcome, end_reason from gameeval_games")
    assert len(rows) == len({g["cell_key"] for g in GAMES}) == len(GAMES) - 2
    by = {r["item_id"]: r for r in rows if r["cell_key"].startswith(NEW)}
    assert by["bus/with_description/2"]["outcome"] == "AME"  # replayed after a backend error
    assert by["cloud/without_description/3"]["end_reason"] == "backend_error"  # the newer row is the error
    old = {r["cell_key"] for r in rows} - {r["cell_key"] for r in rows if r["cell_key"].startswith(NEW)}
    assert old == {"old|askguess|apple/with_description/9", "old|askguess|gamma", "old|spyfall|alpha-alpha",
                   "old|tofu|9"}  # every game ever played is there


def test_current_is_the_latest_plan_with_missing_cells(lake):
    rows = query(lake, "select * from gameeval_current")
    assert not any(r["cell_key"].startswith("old|") for r in rows)
    assert {r["plan_run_id"] for r in rows} == {NEW}
    played = [r for r in rows if r["played"]]
    # minus the replaced rows, run-1's own games and the two whose latest game failed on backend errors
    assert len(played) == len(GAMES) - 2 - 4 - 2
    missing = {r["item_id"]: r for r in rows if not r["played"]}
    failed = {"cloud/without_description/3", "alpha-beta-gamma/4"}
    assert set(missing) == {item_id for _, item_id, _ in MISSING} | failed
    assert {missing[i]["end_reason"] for i in failed} == {"backend_error"}  # the failed game's row is kept, unscored
    alpha = missing["cloud/without_description/4"]
    assert alpha["game"] == "askguess" and alpha["setting"] == "without_description"
    assert alpha["assignment"] == {"questioner": "alpha", "answerer": "alpha"} and alpha["outcome"] is None
    assert missing["dog/with_description/1"]["assignment"] == {"questioner": "delta", "answerer": "delta"}
    assert missing["dog/with_description/1"]["setting"] == "with_description"
    assert missing["lion,tiger/4"]["assignment"] == {"spy": "alpha", "villager": "beta"}
    assert missing["lion,tiger/4"]["setting"] == "default"


def test_a_newer_plan_replaces_the_games_of_an_older_one(tmp_path):
    """A later plan with fewer cells (a changed config): the metrics read only its cells."""
    keep = [g for g in GAMES if g["game"] == "spyfall" and g["item"] == "lion,tiger" and g["run_id"] == NEW]
    plans = plan_rows() + [plan_row("run-3", "spyfall", g["cell_key"], g["item_id"], dict(g["assignment"]), at(50))
                           for g in keep]
    lake = gameeval_lake(tmp_path / "lake", plans=plans)
    rows = {(r["spy_model"], r["villager_model"]): r for r in query(lake, "select * from gameeval_spyfall")}
    assert rows[("alpha", "beta")]["games"] == 3 and rows[("alpha", "beta")]["unfinished"] == 0
    assert rows[("alpha", "beta")]["missing"] == 0 and rows[("beta", "alpha")]["games"] == 2
    # the other games keep their own latest plan (per stage)
    assert len(query(lake, "select * from gameeval_askguess where model = 'alpha'")) == 2


def test_askguess_table2_averages_each_outcome_over_words(lake):
    rows = {(r["model"], r["setting"]): r for r in query(lake, "select * from gameeval_askguess")}
    a = rows[("alpha", "with_description")]
    # apple: ST 3/4, EE 1/4; bus: ST 1/2, AME 1/2  ->  ST (75 + 50) / 2, EE 25 / 2, AME 50 / 2
    assert (a["words"], a["trials"], a["missing"]) == (2, 6, 0)
    assert a["st"] == pytest.approx(62.5) and a["ee"] == pytest.approx(12.5) and a["ame"] == pytest.approx(25)
    assert a["rle"] == 0 and a["ce"] == 0
    # the authors' Round (compute.py L45-72): per word over its ST games, then over words: apple (2+3+4)/3 = 3,
    # bus 5 -> 4 (pooled over the ST games it would be 3.5)
    assert a["mean_rounds"] == pytest.approx((3 + 5) / 2)
    w = rows[("alpha", "without_description")]
    # trial 3's ST row was replaced by a game that failed on backend errors: not played, missing, never a CE
    assert (w["words"], w["trials"], w["missing"]) == (1, 2, 2)
    for col in ("st", "rle"):
        assert w[col] == pytest.approx(50)
    # without the description a round is questions - 1: 7 - 1
    assert w["ce"] == 0 and w["ee"] == 0 and w["ame"] == 0 and w["mean_rounds"] == 6
    b = rows[("beta", "with_description")]
    assert (b["trials"], b["st"], b["mean_rounds"], b["missing"]) == (1, 100, 1, 0)
    planned_only = rows[("delta", "with_description")]  # no game yet: its plan's roles name the model
    assert (planned_only["trials"], planned_only["missing"], planned_only["st"]) == (0, 1, None)
    assert set(rows) == {("alpha", "with_description"), ("alpha", "without_description"),
                         ("beta", "with_description"), ("delta", "with_description")}  # gamma: old plan only


def askguess_lake(root: Path, games: list[dict]) -> Lake:
    """A lake of the given Ask-Guess games, each planned by run-2."""
    plans = [plan_row(NEW, "askguess", g["cell_key"], g["item_id"], dict(g["assignment"]), at(1)) for g in games]
    return gameeval_lake(root, games, plans)


def test_askguess_shares_are_per_word_then_averaged_not_pooled(tmp_path):
    # unbalanced: apple ST 3 of 3, bus ST 0 of 1 -> per word (100 + 0) / 2 = 50; pooled it would be 3 / 4 = 75
    # (compute.py L33-43 and L70-74, with n trials of every word, is the per-word mean)
    games = [askguess("m", "apple", "with_description", t, "ST", 2) for t in (1, 2, 3)]
    games.append(askguess("m", "bus", "with_description", 1, "EE", 2))
    (r,) = query(askguess_lake(tmp_path / "lake", games), "select * from gameeval_askguess")
    assert r["st"] == pytest.approx(50) and r["ee"] == pytest.approx(50)


def test_askguess_rounds_as_the_authors_compute_them(tmp_path):
    games = [  # with the description: apple ST in 4 and 2 questions (3); bus never guessed (30)
        askguess("m", "apple", "with_description", 1, "ST", 4),
        askguess("m", "apple", "with_description", 2, "ST", 2),
        askguess("m", "bus", "with_description", 1, "EE", 3),
        askguess("m", "bus", "with_description", 2, "RLE", 30),
        # without it: a round is questions - 1; apple only ever guessed at the first question (round 0: left out
        # of the mean, compute.py L65), bus in 5 and 7 questions (4, 6 -> 5), cloud never (30)
        askguess("m", "apple", "without_description", 1, "ST", 1),
        askguess("m", "bus", "without_description", 1, "ST", 5),
        askguess("m", "bus", "without_description", 2, "ST", 7),
        askguess("m", "cloud", "without_description", 1, "CE", 0, end_reason="empty_reply"),
    ]
    rows = {r["setting"]: r for r in query(askguess_lake(tmp_path / "lake", games), "select * from gameeval_askguess")}
    assert rows["with_description"]["mean_rounds"] == pytest.approx((3 + 30) / 2)
    assert rows["without_description"]["mean_rounds"] == pytest.approx((5 + 30) / 2)


def qa(*pairs: tuple[str, str], description: str | None = None) -> list[dict]:
    """An Ask-Guess transcript: the host's announcement, the description if any, then (question, answer) rounds."""
    events = [event(0, 0, "host", "host", None, "announce", "the game starts now.")]
    if description is not None:
        events.append(event(1, 0, "answerer", "answerer", "m", "describe", description))
    for i, (question, answer) in enumerate(pairs, 1):
        events += [event(2 * i, i, "questioner", "questioner", "m", "ask", question),
                   event(2 * i + 1, i, "answerer", "answerer", "m", "answer", answer)]
    return events


def test_askguess_matchers_count_the_games_they_would_score_differently(tmp_path):
    games = [
        # a guess containing the word as a substring: ST for the authors, EE for whole words
        askguess("m", "apple", "without_description", 1, "ST", 1, transcript=qa(("Is it a pineapple?", "gameover"))),
        # "apples" is no mention for the authors (their " word "), it is for whole words: AME at the first answer
        askguess("m", "apple", "without_description", 2, "ST", 2,
                 transcript=qa(("Is it a fruit?", "Yes, like apples."), ("Is it an apple?", "Gameover!"))),
        # the same for both
        askguess("m", "apple", "without_description", 3, "ST", 1, transcript=qa(("Is it an apple?", "Game over."))),
        askguess("m", "apple", "with_description", 1, "AME", 0, transcript=qa(description="An apple a day.")),
        askguess("m", "lawn_mower", "with_description", 1, "RLE", 2,
                 transcript=qa(("Is it big?", "No."), ("Is it red?", "No."), description="A garden machine.")),
        # " lawn mower " between spaces: a mention for both
        askguess("m", "lawn_mower", "with_description", 2, "AME", 1,
                 transcript=qa(("What is it?", "A lawn mower, for grass."), description="A garden machine.")),
    ]
    lake = askguess_lake(tmp_path / "lake", games)
    per_game = {r["item_id"]: r for r in query(lake, "select g.item_id, m.* from gameeval_askguess_matchers m "
                                                     "join gameeval_current g using (cell_key)")}
    assert {k: (r["authors_outcome"], r["authors_event"], r["whole_word_outcome"], r["whole_word_event"], r["differ"])
            for k, r in per_game.items()} == {
        "apple/without_description/1": ("ST", 3, "EE", 3, True),
        "apple/without_description/2": ("ST", 5, "AME", 3, True),
        "apple/without_description/3": ("ST", 3, "ST", 3, False),
        "apple/with_description/1": ("AME", 2, "AME", 2, False),
        "lawn_mower/with_description/1": ("RLE", None, "RLE", None, False),
        "lawn_mower/with_description/2": ("AME", 4, "AME", 4, False),
    }
    rows = {r["setting"]: r["matchers_differ"] for r in query(lake, "select * from gameeval_askguess")}
    assert rows == {"without_description": 2, "with_description": 0}


@pytest.mark.parametrize("matcher", ["authors", "whole_word"])
def test_askguess_matchers_in_sql_agree_with_the_host(tmp_path, matcher):
    """Games played by the host under each matcher: the view's outcome for that matcher is the host's."""
    from dialogbench.gameeval.askguess import AskGuess
    from tests.gameeval.helpers import drive, setup

    scripts = [("apple", [("Is it a pineapple?", "gameover")]),
               ("apple", [("Is it red?", "Yes, as apples are."), ("An apple?", "GAME OVER")]),
               ("apple", [("Is it red?", "Yes: (apple) is red."), ("An apple?", "gameover")]),
               ("apple", [("Is it red?", "game-over"), ("An apple?", "gameover")]),
               ("aquarium_fish", [("Is it a fish?", "Aquarium-fish are."), ("Aquarium fish?", "Gameover")]),
               ("sweet_pepper", [("A pepper?", "It is a sweet pepper!"), ("Sweet pepper?", "gameover")])]
    games = []
    for trial, (word, pairs) in enumerate(scripts):
        questions, answers = iter([q for q, _ in pairs]), iter([a for _, a in pairs])
        g = AskGuess(setup("askguess", item=word, setting="without_description", trial=trial,
                           assignment={"questioner": "m", "answerer": "m"}), matcher=matcher)
        drive(g, lambda move: next(questions) if move.player == "questioner" else next(answers))
        games.append({**g.row(run_id=NEW), "item_id": f"{word}/without_description/{trial}"})
    rows = query(askguess_lake(tmp_path / "lake", games), "select * from gameeval_askguess_matchers")
    assert len(rows) == len(scripts)
    assert all(r[f"{matcher}_outcome"] == r["outcome"] for r in rows), rows


def test_spyfall_table3_counts_finished_games_only(lake):
    rows = {(r["spy_model"], r["villager_model"]): r for r in query(lake, "select * from gameeval_spyfall")}
    assert set(rows) == {("alpha", "beta"), ("beta", "alpha")}  # alpha vs alpha: old plan only
    ab = rows[("alpha", "beta")]
    assert (ab["games"], ab["spy_wins"], ab["unfinished"], ab["discarded"], ab["chat_errors"], ab["missing"]) == \
        (4, 2, 1, 1, 3, 1)
    # per word pair, then averaged (lion,tiger: 2/3 and 10/3; iphone,ipad: 0 and 1), not pooled (2/4 and 11/4);
    # the discarded game is neither a win nor a loss, the unfinished game's 3 rounds are left out
    assert ab["word_pairs"] == 2
    assert ab["spy_win_rate"] == pytest.approx((2 / 3 + 0) / 2)
    assert ab["spy_living_rounds"] == pytest.approx((10 / 3 + 1) / 2)
    # the paper's Table 3 formula (compute_adversarial.py): sum over the word pairs / (word pairs - 1)
    assert ab["spy_win_rate_published"] == pytest.approx((2 / 3 + 0) / 1)
    assert ab["spy_living_rounds_published"] == pytest.approx((10 / 3 + 1) / 1)
    ba = rows[("beta", "alpha")]
    assert (ba["games"], ba["spy_wins"], ba["spy_win_rate"], ba["unfinished"], ba["discarded"], ba["missing"]) == \
        (2, 0, 0, 0, 0, 0)
    assert ba["spy_living_rounds"] == pytest.approx(2.5)
    assert (ba["word_pairs"], ba["spy_win_rate_published"], ba["spy_living_rounds_published"]) == (1, None, None)


def spyfall_scoring_lake(root: Path, drop: str | None = None) -> Lake:
    """Hand-made SpyFall games of one model pair (x spy, y villagers) over four word pairs, unbalanced: a,b has three
    finished games and a discarded one, c,d and e,f one finished game each, g,h only discarded and unfinished ones.
    ``drop``: an outcome whose games are left out of the lake."""
    games = [
        spyfall("x", "y", "a,b", 1, "spy", 3), spyfall("x", "y", "a,b", 2, "spy", 3),
        spyfall("x", "y", "a,b", 3, "villagers", 1),
        {**spyfall("x", "y", "a,b", 4, "discarded", None, end_reason="voted_no_player"), "finished": False},
        spyfall("x", "y", "c,d", 1, "villagers", 2),
        spyfall("x", "y", "e,f", 1, "spy", 3),
        {**spyfall("x", "y", "g,h", 1, "discarded", None, end_reason="voted_no_player"), "finished": False},
        {**spyfall("x", "y", "g,h", 2, "discarded", None, end_reason="voted_no_player"), "finished": False},
        spyfall("x", "y", "g,h", 3, None, 3, end_reason="round_limit"),
    ]
    games = [g for g in games if drop is None or g["outcome"] != drop]
    plans = [plan_row(NEW, "spyfall", g["cell_key"], g["item_id"], dict(g["assignment"]), at(1)) for g in games]
    return gameeval_lake(root, games=games, plans=plans)


def test_spyfall_table3_averages_word_pairs_as_the_authors(tmp_path):
    """compute_adversarial.py: each word pair's rate and mean living rounds over its kept games (L14-31), then the
    mean over word pairs; the published value divides their sum by (pairs - 1) (L41-48). Discarded games ('exit',
    L21-22) are in neither; a word pair with no finished game is no pair."""
    (r,) = query(spyfall_scoring_lake(tmp_path / "lake"), "select * from gameeval_spyfall")
    assert (r["games"], r["spy_wins"], r["word_pairs"], r["discarded"], r["unfinished"]) == (5, 3, 3, 3, 1)
    per_pair_rate, per_pair_rounds = (2 / 3, 0, 1), (7 / 3, 2, 3)  # a,b; c,d; e,f (g,h has no finished game)
    assert r["spy_win_rate"] == pytest.approx(sum(per_pair_rate) / 3)  # 0.556, pooled would be 3/5
    assert r["spy_living_rounds"] == pytest.approx(sum(per_pair_rounds) / 3)  # 2.444, pooled would be 12/5
    assert r["spy_win_rate"] != pytest.approx(3 / 5) and r["spy_living_rounds"] != pytest.approx(12 / 5)
    assert r["spy_win_rate_published"] == pytest.approx(sum(per_pair_rate) / 2)
    assert r["spy_living_rounds_published"] == pytest.approx(sum(per_pair_rounds) / 2)
    # the discarded games change nothing: the same lake without them scores the same
    (kept,) = query(spyfall_scoring_lake(tmp_path / "no-discarded", drop="discarded"), "select * from gameeval_spyfall")
    assert {k: kept[k] for k in kept if k != "discarded"} == {k: r[k] for k in r if k != "discarded"}


def test_spyfall_pairs_figure6_per_word_pair(lake):
    rows = {(r["spy_model"], r["villager_model"], r["item"]): r
            for r in query(lake, "select * from gameeval_spyfall_pairs")}
    assert set(rows) == {("alpha", "beta", "lion,tiger"), ("alpha", "beta", "iphone,ipad"),
                         ("beta", "alpha", "lion,tiger")}
    lion = rows[("alpha", "beta", "lion,tiger")]
    assert (lion["spy_word"], lion["common_word"], lion["games"], lion["spy_wins"]) == ("lion", "tiger", 3, 2)
    assert lion["spy_win_rate"] == pytest.approx(2 / 3) and lion["spy_living_rounds"] == pytest.approx(10 / 3)
    iphone = rows[("alpha", "beta", "iphone,ipad")]
    assert (iphone["games"], iphone["spy_win_rate"], iphone["unfinished"], iphone["discarded"],
            iphone["chat_errors"]) == (1, 0, 1, 1, 2)
    assert rows[("alpha", "beta", "lion,tiger")]["discarded"] == 0


def test_tofukingdom_points_over_camp_permutations(lake):
    perms = {(r["prince_model"], r["spy_model"], r["queen_model"]): r
             for r in query(lake, "select * from gameeval_tofukingdom_permutations")}
    assert {k: (r["games"], r["prince_wins"], r["queen_wins"], r["spy_wins"], r["unfinished"], r["missing"])
            for k, r in perms.items()} == {
        ("alpha", "beta", "gamma"): (3, 2, 1, 0, 0, 1),  # trial 4 failed on backend errors: missing
        ("beta", "gamma", "alpha"): (3, 1, 1, 1, 0, 0),
        ("gamma", "alpha", "beta"): (2, 1, 0, 1, 0, 1)}
    camps = {(r["model"], r["camp"]): (r["games"], r["points"], r["unfinished"], r["missing"])
             for r in query(lake, "select * from gameeval_tofukingdom")}
    assert camps == {
        ("alpha", "prince"): (3, 2, 0, 1), ("alpha", "queen"): (3, 1, 0, 0), ("alpha", "spy"): (2, 1, 0, 1),
        ("beta", "spy"): (3, 0, 0, 1), ("beta", "prince"): (3, 1, 0, 0), ("beta", "queen"): (2, 0, 0, 1),
        ("gamma", "queen"): (3, 1, 0, 1), ("gamma", "spy"): (3, 1, 0, 0), ("gamma", "prince"): (2, 1, 0, 1)}
    totals = query(lake, "select model, sum(points) as points, sum(games) as games from gameeval_tofukingdom "
                         "group by model order by model")
    assert [(r["model"], r["points"], r["games"]) for r in totals] == [("alpha", 4, 8), ("beta", 1, 8),
                                                                        ("gamma", 3, 8)]


def test_transcripts_one_row_per_event_in_order(lake):
    rows = query(lake, "select * from gameeval_transcripts where item_id = 'apple/with_description/1' "
                       "and assignment['questioner'] = 'alpha'")
    assert [r["event"] for r in rows] == [1, 2, 3, 4]
    assert [(r["speaker"], r["kind"], r["text"]) for r in rows] == [
        (e["speaker"], e["kind"], e["text"]) for e in ASKGUESS_TRANSCRIPT]
    assert rows[2]["thought"] == "Round fruit on a tree." and rows[2]["model"] == "alpha"
    assert rows[0]["model"] is None and rows[0]["item"] == "apple" and rows[0]["outcome"] == "ST"
    assert {"step", "round", "role", "target", "raw", "valid", "error", "setting", "trial"} <= set(rows[0])
    counts = query(lake, "select count(distinct cell_key) as games, count(*) as events from gameeval_transcripts")[0]
    current = len(GAMES) - 2 - 4 - 2  # the played games (two failed on backend errors)
    assert counts == {"games": current, "events": 2 * (current - 1) + len(ASKGUESS_TRANSCRIPT)}


def test_data_tests_pass_on_valid_games(lake):
    assert data_tests(lake) == {}


def test_data_tests_catch_broken_games(tmp_path):
    bad = [
        askguess("alpha", "apple", "with_description", 1, "WIN", 2),                 # not one of the five codes
        spyfall("alpha", "beta", "lion,tiger", 1, "spy", 0),                          # spy never lived a round
        {**spyfall("alpha", "beta", "lion,tiger", 2, None, 2), "finished": True},     # finished without a winner
        {**spyfall("alpha", "beta", "lion,tiger", 3, "discarded", 1), "finished": True},  # discarded yet finished
        {**spyfall("alpha", "beta", "lion,tiger", 4, "spy", 3), "finished": False},   # winner of an unfinished game
        {**tofu("alpha", "beta", "gamma", 1, "queen"), "finished": False},            # winner of an unfinished game
        tofu("alpha", "beta", "gamma", 2, "villagers"),                               # not a TofuKingdom camp
    ]
    plans = [plan_row(NEW, g["game"], g["cell_key"], g["item_id"], {"player": label}, at(1))
             for g in bad for label in ("a", "b")]  # planned twice with two role maps: a duplicate current cell
    failing = data_tests(gameeval_lake(tmp_path / "lake", games=bad, plans=plans))
    assert failing == {"gameeval_askguess_outcomes": 1, "gameeval_outcome_iff_finished": 5,
                       "gameeval_spy_living_rounds": 1, "gameeval_askguess_percentages": 1, "gameeval_rates_bounds": 1,
                       "gameeval_unique_current_cells": len(bad)}


def test_views_exist_and_are_empty_on_an_empty_lake(tmp_path):
    lake = open_lake(tmp_path / "nothing")
    for name in ("gameeval_games", "gameeval_current", "gameeval_transcripts", "gameeval_askguess",
                 "gameeval_spyfall", "gameeval_spyfall_pairs", "gameeval_tofukingdom",
                 "gameeval_tofukingdom_permutations", "gameeval_moves"):
        assert query(lake, f"select * from {name}") == [], name
    assert data_tests(lake) == {}


def test_cli_leaderboard_reads_the_three_views(lake):
    from types import SimpleNamespace

    from dialogbench.gameeval.leaderboard import format_gameeval, gameeval_leaderboard
    from dialogbench.lake.catalog import connect

    def config(enabled):  # a config with GameEval on, off, or without its section (None)
        return SimpleNamespace(enabled=lambda name: bool(enabled) and name == "gameeval")

    with connect(lake) as con:
        assert gameeval_leaderboard(config(None), con) == {}
        assert gameeval_leaderboard(config(False), con) == {}
        rows = gameeval_leaderboard(config(True), con)
    assert set(rows) == {"askguess", "spyfall", "tofukingdom"} and len(rows["spyfall"]) == 2
    text = format_gameeval(rows)
    lines = text.splitlines()
    ask = next(line.split() for line in lines if line.startswith("alpha") and "w/o" in line)
    # ... CE, then its placeholder moves (none in these games), rounds, missing, matchers differ
    assert ask == ["alpha", "w/o", "description", "-", "1", "2", "50.00", "0.00", "50.00", "0.00", "0.00", "0", "6.00",
                   "2", "0"]
    spy = next(line.split() for line in lines if line.startswith("alpha") and "beta" in line)
    # 2 word pairs; the true means over them (2/3 and 0; 10/3 and 1), then the published sum / (pairs - 1)
    # ... unfinished, discarded, chat errors, placeholder moves (none kept in these rows: 0), missing
    assert spy == ["alpha", "beta", "4", "2", "2", "0.33", "2.17", "0.67", "4.33", "1", "1", "3", "0", "1"]
    assert next(line.split() for line in lines if line.startswith("beta") and "alpha" in line)[4:9] == \
        ["1", "0.00", "2.50", "-", "-"]  # one word pair: no published value
    tofu = text.split("TofuKingdom")[1].splitlines()
    assert [line.split()[:3] for line in tofu[3:]] == [["alpha", "4", "8"], ["gamma", "3", "8"], ["beta", "1", "8"]]
    assert tofu[3].split()[3:6] == ["2/3", "1/2", "1/3"]  # alpha as prince, spy, queen
    assert format_gameeval({}) == format_gameeval({"askguess": []}) == "(no GameEval games yet)"
