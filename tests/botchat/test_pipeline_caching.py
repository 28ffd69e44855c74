"""The BotChat stages end to end on scripted models (no Prefect): what each run plans, reuses and
computes, what lands in the lake, and the SQL views and data tests over it."""

from __future__ import annotations

import pytest

from tests import stage_runner as stages
from dialogbench.run import registry
from dialogbench.botchat.leaderboard import format_leaderboard
from dialogbench.run.registry import open_lake
from dialogbench.lake.catalog import connect, data_tests
from dialogbench.botchat.tables import GENERATIONS
from dialogbench.lake.schemas import FAILURES
from tests.verdicts import verdicts, write_verdicts
from tests.conftest import (JUDGE_SCRIPT, VERDICT_GARBAGE, VERDICT_NO, VERDICT_YES_3, VERDICT_YES_5, chatbot,
                            config_dict)


def generations(config) -> list[dict]:
    return open_lake(config.lake).read("generations", GENERATIONS).to_pylist()


def judgments(config) -> list[dict]:
    return verdicts(config.lake)


def failures(config) -> list[dict]:
    return open_lake(config.lake).read("failures", FAILURES).to_pylist()


def counts(report) -> tuple[int, int, int, int]:
    return report.planned, report.cached, report.computed, report.failed


def by_item(rows: list[dict], model: str, n_target: int | None = None) -> dict[str, dict]:
    return {r["item_id"]: r for r in rows if r["model"] == model and (n_target is None or r["n_target"] == n_target)}


def test_first_run_computes_every_cell(make_config, pipeline, lake_dir, backend_calls):
    config = make_config(limit=3, n=[4, 8])
    reports = pipeline(config)
    assert counts(reports["seeds"])[:3] == (547, 0, 547)
    for model in ("bot-a", "bot-b"):
        assert counts(reports[model]) == (3, 0, 3, 0)
        assert reports[model].detail["backend_calls"] == 6  # 8 - 2 steps, all 3 dialogues per call
        assert backend_calls[model] == [3] * 6
    assert counts(reports["unieval"]) == (6, 0, 6, 0)
    assert backend_calls["judge"] == [6]  # one chunk, one call

    gens = generations(config)
    assert len(gens) == 6
    first_three = [s["seed_id"] for s in open_lake(config.lake).read("seeds").sort_by("line").slice(0, 3).to_pylist()]
    for model in ("bot-a", "bot-b"):
        rows = by_item(gens, model)
        assert sorted(rows) == sorted(first_three)
        for row in rows.values():
            assert row["n_target"] == 8 and len(row["utterances"]) == 8
            assert row["utterances"][2:] == [f"{model} says hi ({k} before me)" for k in range(2, 8)]
            assert row["completion_tokens"] == [6] * 6  # words of "bot-a says hi (k before me)"
    judged = judgments(config)
    assert len(judged) == 6
    assert {j["generation_key"] for j in judged} == {g["cell_key"] for g in gens}
    assert all(j["n_judged"] == 8 for j in judged)
    assert failures(config) == []
    assert not open_lake(config.lake).files("_state")  # the generation checkpoint is cleared when done
    assert data_tests(open_lake(config.lake)) == {}


def test_second_run_is_all_cached(make_config, pipeline, backend_calls):
    config = make_config(limit=3, n=[4, 8])
    pipeline(config, "run-1")
    backend_calls.clear()
    before_gens, before_judgments = generations(config), judgments(config)
    reports = pipeline(config, "run-2")
    for model in ("bot-a", "bot-b"):
        assert counts(reports[model]) == (3, 3, 0, 0)
    assert counts(reports["unieval"]) == (6, 6, 0, 0)
    assert reports["unieval_chunks"] == 0
    assert backend_calls == {}  # no model was called at all
    assert generations(config) == before_gens
    assert judgments(config) == before_judgments
    assert data_tests(open_lake(config.lake)) == {}


def test_engine_settings_do_not_invalidate_cells(make_config, pipeline, lake_dir):
    pipeline(make_config(limit=3))
    data = config_dict(lake_dir, limit=3, judge_extra={"batch_size": 2, "concurrency": 1},
                       models=[chatbot("bot-a", batch_size=1, device="cpu"), chatbot("bot-b", timeout_s=5)])
    reports = pipeline(make_config(data), "run-2")
    assert reports["bot-a"].computed == reports["bot-b"].computed == reports["unieval"].computed == 0


@pytest.mark.parametrize("judge_change", [
    {"judge_script": [VERDICT_NO]},
    {"judge_extra": {"max_tokens": 32}},
    {"judge_extra": {"sampling": {"temperature": 0.5}}},
], ids=["script", "max_tokens", "temperature"])
def test_judge_change_recomputes_only_judgments(make_config, pipeline, lake_dir, judge_change, backend_calls):
    config = make_config(limit=3)
    pipeline(config)
    old_keys = {j["cell_key"] for j in judgments(config)}
    changed = make_config(config_dict(lake_dir, limit=3, **judge_change))
    backend_calls.clear()
    reports = pipeline(changed, "run-2")
    for model in ("bot-a", "bot-b"):
        assert counts(reports[model]) == (3, 3, 0, 0)
    assert counts(reports["unieval"]) == (6, 0, 6, 0)
    assert backend_calls == {"judge": [6]}
    judged = judgments(changed)
    assert len(judged) == 12
    new = [j for j in judged if j["run_id"] == "run-2"]
    assert not {j["cell_key"] for j in new} & old_keys
    assert len(generations(changed)) == 6
    assert data_tests(open_lake(changed.lake)) == {}


def test_chatbot_change_recomputes_its_generations_and_judgments(make_config, pipeline, lake_dir):
    pipeline(make_config(limit=3))
    changed = make_config(config_dict(lake_dir, limit=3,
                                      models=[chatbot("bot-a", max_tokens=3), chatbot("bot-b")]))
    reports = pipeline(changed, "run-2")
    assert counts(reports["bot-a"]) == (3, 0, 3, 0)
    assert counts(reports["bot-b"]) == (3, 3, 0, 0)
    assert counts(reports["unieval"]) == (6, 3, 3, 0)
    assert {j["model"] for j in judgments(changed) if j["run_id"] == "run-2"} == {"bot-a"}


def test_adding_a_model_computes_only_that_model(make_config, pipeline, lake_dir):
    pipeline(make_config(limit=3))
    config = make_config(config_dict(lake_dir, limit=3, models=[chatbot("bot-a"), chatbot("bot-b"), chatbot("bot-c")]))
    reports = pipeline(config, "run-2")
    assert counts(reports["bot-a"]) == (3, 3, 0, 0)
    assert counts(reports["bot-b"]) == (3, 3, 0, 0)
    assert counts(reports["bot-c"]) == (3, 0, 3, 0)
    assert counts(reports["unieval"]) == (9, 6, 3, 0)
    new_gens = [g for g in generations(config) if g["run_id"] == "run-2"]
    new_judgments = [j for j in judgments(config) if j["run_id"] == "run-2"]
    assert {g["model"] for g in new_gens} == {"bot-c"} and len(new_gens) == 3
    assert {j["model"] for j in new_judgments} == {"bot-c"} and len(new_judgments) == 3
    assert data_tests(open_lake(config.lake)) == {}


def test_more_seeds_computes_only_the_new_items(make_config, pipeline, lake_dir):
    pipeline(make_config(limit=3))
    reports = pipeline(make_config(limit=5), "run-2")
    assert counts(reports["bot-a"]) == (5, 3, 2, 0)
    assert counts(reports["unieval"]) == (10, 6, 4, 0)
    # fewer seeds than before: everything cached
    reports = pipeline(make_config(limit=2), "run-3")
    assert counts(reports["bot-a"]) == (2, 2, 0, 0)
    assert counts(reports["unieval"]) == (4, 4, 0, 0)


def test_smaller_n_reuses_the_longer_dialogues(make_config, pipeline, lake_dir):
    config = make_config(limit=3, n=[4, 8])
    pipeline(config)
    gens_before = generations(config)
    smaller = make_config(limit=3, n=[4])
    reports = pipeline(smaller, "run-2")
    for model in ("bot-a", "bot-b"):
        assert counts(reports[model]) == (3, 3, 0, 0)
    assert generations(smaller) == gens_before  # nothing generated
    # the first 4 utterances of the stored 8-long dialogues are judged (a new judgment cell)
    assert counts(reports["unieval"]) == (6, 0, 6, 0)
    by_key = {g["cell_key"]: g for g in gens_before}
    new = [j for j in judgments(smaller) if j["run_id"] == "run-2"]
    assert all(j["n_judged"] == 4 for j in new)
    assert {j["generation_key"] for j in new} == set(by_key)
    assert data_tests(open_lake(smaller.lake)) == {}


def test_larger_n_extends_the_stored_dialogues(make_config, pipeline, lake_dir, backend_calls):
    config = make_config(limit=3, n=[4, 8])
    pipeline(config)
    old = generations(config)
    longer = make_config(limit=3, n=[4, 10])
    backend_calls.clear()
    reports = pipeline(longer, "run-2")
    for model in ("bot-a", "bot-b"):
        assert counts(reports[model]) == (3, 0, 3, 0)
        assert reports[model].detail["backend_calls"] == 2
        assert backend_calls[model] == [3, 3]  # only utterances 9 and 10
    new = [g for g in generations(longer) if g["run_id"] == "run-2"]
    assert len(new) == 6
    for model in ("bot-a", "bot-b"):
        old_rows, new_rows = by_item(old, model, 8), by_item(new, model, 10)
        assert sorted(old_rows) == sorted(new_rows)
        for item, row in new_rows.items():
            assert len(row["utterances"]) == 10
            assert row["utterances"][:8] == old_rows[item]["utterances"]
            assert row["completion_tokens"][:6] == old_rows[item]["completion_tokens"]
            assert len(row["completion_tokens"]) == 8
            assert row["dialogue_key"] == old_rows[item]["dialogue_key"]
            assert row["cell_key"] != old_rows[item]["cell_key"]
    assert counts(reports["unieval"]) == (6, 0, 6, 0)
    assert all(j["n_judged"] == 10 for j in judgments(longer) if j["run_id"] == "run-2")
    assert data_tests(open_lake(longer.lake)) == {}


def test_extension_keeps_the_stored_text_even_if_regeneration_would_differ(make_config, pipeline, lake_dir):
    """A cycling script gives different text on a rerun; the extended dialogues still start with
    exactly what was stored (so the prefix was read from the lake, not regenerated)."""
    data = config_dict(lake_dir, limit=3, n=[4], models=[chatbot("bot-a", script=["x1", "x2", "x3", "x4"])])
    pipeline(make_config(data))
    old = by_item(generations(make_config(data)), "bot-a", 4)
    data["botchat"]["n"] = [6]
    reports = pipeline(make_config(data), "run-2")
    assert reports["bot-a"].detail["backend_calls"] == 2
    new = by_item(generations(make_config(data)), "bot-a", 6)
    for item in old:
        assert new[item]["utterances"][:4] == old[item]["utterances"]
    # from scratch, the first two generated utterances would have been x1/x4/x3 and x2/x1/x4 (3 per call)
    assert sorted(r["utterances"][2] for r in old.values()) == ["x1", "x2", "x3"]


def test_backend_errors_are_stored_and_retried(make_config, pipeline, lake_dir):
    # per step the script hands out 3 replies in turn: the 3rd dialogue fails on step 1, the others
    # finish on step 2 (replies 1 and 2 again, both fine)
    data = config_dict(lake_dir, limit=3, n=[4],
                       models=[chatbot("bot-a", script=["a {n}", "a {n}", "!error:503 overloaded"]), chatbot("bot-b")])
    config = make_config(data)
    reports = pipeline(config)
    assert counts(reports["bot-a"]) == (3, 0, 2, 1)
    assert counts(reports["bot-b"]) == (3, 0, 3, 0)
    # the failed dialogue is not judged: its judgment is planned, blocked (neither cached nor computed)
    assert counts(reports["unieval"]) == (6, 0, 5, 0) and reports["unieval"].blocked == 1
    [failure] = failures(config)
    assert failure["stage"] == "generate:bot-a" and failure["model"] == "bot-a"
    assert failure["error"] == "utterance 3: 503 overloaded"
    assert failure["item_id"] not in by_item(generations(config), "bot-a")
    assert data_tests(open_lake(config.lake)) == {}

    # a new process: the same script from the start, and only one dialogue to generate
    reports = pipeline(config, "run-2")
    assert counts(reports["bot-a"]) == (3, 2, 1, 0)
    assert counts(reports["bot-b"]) == (3, 3, 0, 0)
    assert counts(reports["unieval"]) == (6, 5, 1, 0)
    new = [g for g in generations(config) if g["run_id"] == "run-2"]
    assert [g["item_id"] for g in new] == [failure["item_id"]]
    assert [j["item_id"] for j in judgments(config) if j["run_id"] == "run-2"] == [failure["item_id"]]
    assert data_tests(open_lake(config.lake)) == {}


def test_judge_errors_are_stored_and_retried(make_config, pipeline, lake_dir):
    data = config_dict(lake_dir, limit=2, n=[4], judge_script=[VERDICT_NO, VERDICT_NO, VERDICT_NO, "!error:timeout"])
    config = make_config(data)
    reports = pipeline(config)
    assert counts(reports["unieval"]) == (4, 0, 3, 1)
    [failure] = failures(config)
    assert failure["stage"] == "botchat_unieval" and failure["judge"] == "judge" and failure["error"] == "timeout"
    assert len(judgments(config)) == 3
    reports = pipeline(config, "run-2")
    assert counts(reports["bot-a"]) == (2, 2, 0, 0)
    assert counts(reports["unieval"]) == (4, 3, 1, 0)
    [retried] = [j for j in judgments(config) if j["run_id"] == "run-2"]
    assert (retried["model"], retried["item_id"]) == (failure["model"], failure["item_id"])
    assert retried["cell_key"] == failure["cell_key"]
    assert data_tests(open_lake(config.lake)) == {}


def test_judging_is_chunked(make_config, pipeline, backend_calls):
    config = make_config(limit=5, n=[4], judge_chunk_size=4)
    reports = pipeline(config)
    assert reports["unieval_chunks"] == 3  # 10 cells in chunks of 4
    assert counts(reports["unieval"]) == (10, 0, 10, 0)
    assert backend_calls["judge"] == [4, 4, 2]


def test_interrupted_generation_resumes_from_its_checkpoint(make_config, pipeline, scripted_calls, backend_calls):
    config = make_config(limit=3, n=[8], models=[chatbot("bot-a")])

    def dies_on_call_4(backend, conversations, script):
        if backend.stats.calls == 3:
            raise RuntimeError("killed")
        return script(conversations)

    scripted_calls.instead = dies_on_call_4
    with pytest.raises(RuntimeError, match="killed"):
        pipeline(config)
    assert open_lake(config.lake).files("_state")  # 3 steps checkpointed
    assert generations(config) == []
    scripted_calls.instead = None
    backend_calls.clear()

    reports = pipeline(config, "run-2")
    assert counts(reports["bot-a"]) == (3, 0, 3, 0)
    assert backend_calls["bot-a"] == [3, 3, 3]  # utterances 6, 7, 8 only
    for row in generations(config):
        assert row["utterances"][2:] == [f"bot-a says hi ({k} before me)" for k in range(2, 8)]
        assert len(row["completion_tokens"]) == 6
    assert not open_lake(config.lake).files("_state")
    assert data_tests(open_lake(config.lake)) == {}


# The botchat_unieval view against a hand count ------------------------------------------------------

EXPECTED = {  # verdict → (parsed, passes at N) for dialogues judged at n_judged = 8
    VERDICT_YES_5: (True, lambda n: n < 5),
    VERDICT_NO: (True, lambda n: True),
    VERDICT_GARBAGE: (False, None),
    VERDICT_YES_3: (True, lambda n: n < 3),
}


def view(config) -> dict[tuple[str, int], dict]:
    with connect(open_lake(config.lake)) as con:
        rel = con.sql("select * from botchat_unieval")
        cols = rel.columns
        return {(r["model"], r["n"]): r for r in (dict(zip(cols, row)) for row in rel.fetchall())}


def test_view_matches_a_hand_count_one_model(make_config, pipeline, lake_dir):
    # 4 seeds, judge script of 4 verdicts: each verdict exactly once
    config = make_config(config_dict(lake_dir, limit=4, n=[4, 8], models=[chatbot("bot-a")]))
    pipeline(config)
    assert sorted(j["raw_output"] for j in judgments(config)) == sorted(JUDGE_SCRIPT)
    rows = view(config)
    assert sorted(n for _, n in rows) == [3, 4, 5, 6, 7, 8]
    for n in range(3, 9):
        row = rows[("bot-a", n)]
        parsed_passed = {3: 2, 4: 2}.get(n, 1)  # No always; Yes/Index 5 while N < 5; Yes/Index 3 never (3 > 3 is false)
        passed = parsed_passed + 1  # the garbage reply has no Index line: a pass by the authors' rule
        assert (row["judge"], row["dialogues"], row["parseable"], row["unparsed"], row["passed"],
                row["unparsed_passed"]) == ("judge", 4, 3, 1, passed, 1)
        assert row["pass_rate"] == pytest.approx(round(passed / 4, 4))
        assert row["pass_rate_parsed"] == pytest.approx(round(parsed_passed / 3, 4))
    board = registry.leaderboards(config)["botchat"]
    shown = {"model": "bot-a", "judge": "judge", "dialogues": 4, "unparsed": 1, "pass@4": pytest.approx(0.75),
             "passed@4": 3, "pass@8": pytest.approx(0.5), "passed@8": 2}
    assert len(board) == 1 and {k: board[0][k] for k in shown} == shown
    # no run recorded its snapshot yet: no interval, no ranks; once one has, the rows carry the snapshot's
    assert set(board[0]) - set(shown) == {f"pass@{n}_{k}" for n in (4, 8) for k in ("ci_low", "ci_high", "ranks")} \
        | {"self_judged"}
    assert board[0]["self_judged"] is False  # bot-a is not its judge
    assert board[0]["pass@8_ci_low"] is None and board[0]["pass@8_ranks"] is None
    from dialogbench.history.snapshot import snapshot_metrics
    from dialogbench.lake.catalog import connect

    with connect(open_lake(config.lake), board=config.board) as con:
        snapshot_metrics(con, open_lake(config.lake), config, run_id="r1", families=registry.families())
    with connect(open_lake(config.lake), board=config.board) as con:
        recorded = con.execute("select raw_ci_low, raw_ci_high from headline where leaderboard = 'botchat_unieval' "
                               "and slice like '%n=8'").fetchone()
    board = registry.leaderboards(config)["botchat"]
    assert (board[0]["pass@8_ci_low"], board[0]["pass@8_ci_high"]) == recorded
    assert board[0]["pass@8_ranks"] == "1"  # one model
    text = format_leaderboard(board, [4, 8])
    assert "bot-a" in text and "0.750" in text and "0.500" in text
    assert data_tests(open_lake(config.lake)) == {}


def test_view_matches_a_hand_count_two_models(make_config, pipeline, lake_dir):
    config = make_config(limit=6, n=[4, 6])
    pipeline(config)
    judged = judgments(config)
    assert len(judged) == 12
    rows = view(config)
    for model in ("bot-a", "bot-b"):
        mine = [EXPECTED[j["raw_output"]] for j in judged if j["model"] == model]
        for n in range(3, 7):
            parsed = [p for p in mine if p[0]]
            parsed_passed = sum(p[1](n) for p in parsed)
            passed = parsed_passed + 6 - len(parsed)  # the garbage replies (no Index line) pass: the authors' rule
            row = rows[(model, n)]
            assert (row["dialogues"], row["parseable"], row["unparsed"], row["passed"]) == \
                   (6, len(parsed), 6 - len(parsed), passed)
            assert row["pass_rate"] == pytest.approx(round(passed / 6, 4))
            assert row["pass_rate_parsed"] == (pytest.approx(round(parsed_passed / len(parsed), 4)) if parsed else None)
    # across models the script gives each verdict three times
    assert sum(rows[(m, 4)]["passed"] for m in ("bot-a", "bot-b")) == 6 + 3
    assert sum(rows[(m, 5)]["passed"] for m in ("bot-a", "bot-b")) == 3 + 3
    assert sum(rows[(m, 4)]["unparsed"] for m in ("bot-a", "bot-b")) == 3


def test_view_counts_all_unparsed_as_no_parsed_rate(make_config, pipeline, lake_dir):
    """Replies without an Index line all pass by the authors' rule; the parsed-only rate has nothing to count."""
    config = make_config(config_dict(lake_dir, limit=2, n=[4], models=[chatbot("bot-a")],
                                     judge_script=[VERDICT_GARBAGE]))
    pipeline(config)
    row = view(config)[("bot-a", 4)]
    assert (row["dialogues"], row["parseable"], row["unparsed"], row["passed"], row["unparsed_passed"],
            row["pass_rate"], row["pass_rate_parsed"]) == (2, 0, 2, 2, 2, 1.0, None)
    assert data_tests(open_lake(config.lake)) == {}


def test_view_uses_the_newest_judgment(make_config, pipeline, lake_dir):
    config = make_config(config_dict(lake_dir, limit=2, n=[4], models=[chatbot("bot-a")],
                                     judge_script=[VERDICT_GARBAGE]))
    pipeline(config)
    rejudged = make_config(config_dict(lake_dir, limit=2, n=[4], models=[chatbot("bot-a")], judge_script=[VERDICT_NO]))
    pipeline(rejudged, "run-2")
    row = view(rejudged)[("bot-a", 4)]
    assert (row["dialogues"], row["unparsed"], row["passed"], row["pass_rate"]) == (2, 0, 2, 1.0)


def test_data_tests_catch_a_broken_lake(make_config, pipeline):
    """The SQL data tests are not vacuous: a duplicated generation and a dangling judgment fail them (on a folder
    lake, whose files take a second row of a cell as written; a Delta lake stores a cell once by its key)."""
    import pyarrow as pa

    config = make_config(limit=2, n=[4], tables="files")
    pipeline(config)
    lake = open_lake(config.lake)
    assert data_tests(lake) == {}
    gens = generations(config)
    lake.write("generations", pa.Table.from_pylist(gens[:1], schema=GENERATIONS), partition={"model": "dup"})
    short = {**gens[1], "cell_key": "short", "utterances": gens[1]["utterances"][:3]}
    lake.write("generations", pa.Table.from_pylist([short], schema=GENERATIONS), partition={"model": "short"})
    dangling = {**judgments(config)[0], "cell_key": "dangling", "generation_key": "nowhere"}
    write_verdicts(lake, [dangling], judge="x")
    failing = data_tests(lake)
    assert failing == {"unique_generation_cells": 1, "generations_reach_target": 1, "judgments_have_generations": 1}


def test_runs_are_recorded_and_queryable(make_config, pipeline):
    config = make_config(limit=2, n=[4])
    pipeline(config, "run-1", record=True)
    pipeline(config, "run-2", record=True)
    with connect(open_lake(config.lake)) as con:
        rows = con.sql("select run_id, stage, planned, cached, computed, failed, config from runs "
                       "order by run_id, stage").fetchall()
    assert rows == [
        ("run-1", "botchat_unieval", 4, 0, 4, 0, "test.yaml"),
        ("run-1", "extract_seeds", 547, 0, 547, 0, "test.yaml"),
        ("run-1", "generate:bot-a", 2, 0, 2, 0, "test.yaml"),
        ("run-1", "generate:bot-b", 2, 0, 2, 0, "test.yaml"),
        ("run-2", "botchat_unieval", 4, 4, 0, 0, "test.yaml"),
        ("run-2", "extract_seeds", 547, 547, 0, 0, "test.yaml"),  # an unchanged dataset is cached
        ("run-2", "generate:bot-a", 2, 2, 0, 0, "test.yaml"),
        ("run-2", "generate:bot-b", 2, 2, 0, 0, "test.yaml"),
    ]
    with connect(open_lake(config.lake)) as con:
        detail = con.sql("select detail from runs where run_id = 'run-1' and stage = 'generate:bot-a'").fetchall()
    assert '"backend_calls": 2' in detail[0][0]


def test_selected_seeds_follow_file_order(make_config):
    config = make_config(limit=4)
    stages.extract_seeds(config)
    assert stages.selected_seeds(config, open_lake(config.lake)).column("seed_id").to_pylist() == ["MT-1", "MT-4", "MT-5", "MT-8"]


def test_leaderboard_after_returning_to_a_larger_n(make_config, pipeline):
    config8 = make_config(limit=2, n=[4, 8])
    pipeline(config8)
    pipeline(make_config(limit=2, n=[4]), "run-2")
    reports = pipeline(config8, "run-3")
    assert reports["unieval"].computed == 0
    assert all("pass@8" in row for row in registry.leaderboards(config8)["botchat"])
