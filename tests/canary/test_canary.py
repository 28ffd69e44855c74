"""The judge canary through real stages (scripted models): it repeats a fixed set of stored judgments every run,
outside the cache, compares each answer with the first night's, and fails the run below its threshold."""

from __future__ import annotations

import pytest

from dialogbench.run import registry
from dialogbench.canary.check import drifted
from dialogbench.cells.records import run_failures
from dialogbench.run.config import ConfigError
from dialogbench.run.registry import open_lake
from dialogbench.lake.catalog import connect
from dialogbench.lake.repair import repair
from tests.conftest import VERDICT_NO, VERDICT_YES_3, config_dict
from tests.stage_runner import run_all as night


def rows(lake_dir, sql: str) -> list[dict]:
    with connect(open_lake(lake_dir)) as con:
        rel = con.execute(sql)
        cols = [d[0] for d in rel.description]
        return [dict(zip(cols, r)) for r in rel.fetchall()]


def canary_config(lake_dir, **canary) -> dict:
    data = config_dict(lake_dir, judge_script=[VERDICT_NO], n=[4], limit=3)
    data["canary"] = {"size": 2, "min_agreement": 0.75, "every": "run", **canary}  # these nights share a day
    return data


def test_the_canary_repeats_a_fixed_set_and_agrees_with_a_steady_judge(make_config, lake_dir):
    data = canary_config(lake_dir)
    first = night(make_config(data), "r1")
    assert (first["judge_canary"].planned, first["judge_canary"].computed, first["judge_canary"].cached) == (2, 2, 0)
    second = night(make_config(data), "r2")
    assert second["botchat_unieval"].computed == 0 and second["judge_canary"].computed == 2  # outside the cache
    data["canary"]["size"] = 3  # a bigger set keeps the judgments already repeated
    night(make_config(data), "r3")
    repeated = rows(lake_dir, "select run_id, list(original_key order by original_key) as keys from canary_judgments "
                              "group by run_id order by run_id")
    assert repeated[0]["keys"] == repeated[1]["keys"] and set(repeated[0]["keys"]) < set(repeated[2]["keys"])
    agreement = rows(lake_dir, "select * from canary_agreement order by run_id")
    assert [(a["run_id"], a["judgments"], a["agree"], a["flagged"]) for a in agreement] == \
        [("r1", 2, 2, False), ("r2", 2, 2, False), ("r3", 3, 3, False)]
    assert drifted(make_config(data), open_lake(lake_dir), "r3") == []
    judged = rows(lake_dir, "select * from canary_judgments where run_id = 'r3'")
    assert all(j["answer"] == j["baseline"] == '{"ai_index": null, "choice": "No"}' for j in judged)
    assert all(j["baseline_run_id"] == "r1" and j["raw_output"] == j["baseline_raw_output"] == VERDICT_NO
               for j in judged)


def test_a_judge_that_answers_otherwise_is_flagged(make_config, lake_dir, scripted_calls):
    data = canary_config(lake_dir)
    night(make_config(data), "r1")

    def swapped(backend, conversations, script):  # the served judge changed behind the same config
        completions = script(conversations)
        if backend.model.name == "judge":
            for c in completions:
                object.__setattr__(c, "text", VERDICT_YES_3)  # an AI at utterance 3 of the 4 judged
        return completions

    scripted_calls.instead = swapped
    night(make_config(data), "r2")
    [flagged] = [a for a in rows(lake_dir, "select * from canary_agreement") if a["run_id"] == "r2"]
    assert (flagged["agree"], flagged["judgments"], flagged["flagged"]) == (0, 2, True)
    [problem] = drifted(make_config(data), open_lake(lake_dir), "r2")
    assert problem.startswith("judge canary: judge on botchat_unieval gave the first night's answer in 0 of 2")
    answers = rows(lake_dir, "select answer from canary_judgments where run_id = 'r2'")
    assert {a["answer"] for a in answers} == {'{"ai_index": 3, "choice": "Yes"}'}
    data["canary"]["min_agreement"] = 0.0  # a threshold of 0 never flags
    assert drifted(make_config(data), open_lake(lake_dir), "r3") == []


def test_a_failed_canary_judgment_is_a_failure_of_its_run(make_config, lake_dir, scripted_calls):
    """The run's failures (its artifact, ``fail_on``) count it; the ``failures`` view (what the next run retries)
    does not list it once the judgment was repeated before: every run repeats the whole set anyway."""
    data = canary_config(lake_dir)
    night(make_config(data), "r1")

    def down(backend, conversations, script):
        completions = script(conversations)
        if backend.model.name == "judge":
            for c in completions:
                object.__setattr__(c, "text", "")
                object.__setattr__(c, "error", "HTTP 503")
        return completions

    scripted_calls.instead = down
    report = night(make_config(data), "r2")["judge_canary"]
    assert (report.computed, report.failed) == (0, 2)
    assert [f["stage"] for f in run_failures(open_lake(lake_dir), "r2")] == ["judge_canary"] * 2
    assert rows(lake_dir, "select * from failures") == []
    scripted_calls.instead = None
    assert night(make_config(data), "r3")["judge_canary"].computed == 2


def test_repair_keeps_every_runs_canary_rows(make_config, lake_dir):
    """A canary cell has one row per run by design: history, not duplicates."""
    data = canary_config(lake_dir)
    night(make_config(data), "r1")
    night(make_config(data), "r2")
    assert {r.table for r in repair(open_lake(lake_dir))} == {t.name for t in registry.tables()
                                                          if t.done is not None and t.name != "canary_judgments"}
    assert open_lake(lake_dir).read("canary_judgments").num_rows == 4


def test_canary_stages_must_be_judge_stages(make_config, lake_dir):
    with pytest.raises(ConfigError, match=r"canary\.stages: 'generate:bot-a' is not a judge stage"):
        make_config(canary_config(lake_dir, stages=["generate:bot-a"]))
    config = make_config(canary_config(lake_dir, stages=["botchat_unieval"]))
    assert [s.name for s in registry.stage(config, "judge_canary").stages] == ["botchat_unieval"]


def test_canary_stages_reads_the_mtbench101_judge_stage_s_former_name(make_config, lake_dir, caplog):
    """Lake format 5 renamed the MT-Bench-101 judge stage ``mtbench101`` to ``mtbench101_judge``: a config that names
    it the old way still draws from it, and is told the new name."""
    data = canary_config(lake_dir, stages=["mtbench101"])
    data["mtbench101"] = {"enabled": True, "judge": "judge", "tasks": ["GR"], "limit": 1}
    config = make_config(data)
    assert [s.name for s in registry.stage(config, "judge_canary").stages] == ["mtbench101_judge"]
    assert "'mtbench101' is the judge stage's former name, read as 'mtbench101_judge'" in caplog.text
    data["mtbench101"]["enabled"] = False  # without the family, the old name names nothing either
    with pytest.raises(ConfigError, match=r"canary\.stages: 'mtbench101' is not a judge stage"):
        make_config(data)


def test_a_judge_stage_refuses_a_payload_that_does_not_say_what_it_judged():
    """judge_chunk stores the judged model and output with each verdict: a payload without them is a bug, said at
    once, never a row with a missing generation_key."""
    from dialogbench.cells import Cell
    from dialogbench.run.config import ModelConfig
    from dialogbench.cells.judging import judge_chunk

    judge = ModelConfig(name="judge", backend="scripted", script=["Choice: No"])
    with pytest.raises(TypeError, match="payload dict is not Judged"):
        judge_chunk(judge=judge, cells=[Cell("k", "item", payload={"model": "a"})], emit=None, protocol="p",
                    prompt=lambda c: [], output_format=lambda c: None, parse=lambda c, t: {})


def test_by_default_a_judge_s_set_is_judged_again_once_a_day(make_config, lake_dir, monkeypatch):
    """``every: night`` (the default): the day's later runs judge nothing again, so a cached rerun costs no judge
    call; the next UTC day repeats the set."""
    import datetime as dt

    from dialogbench.canary import rejudge_stage

    data = canary_config(lake_dir)
    del data["canary"]["every"]
    assert make_config(data).canary.every == "night"
    first = night(make_config(data), "r1")["judge_canary"]
    assert (first.planned, first.computed) == (2, 2)
    again = night(make_config(data), "r2")["judge_canary"]
    assert (again.planned, again.computed) == (0, 0)
    monkeypatch.setattr(rejudge_stage, "today",
                        lambda: dt.datetime.now(dt.timezone.utc).date() + dt.timedelta(days=1))
    tomorrow = night(make_config(data), "r3")["judge_canary"]
    assert (tomorrow.planned, tomorrow.computed) == (2, 2)
    assert [r["run_id"] for r in rows(lake_dir, "select distinct run_id from canary_judgments order by 1")] \
        == ["r1", "r3"]


def test_no_canary_turns_the_section_off_for_one_run(make_config, lake_dir):
    from dialogbench.run.config import apply_overrides

    data = canary_config(lake_dir)

    raw = apply_overrides(data, {"canary": False}, families=registry.families()).raw
    assert raw["canary"] == {**data["canary"], "enabled": False}
    assert "judge_canary" not in [s.name for s in registry.stages(make_config(raw))]
    assert apply_overrides({"lake": "x"}, {"canary": False}, families=registry.families()).raw == {"lake": "x"}
