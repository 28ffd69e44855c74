"""The `changes` view names the judge canary and the engines as causes: a flagged canary of the row's judge (in the
latest run, or the previous one) and an engine that wrote the row model's or its judge's rows in one run and not in
the other (run_engines). Through real stages (scripted models) and on written lake rows."""

from __future__ import annotations

import datetime as dt

from dialogbench.botchat.tables import GENERATIONS_TABLE, UNIEVAL_TABLE
from dialogbench.canary.tables import CANARY_TABLE
from dialogbench.gameeval.tables import GAMES_TABLE
from dialogbench.history.tables import METRIC_SNAPSHOTS_TABLE
from dialogbench.lake import Lake
from dialogbench.lake.catalog import connect
from dialogbench.run.registry import open_lake
from tests.canary.test_canary import canary_config
from tests.conftest import VERDICT_NO, VERDICT_YES_3, config_dict
from tests.history.test_changes import T0, snapshot
from tests.stage_runner import night

ASKGUESS_ONLY = {"askguess": {"limit": 1, "max_rounds": 1}, "spyfall": {"enabled": False},
                 "tofukingdom": {"enabled": False}}


def causes(lake: Lake, board: str | None = None) -> dict[tuple[str, str, str, str], str | None]:
    """Every row of `changes`: its cause by (family, metric, model, slice)."""
    with connect(lake, board=board) as con:
        found = con.execute("select family, metric, model, slice, cause from changes").fetchall()
    return {row[:4]: row[4] for row in found}


def test_a_flagged_judge_canary_is_named_for_the_judged_series_only(make_config, lake_dir, scripted_calls):
    data = canary_config(lake_dir)  # a canary of 2 UniEval judgments, min_agreement 0.75
    data["gameeval"] = ASKGUESS_ONLY  # series without a judge
    night(make_config(data), "r1")

    def swapped(backend, conversations, script):  # the served judge answers otherwise behind the same config
        completions = script(conversations)
        if backend.model.name == "judge":
            for c in completions:
                object.__setattr__(c, "text", VERDICT_YES_3)
        return completions

    scripted_calls.instead = swapped
    night(make_config(data), "r2")  # every cell cached: only the canary judged again
    found = causes(open_lake(lake_dir))
    judged = {k: v for k, v in found.items() if k[0] == "botchat"}
    unjudged = {k: v for k, v in found.items() if k[0] == "gameeval"}
    assert judged and unjudged
    assert set(judged.values()) == {"judge canary flagged: botchat_unieval agreement 0.0 < 0.75 (0 of 2 agreed)"}
    assert set(unjudged.values()) == {None}


def test_an_engine_change_is_named_for_the_model_and_the_judge(make_config, lake_dir, scripted_calls):
    data = config_dict(lake_dir, judge_script=[VERDICT_NO], n=[4], limit=3)
    night(make_config(data), "r1")
    upgraded: dict[str, str] = {}

    def generate(backend, conversations, script):  # bot-a's and the judge's engine upgraded between the runs
        if backend.model.name in upgraded:
            backend.version = upgraded[backend.model.name]
        return script(conversations)

    scripted_calls.instead = generate
    upgraded.update({"bot-a": "v2", "judge": "v2"})
    data["botchat"]["limit"] = 4  # a seed more: each model's new dialogues and their verdicts are written by r2
    night(make_config(data), "r2")
    found = causes(open_lake(lake_dir))
    both = "botchat config; cells 3 -> 4"
    assert found == {
        ("botchat", "pass_rate", "bot-a", "judge=judge, n=3"):
            f"{both}; engine scripted scripted -> v2 (model); engine scripted scripted -> v2 (judge)",
        ("botchat", "pass_rate", "bot-a", "judge=judge, n=4"):
            f"{both}; engine scripted scripted -> v2 (model); engine scripted scripted -> v2 (judge)",
        ("botchat", "pass_rate", "bot-b", "judge=judge, n=3"): f"{both}; engine scripted scripted -> v2 (judge)",
        ("botchat", "pass_rate", "bot-b", "judge=judge, n=4"): f"{both}; engine scripted scripted -> v2 (judge)",
    }

    upgraded.update({"bot-a": "v3", "judge": "v3"})  # a run that computes nothing records no engine: no claim
    night(make_config(data), "r3")
    assert set(causes(open_lake(lake_dir)).values()) == {None}


def _engines(lake: Lake, run_id: str, at: int, version: str, *, agree: int, games: bool = True) -> None:
    """What run ``run_id`` wrote: model m's dialogue, judge j's verdict on it and (``games``) m's game, all on vLLM
    ``version``; judge j's canary on botchat_unieval, ``agree`` of 2 agreeing (threshold 0.75)."""
    at_ = T0 + dt.timedelta(days=at)
    written = {"run_id": run_id, "created_at": at_, "backend": "vllm", "backend_version": version}
    GENERATIONS_TABLE.write(lake, [{"cell_key": f"g-{run_id}", "protocol": "botchat", "model": "m", **written}])
    UNIEVAL_TABLE.write(lake, [{"cell_key": f"u-{run_id}", "protocol": "botchat_unieval", "model": "m", "judge": "j",
                                "parsed": True, **written}])
    if games:
        GAMES_TABLE.write(lake, [{"cell_key": f"a-{run_id}", "game": "askguess", "assignment": [
            ("questioner", "m"), ("answerer", "m")], **written}])
    CANARY_TABLE.write(lake, [{"cell_key": f"c{i}", "stage": "botchat_unieval", "judge": "j", "agrees": i < agree,
                               "parsed": True, "min_agreement": 0.75, "run_id": run_id, "created_at": at_}
                              for i in range(2)])


def _series(run_id: str, at: int) -> list[dict]:
    """Run ``run_id``'s snapshot: m's pass rate judged by j, and m's Ask-Guess success rate (no judge)."""
    game = {"family": "gameeval", "leaderboard": "gameeval_askguess", "metric": "st", "slice": "setting=default",
            "judge": None}
    return [snapshot(run_id, at, "m", 0.5), {**snapshot(run_id, at, "m", 0.25), **game}]


def test_nothing_recorded_differs_leaves_the_cause_null(tmp_path):
    """r1's canary was flagged and ran an older engine; r2 and r3 ran the same engine with the canary agreeing: r2's
    rows name r1's canary and the engine change, r3's (against r2) name nothing."""
    lake = open_lake(tmp_path / "lake")
    _engines(lake, "r1", 0, "0.6.3", agree=1)
    _engines(lake, "r2", 1, "0.7.0", agree=2)
    METRIC_SNAPSHOTS_TABLE.write(lake, _series("r1", 0) + _series("r2", 1))
    judged, played = ("botchat", "pass_rate", "m", "judge=j, n=8"), ("gameeval", "st", "m", "setting=default")
    assert causes(lake, "nightly") == {
        judged: "judge canary flagged in the previous run: botchat_unieval agreement 0.5 < 0.75 (1 of 2 agreed); "
                "engine vllm 0.6.3 -> 0.7.0 (model); engine vllm 0.6.3 -> 0.7.0 (judge)",
        played: "engine vllm 0.6.3 -> 0.7.0 (model)",  # no judge: no canary, no judge engine
    }

    _engines(lake, "r3", 2, "0.7.0", agree=2)
    METRIC_SNAPSHOTS_TABLE.write(lake, _series("r3", 2))
    assert causes(lake, "nightly") == {judged: None, played: None}


def test_a_backend_change_names_both_engines_and_a_run_without_a_record_claims_nothing(tmp_path):
    lake = open_lake(tmp_path / "lake")
    _engines(lake, "r1", 0, "0.6.3", agree=2)
    _engines(lake, "r2", 1, "0.6.3", agree=2, games=False)  # r2 played no game: no engine to compare for Ask-Guess
    GENERATIONS_TABLE.write(lake, [{"cell_key": "g-r2-endpoint", "protocol": "botchat", "model": "m", "run_id": "r2",
                                    "created_at": T0, "backend": "openai", "backend_version": "gpt-4o fp_1"}])
    METRIC_SNAPSHOTS_TABLE.write(lake, _series("r1", 0) + _series("r2", 1))
    assert causes(lake, "nightly") == {
        ("botchat", "pass_rate", "m", "judge=j, n=8"): "engine vllm 0.6.3 -> openai gpt-4o fp_1; vllm 0.6.3 (model)",
        ("gameeval", "st", "m", "setting=default"): None,
    }


def test_run_engines_attributes_a_game_to_its_players_only_when_it_can(tmp_path):
    lake = open_lake(tmp_path / "lake")
    row = {"run_id": "r1", "created_at": T0, "game": "spyfall", "backend": "vllm"}
    GAMES_TABLE.write(lake, [
        {**row, "cell_key": "one-engine", "assignment": [("spy", "a"), ("villager", "b")], "backend_version": "0.7.0"},
        {**row, "cell_key": "two-engines", "assignment": [("spy", "a"), ("villager", "c")],
         "backend_version": "0.6.3; 0.7.0"},  # which model ran on which is not recorded
        {**row, "cell_key": "one-model", "assignment": [("spy", "d"), ("villager", "d")],
         "backend_version": "0.6.3; 0.7.0"},
        {**row, "cell_key": "unrecorded", "assignment": [("spy", "e"), ("villager", "e")], "backend_version": None},
    ])
    with connect(lake) as con:
        found = con.execute("select model, role, protocol, backend, backend_version, rows from run_engines").fetchall()
    assert found == [("a", "player", "gameeval_spyfall", "vllm", "0.7.0", 1),
                     ("b", "player", "gameeval_spyfall", "vllm", "0.7.0", 1),
                     ("d", "player", "gameeval_spyfall", "vllm", "0.6.3", 1),
                     ("d", "player", "gameeval_spyfall", "vllm", "0.7.0", 1)]
