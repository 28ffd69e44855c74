"""The history: snapshots of real stages' metrics (a changed model, judge or prompt is named as the cause of
its series' changes) and the `changes` view's rules (status, interval, cause) on written snapshots."""

from __future__ import annotations

import datetime as dt

from dialogbench.run.registry import open_lake
from dialogbench.history.tables import METRIC_SNAPSHOTS_TABLE
from dialogbench.lake import Lake
from dialogbench.lake.catalog import connect
from tests.conftest import VERDICT_NO, VERDICT_YES_5, chatbot, config_dict
from tests.stage_runner import night, run_all

T0 = dt.datetime(2026, 11, 20, 2, 0, tzinfo=dt.timezone.utc)


def changes(lake: Lake, board: str | None = None) -> dict[tuple[str, str], dict]:
    with connect(lake, board=board) as con:
        rel = con.execute("select * from changes")
        cols = [d[0] for d in rel.description]
        return {(r["model"], r["slice"]): r for r in (dict(zip(cols, row)) for row in rel.fetchall())}


def test_a_runs_cause_is_the_config_that_changed(make_config, lake_dir):
    data = config_dict(lake_dir, models=[chatbot("bot-a"), chatbot("bot-b")], judge_script=[VERDICT_YES_5, VERDICT_NO],
                       n=[4], limit=3)
    assert night(make_config(data), "r1") == 4  # pass@3 and pass@4 of two models (N from 3 to the judged length)
    assert {r["status"] for r in changes(open_lake(lake_dir)).values()} == {"new"}

    night(make_config(data), "r2")  # the same config: every value is the same, no cause
    rows = changes(open_lake(lake_dir))
    assert {(r["status"], r["cause"], r["previous_run_id"]) for r in rows.values()} == {("same", None, "r1")}

    data["models"][0]["max_tokens"] = 32  # bot-a's config
    night(make_config(data), "r3")
    rows = changes(open_lake(lake_dir))
    assert {k: r["cause"] for k, r in rows.items()} == {
        ("bot-a", "judge=judge, n=3"): "model config", ("bot-a", "judge=judge, n=4"): "model config",
        ("bot-b", "judge=judge, n=3"): None, ("bot-b", "judge=judge, n=4"): None}

    data["judges"][0]["max_tokens"] = 48  # the judge's config: every series
    data["botchat"]["system_prompt"] = "You are a person chatting with a friend."  # and the chatbots' prompt
    night(make_config(data), "r4")
    assert {r["cause"] for r in changes(open_lake(lake_dir)).values()} == {"judge config; prompts; botchat config"}

    data["botchat"]["limit"] = 4  # one seed more: a config section change that moves the cell counts
    night(make_config(data), "r5")
    assert {r["cause"] for r in changes(open_lake(lake_dir)).values()} == {"botchat config; cells 3 -> 4"}


def snapshot(run_id: str, at: int, model: str, value: float | None, low: float | None = None,
             high: float | None = None, n: int = 10, **fps) -> dict:
    return {"run_id": run_id, "created_at": T0 + dt.timedelta(days=at), "family": "botchat", "board": "nightly",
            "leaderboard": "botchat_unieval", "metric": "pass_rate", "model": model, "slice": "judge=j, n=8", "judge": "j", "value": value,
            "ci_low": low, "ci_high": high, "n": n, "model_fp": fps.get("model_fp", "m"), "judge_fp": "j",
            "prompt_fp": "p", "section_fp": "s", "config_fp": fps.get("config_fp", "c")}


def test_status_interval_and_previous_value(tmp_path):
    lake = open_lake(tmp_path / "lake")
    rows = [
        snapshot("r1", 0, "jumps", 0.5, 0.3, 0.7), snapshot("r2", 1, "jumps", 0.9, 0.75, 0.97),
        snapshot("r1", 0, "drifts", 0.5, 0.3, 0.7), snapshot("r2", 1, "drifts", 0.6, 0.4, 0.8),
        snapshot("r1", 0, "no_interval", 5.0), snapshot("r2", 1, "no_interval", 6.0),
        snapshot("r2", 1, "newcomer", 0.4, 0.2, 0.6),
        snapshot("r0", -1, "skipped_a_night", 0.2, 0.1, 0.3), snapshot("r2", 1, "skipped_a_night", 0.2, 0.1, 0.3),
        snapshot("r1", 0, "lost_its_value", 0.5, 0.3, 0.7), snapshot("r2", 1, "lost_its_value", None),
        snapshot("r1", 0, "only_before", 0.5, 0.3, 0.7),  # not in the latest run: not a row
    ]
    METRIC_SNAPSHOTS_TABLE.write(lake, rows)
    found = changes(lake, "nightly")
    got = {model: (r["status"], r["outside_interval"], r["previous_run_id"],
                   None if r["delta"] is None else round(r["delta"], 9))
           for (model, _), r in found.items()}
    assert got == {
        "jumps": ("moved", True, "r1", 0.4),            # 0.9 is above r1's [0.3, 0.7] (0.5 below r2's [0.75, 0.97])
        "drifts": ("moved", False, "r1", 0.1),          # inside both intervals
        "no_interval": ("moved", None, "r1", 1.0),      # no interval: not judged
        "newcomer": ("new", None, None, None),
        "skipped_a_night": ("same", False, "r0", 0.0),  # compared with its latest earlier value
        "lost_its_value": ("moved", None, "r1", None),
    }
    assert {r["cause"] for r in found.values()} == {None}


def test_a_snapshot_holds_every_enabled_familys_metrics(make_config, lake_dir):
    data = config_dict(lake_dir, judge_script=[VERDICT_NO], n=[4], limit=2)
    data["gameeval"] = {"askguess": {"limit": 1, "max_rounds": 1}, "spyfall": {"enabled": False},
                        "tofukingdom": {"enabled": False}}
    config = make_config(data)
    night(config, "r1")
    with connect(open_lake(lake_dir)) as con:
        boards = con.execute("select family, leaderboard, metric, board, count(*) from metric_history "
                             "group by all order by all").fetchall()
    assert [b[:4] for b in boards] == [("botchat", "botchat_unieval", "pass_rate", "config"),
                                       ("gameeval", "gameeval_askguess", "mean_rounds", "config"),
                                       ("gameeval", "gameeval_askguess", "st", "config")]


def test_the_runs_changes_include_its_own_first_snapshot(make_config, lake_dir):
    """The snapshot task reads `changes` after writing: on a lake with no snapshot yet, every series is new (views
    created before the first file existed would see none)."""
    from dialogbench.run.registry import run_for
    from tasks.history import snapshot

    config = make_config(config_dict(lake_dir, judge_script=[VERDICT_NO], n=[4], limit=2))
    run_all(config, "r1")
    found = snapshot.fn(run_for(config), "r1")
    assert found["rows"] == 4 and len(found["changes"]) == 4
    assert {c["status"] for c in found["changes"]} == {"new"} and {c["run_id"] for c in found["changes"]} == {"r1"}
