"""BotChat's published rates follow the authors' rules for verdicts the parser cannot read, hand-made
judge replies whose outcome differs from the project's stricter rule (kept as the ``*_parsed`` columns).

UniEval: the authors' notebook (annotations/BrowseAnnotation.ipynb, ``parse_output`` / ``calc_acc``) reads only
the ``Index:`` line: none, or ``Index: None`` (even after ``Choice: Yes``), is a pass at every N.
GTEval: ``botchat/analyze.py`` keeps the 'unknown' verdicts in every rate's denominator (see
``test_comparison_pipeline.test_gteval_views_by_hand``)."""

from __future__ import annotations

import pytest

from dialogbench.run.registry import open_lake
from dialogbench.lake.catalog import connect, data_tests
from tests.conftest import VERDICT_YES_3, chatbot, config_dict

YES_NONE = "Choice: Yes\nIndex: None\nReason: one of them sounds like a bot."  # project: unparsed; authors: pass
NO_INDEX = "Choice: Yes\nReason: the second speaker is an AI."                  # project: unparsed; authors: pass
INDEX_ONLY = "Choice: Perhaps\nIndex: 2\nReason: hard to say."                  # project: unparsed; authors: fails at N >= 2


def rows(config) -> dict[int, dict]:
    with connect(open_lake(config.lake)) as con:
        rel = con.sql("select * from botchat_unieval")
        return {r["n"]: r for r in (dict(zip(rel.columns, row)) for row in rel.fetchall())}


def test_unieval_unparsed_verdicts_count_as_the_authors_counted_them(make_config, pipeline, lake_dir):
    config = make_config(config_dict(lake_dir, limit=4, n=[4], models=[chatbot("bot-a")],
                                     judge_script=[YES_NONE, NO_INDEX, INDEX_ONLY, VERDICT_YES_3]))
    pipeline(config)
    by_n = rows(config)
    assert sorted(by_n) == [3, 4]
    for n in (3, 4):
        row = by_n[n]
        # Yes + Index None and the reply without an Index line pass; "Index: 2" fails (2 > N is false);
        # the parsed Yes / Index 3 fails at N >= 3
        assert (row["dialogues"], row["parseable"], row["unparsed"], row["passed"], row["unparsed_passed"]) == \
               (4, 1, 3, 2, 2)
        assert row["pass_rate"] == pytest.approx(0.5)          # the authors' rule: 2 / 4
        assert row["pass_rate_parsed"] == pytest.approx(0.0)   # unparsed left out: 0 / 1
    assert data_tests(open_lake(config.lake)) == {}
