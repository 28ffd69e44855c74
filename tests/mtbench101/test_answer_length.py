"""MT-Bench-101 answers have a token limit of their own (``mtbench101.answer_max_tokens``, default 4096 as
OpenCompass, at most half the model's context window), keyed only when it is not the model's ``max_tokens``; every
answer records its limit, and those that reach it count as cut (``mtbench101_truncation``, the report, the CLI
leaderboard). Scripted models: a reply is cut at ``max_tokens`` words, its completion tokens its words."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from dialogbench.run import registry
from dialogbench.cells.keys import fingerprint, model_fingerprint
from dialogbench.lake.catalog import connect
from dialogbench.lake.schemas import PLANS
from dialogbench.mtbench101.answer_cells import ANSWER_VERSION, KEY_TAG, answer_key, item_fingerprint
from dialogbench.mtbench101.answer_stage import AnswerTurns
from dialogbench.mtbench101.config import answer_max_tokens
from dialogbench.mtbench101.judge_stage import JudgeTurns
from dialogbench.mtbench101.leaderboard import format_mtbench101
from dialogbench.mtbench101.tables import ANSWERS_TABLE, MTBENCH101_ANSWERS
from dialogbench.run.registry import open_lake
from dialogbench.report.build import render
from dialogbench.run.sizing import size
from tests import stage_runner as stages
from tests.conftest import chatbot, config_dict
from tests.mtbench101.test_stages import run_all, view

LONG = " ".join(f"w{i}" for i in range(300))  # a 300-word (300-token) reply
GR_TURNS, MR_TURNS = 3 + 4, 2 + 2  # the judged turns of the first two GR and MR dialogues


@pytest.fixture
def mt(make_config, lake_dir):
    def make(*, script=(LONG,), tasks=("GR", "MR"), bot: dict | None = None, **section):
        data = config_dict(lake_dir, models=[chatbot("bot-a", list(script), **(bot or {}))],
                           judge_script=["Rating: [[7]]"])
        data["mtbench101"] = {"enabled": True, "judge": "judge", "tasks": list(tasks), "limit": 2, **section}
        return make_config(data)

    return make


def answers(config) -> list[dict]:
    return open_lake(config.lake).read("mtbench101_answers").to_pylist()


def test_answers_get_their_own_limit_not_the_models_max_tokens(mt, scripted_calls):
    """Default 4096 (the window 8192 holds it): the model's max_tokens 64 no longer cuts the 300-word reply."""
    config = mt(bot={"max_tokens": 64, "context_window": 8192})
    model = config.model("bot-a")
    assert config.mtbench101.answer_max_tokens == 4096 and answer_max_tokens(config, model) == 4096
    run_all(config)
    assert [call.sampling.max_tokens for call in scripted_calls.of("bot-a")] == [4096]
    stored = answers(config)
    assert len(stored) == GR_TURNS + MR_TURNS
    assert {(a["answer"], a["completion_tokens"], a["max_tokens"]) for a in stored} == {(LONG, 300, 4096)}
    assert AnswerTurns(config, "bot-a").tokens_per_cell(config) == 4096  # what `dialogbench plan` sizes


@pytest.mark.parametrize(("window", "limit"), [(8192, 4096), (4096, 2048), (2048, 1024), (600, 300), (17, 8)])
def test_the_limit_is_clamped_to_half_the_context_window(mt, window, limit):
    config = mt(bot={"context_window": window})
    assert answer_max_tokens(config, config.model("bot-a")) == limit
    smaller = mt(bot={"context_window": window}, answer_max_tokens=5)
    assert answer_max_tokens(smaller, smaller.model("bot-a")) == 5  # a smaller limit is kept as it is
    own = mt(bot={"context_window": window, "max_tokens": 7}, answer_max_tokens=None)
    assert answer_max_tokens(own, own.model("bot-a")) == 7  # null: the model's max_tokens, unclamped as before


def test_clamped_answers_are_cut_at_half_the_window_and_the_prompt_keeps_the_rest(mt, scripted_calls):
    config = mt(bot={"context_window": 600})
    reports = run_all(config)
    assert {call.sampling.max_tokens for call in scripted_calls.of("bot-a")} == {300}
    stored = answers(config)
    assert {(a["completion_tokens"], a["max_tokens"]) for a in stored} == {(300, 300)}
    assert max(a["prompt_tokens"] for a in stored) <= 300  # the prompt fitted to what the answer leaves
    assert reports["bot-a"].detail["cut"] == GR_TURNS + MR_TURNS


def test_the_limit_is_in_the_answer_key_only_when_it_is_not_the_models_max_tokens(mt):
    """Null, or the model's own max_tokens: the key every answer had before (its cells stay cached); another limit:
    other cells (answered again, and judged again since a judgment's key holds its answer's)."""
    before = mt(bot={"max_tokens": 64}, answer_max_tokens=None)
    model, (dialogue, *_) = before.model("bot-a"), stages.selected_dialogues(before)
    old = fingerprint(KEY_TAG, ANSWER_VERSION, item_fingerprint(dialogue, 0), model_fingerprint(model), "golden")
    assert stages.plan(before, "mtbench101_answer:bot-a", "r0")[1].planned == GR_TURNS + MR_TURNS
    first = run_all(before)
    assert first["bot-a"].computed == GR_TURNS + MR_TURNS
    assert old in {a["cell_key"] for a in answers(before)}  # the key as the code before this field made it
    assert {a["max_tokens"] for a in answers(before)} == {64}

    same = mt(bot={"max_tokens": 64}, answer_max_tokens=64)
    again = run_all(same)
    assert (again["bot-a"].computed, again["bot-a"].cached, again["judge"].computed) == (0, GR_TURNS + MR_TURNS, 0)

    longer = mt(bot={"max_tokens": 64}, answer_max_tokens=128)
    after = run_all(longer)
    assert after["bot-a"].computed == after["judge"].computed == GR_TURNS + MR_TURNS
    assert answer_key(dialogue=dialogue, turn=0, model_fp=model_fingerprint(model), context="golden",
                      max_tokens=128) in {a["cell_key"] for a in answers(longer)}
    assert {a["max_tokens"] for a in answers(longer)} == {64, 128}
    # the default, clamped to 1024 by the default window (2048): yet other cells
    assert run_all(mt(bot={"max_tokens": 64}))["bot-a"].computed == GR_TURNS + MR_TURNS


def test_plan_sizes_the_answer_stage_by_its_limit(mt):
    config = mt(bot={"max_tokens": 64, "context_window": 8192}, answer_max_tokens=1000, judge_max_tokens=50)
    rows = {r.stage: r for r in size(config, registry.stages(config), open_lake(config.lake))}
    assert rows["mtbench101_answer:bot-a"].max_tokens == (GR_TURNS + MR_TURNS) * 1000
    assert JudgeTurns(config).tokens_per_cell(config) == 50  # judge_max_tokens, not the judge's max_tokens (64)
    assert rows["mtbench101_judge"].max_tokens == (GR_TURNS + MR_TURNS) * 50


def report_md(config) -> str:
    """The MT-Bench-101 section of the board's Markdown report (underscores unescaped)."""
    md = render(open_lake(config.lake), board=config.board, families=registry.families())["md"]
    return md.split("## MT-Bench-101")[1].split("\n## ")[0].replace("\\_", "_")


def truncation(config) -> dict[tuple[str, str], dict]:
    return {(r["model"], r["task"]): r for r in view(config, "mtbench101_truncation")}


def test_truncation_per_model_and_task_in_the_view_leaderboard_and_report(mt):
    """The old limit (the model's max_tokens 64) cuts every 300-word answer: the view counts them per task, the CLI
    leaderboard and the report say so. The default limit, 4096, cuts none: the current cells are the new ones."""
    cut = mt(bot={"max_tokens": 64}, answer_max_tokens=None, script=(LONG, "short answer"))
    run_all(cut)
    rows = truncation(cut)
    # the script alternates long and short replies over one batch, in dialogue then turn order: GR 4 long of 7
    assert {k: (r["answers"], r["truncated"], r["unknown_cap"], r["share"], r["max_tokens"]) for k, r in rows.items()} \
        == {("bot-a", "GR"): (7, 4, 0, pytest.approx(4 / 7, abs=1e-4), 64),
            ("bot-a", "MR"): (4, 2, 0, 0.5, 64)}
    assert [r["task"] for r in view(cut, "mtbench101_truncation")] == ["MR", "GR"]  # Table 3's order
    (row,) = registry.leaderboards(cut)["mtbench101"]
    assert (row["answers_cut"], row["answers_capped"], row["answer_max_tokens"]) == (6, 11, 64)
    printed = format_mtbench101([row])
    assert "cut answers: bot-a 6 of 11 (54.5%) reached max_tokens (64) and were cut there" in printed
    md = report_md(cut)
    assert "bot-a: 6 of 11 answers (54.5%) reached max_tokens = 64 and were cut there (by task: GR 4, MR 2)" in md
    assert "| Model | max_tokens | answers | cut | MR | GR |" in md  # only the tasks with answers (sized to what ran)
    assert "| bot-a | 64 | 11 | 6 / 11 ⚠ 54.5% | 2 / 4 ⚠ 50.0% | 4 / 7 ⚠ 57.1% |" in md

    full = mt(bot={"max_tokens": 64}, script=(LONG, "short answer"))  # the default: 1024 in the 2048 window
    run_all(full)
    assert {k: (r["truncated"], r["max_tokens"]) for k, r in truncation(full).items()} == {
        ("bot-a", "GR"): (0, 1024), ("bot-a", "MR"): (0, 1024)}
    (row,) = registry.leaderboards(full)["mtbench101"]
    assert row["answers_cut"] == 0 and "cut answers" not in format_mtbench101([row])
    md = report_md(full)
    assert "were cut there" not in md


def test_answers_stored_before_the_limit_was_recorded_are_unknown_never_cut(mt):
    """A current answer cell whose stored row lacks max_tokens (an older file) counts in unknown_cap."""
    config = mt()
    lake = open_lake(config.lake)
    lake.write("plans", pa.Table.from_pylist([{
        "run_id": "r-old", "stage": "mtbench101_answer:bot-a", "cell_key": "old", "item_id": "1:0", "model": "bot-a",
        "task": "GR", "roles": [("model", "bot-a")], "scope": ["bot-a"], "board": config.board,
        "created_at": dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)}], schema=PLANS),
        partition={"stage": "mtbench101_answer:bot-a", "run_id": "r-old"})
    older = pa.schema([f for f in MTBENCH101_ANSWERS if f.name != "max_tokens"])
    lake.write(ANSWERS_TABLE.name, pa.Table.from_pylist([{
        "cell_key": "old", "dialogue_id": "1", "task": "GR", "turn": 0, "context": "golden", "model": "bot-a",
        "answer": LONG, "completion_tokens": 300}], schema=older), partition={"context": "golden", "model": "bot-a"})
    (row,) = view(config, "mtbench101_truncation")
    assert (row["answers"], row["truncated"], row["unknown_cap"], row["share"], row["max_tokens"]) == (1, 0, 1, None,
                                                                                                       None)
    with connect(lake, board=config.board) as con:
        assert con.execute("select count(*) from mtbench101_answers where max_tokens is null").fetchone() == (1,)
