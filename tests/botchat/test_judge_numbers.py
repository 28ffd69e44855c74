"""A judge's number out of every bound (issue 32): the UniEval stage stores it once as an unparsed verdict and
completes; the next run computes nothing for it (never a chunk that fails every night)."""

from __future__ import annotations

from dialogbench.lake.catalog import data_tests
from dialogbench.run.registry import open_lake
from tests.conftest import chatbot, config_dict
from tests.verdicts import verdicts

HUGE_INDEX = "Choice: Yes\nIndex: 99999999999999999999999\nReason: the last chat."  # past int32 (ai_index)


def test_an_index_past_int32_is_stored_once_as_an_unparsed_verdict(make_config, pipeline, lake_dir, backend_calls):
    config = make_config(config_dict(lake_dir, limit=2, n=[4], models=[chatbot("bot-a")], judge_script=[HUGE_INDEX]))
    first = pipeline(config, "run-1")["unieval"]
    assert (first.planned, first.computed, first.failed) == (2, 2, 0)
    rows = verdicts(config.lake, "botchat_unieval")
    assert len(rows) == 2
    for row in rows:
        assert (row["parsed"], row["choice"], row["ai_index"]) == (False, "Yes", None)
        assert row["parse_error"] == "Index 99999999999999999999999 is outside 1..4"
        assert row["raw_output"] == HUGE_INDEX
    assert data_tests(open_lake(config.lake)) == {}

    backend_calls.clear()
    again = pipeline(config, "run-2")["unieval"]
    assert (again.planned, again.cached, again.computed, again.failed) == (2, 2, 0, 0)
    assert "judge" not in backend_calls and len(verdicts(config.lake, "botchat_unieval")) == 2
