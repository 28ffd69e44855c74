"""BotChat Arena and GTEval end to end on scripted models and a scripted judge, through ``stages`` and
``comparison_stages`` (no Prefect): what is planned, cached and judged, and the SQL views counted by hand."""

from __future__ import annotations

import logging

import pyarrow as pa
import pytest

from dialogbench.backends import clear_backends
from tests import stage_runner as cs
from tests import stage_runner as stages
from dialogbench.run.registry import open_lake
from dialogbench.lake.catalog import connect, data_tests
from dialogbench.botchat.tables import GENERATIONS
from dialogbench.ratings.games import Games
from dialogbench.run.runs import sum_reports
from dialogbench.botchat.config import chatbots
from tests.conftest import JUDGE_SCRIPT, VERDICT_GARBAGE, VERDICT_NO, VERDICT_YES_3, VERDICT_YES_5, chatbot, config_dict
from tests.verdicts import verdicts, write_verdicts

C1, C2 = "Choice: Conversation 1\nReason: the first one rambles.", "Choice: Conversation 2; Reason: too formal."
BOTH, NEITHER = "**Choice:** Both\n**Reason:** both lecture.", "Choice: Neither\nReason: both natural."
GARBAGE = "Sure! A: I loved that film too.<chat_end>"
THREE = [chatbot("bot-a"), chatbot("bot-b"), chatbot("bot-c")]


def comparison_config(make_config, lake_dir, *, models=None, limit=2, arena=None, gteval=None, judge_script=None,
                      n=None, tables=None):
    return make_config(config_dict(lake_dir, models=models, limit=limit, n=n or [4], judge_script=judge_script,
                                   tables=tables,
                                   arena={"enabled": True, "n": [4], **(arena or {})},
                                   gteval={"enabled": True, **(gteval or {})}))


def generate(config, run_id: str = "run-1", models: list[str] | None = None) -> None:
    clear_backends()
    stages.extract_seeds(config)
    for name in models or [m.name for m in chatbots(config)]:
        stages.generate(config, name, run_id)


def judge(config, protocol: str, run_id: str = "run-1"):
    """Plan and judge one protocol; the judge's script starts afresh (so the replies' order is known)."""
    clear_backends()
    plan, run = {"arena": (cs.plan_arena, cs.judge_arena), "gteval": (cs.plan_gteval, cs.judge_gteval)}[protocol]
    chunks, planned = plan(config, run_id)
    return sum_reports([planned, *(run(config, chunk, run_id) for chunk in chunks)])


def judged(config, protocol: str) -> list[dict]:
    return verdicts(config.lake, protocol)


def view(config, sql: str) -> list[dict]:
    with connect(open_lake(config.lake)) as con:
        return con.sql(sql).to_arrow_table().to_pylist()


def counts(report) -> tuple[int, int, int, int]:
    return report.planned, report.cached, report.computed, report.failed


def test_comparison_seeds_are_the_222_with_four_or_more_utterances(make_config):
    config = make_config(limit=None)
    stages.extract_seeds(config)
    assert cs.comparison_seeds(config, open_lake(config.lake), min_human_utterances=4, limit=None).num_rows == 222
    small = make_config(limit=30)  # the first 30 seeds include MT-74 and MT-81 (3 utterances each)
    ids = cs.comparison_seeds(small, open_lake(small.lake), min_human_utterances=4, limit=None).column("seed_id").to_pylist()
    assert len(ids) == 28 and "MT-74" not in ids and "MT-81" not in ids
    assert cs.comparison_seeds(small, open_lake(small.lake), min_human_utterances=4, limit=3).column("seed_id").to_pylist() == ids[:3]


def test_arena_plans_both_orders_of_every_pair(make_config, lake_dir, backend_calls):
    config = comparison_config(make_config, lake_dir, models=THREE, judge_script=[C1])
    generate(config)
    report = judge(config, "arena")
    assert counts(report) == (12, 0, 12, 0)  # 3 pairs x 2 seeds x 2 orders
    assert backend_calls["judge"] == [12]  # one chunk, one call
    rows = judged(config, "botchat_arena")
    assert len({r["cell_key"] for r in rows}) == 12
    shown = sorted((r["item_id"], r["model"], r["opponent"]) for r in rows)
    assert shown == sorted((item, a, b) for item in ("MT-1", "MT-4") for a in ("bot-a", "bot-b", "bot-c")
                           for b in ("bot-a", "bot-b", "bot-c") if a != b)
    gens = {g["cell_key"]: g for g in open_lake(config.lake).read("generations", GENERATIONS).to_pylist()}
    for r in rows:
        assert (gens[r["generation_key"]]["model"], gens[r["opponent_generation_key"]]["model"]) == (r["model"], r["opponent"])
        assert r["position"] == 1 and r["n_judged"] == 4
        assert (r["verdict"], r["winner"]) == ("conversation_1", "model_b")
    assert data_tests(open_lake(config.lake)) == {}


def test_listed_pairs_only(make_config, lake_dir):
    config = comparison_config(make_config, lake_dir, models=THREE, judge_script=[C2],
                               arena={"pairs": [["bot-c", "bot-a"]]})
    generate(config)
    assert counts(judge(config, "arena")) == (4, 0, 4, 0)
    assert {(r["model"], r["opponent"]) for r in judged(config, "botchat_arena")} == {("bot-c", "bot-a"), ("bot-a", "bot-c")}


def test_missing_dialogues_skip_the_seed_and_are_counted(make_config, lake_dir, caplog):
    """bot-b has dialogues for 2 seeds, bot-a for 3: only the 2 common seeds are compared."""
    generate(comparison_config(make_config, lake_dir, limit=2))
    config = comparison_config(make_config, lake_dir, limit=3)
    generate(config, "run-2", models=["bot-a"])
    with caplog.at_level(logging.INFO, logger="dialogbench"):
        report = judge(config, "arena", "run-2")
    # the skipped seed's two cells (both orders) are planned but blocked: bot-b's dialogue is missing
    assert counts(report) == (6, 0, 4, 0) and report.blocked == 2
    assert report.detail["skipped"] == {"bot-a vs bot-b @ N=4": 1}
    assert "pair bot-a vs bot-b: 2 seeds compared, 1 skipped (missing dialogues)" in caplog.text
    assert {r["item_id"] for r in judged(config, "botchat_arena")} == {"MT-1", "MT-4"}
    report = judge(config, "gteval", "run-2")
    # bot-a 3 seeds, bot-b 2, both orders; bot-b's third seed (2 cells) is blocked on its missing dialogue
    assert counts(report) == (12, 0, 10, 0) and report.blocked == 2
    assert report.detail["skipped"] == {"bot-a": 0, "bot-b": 1}
    assert data_tests(open_lake(config.lake)) == {}


def test_adding_a_model_judges_only_its_comparisons(make_config, lake_dir, backend_calls):
    two = comparison_config(make_config, lake_dir, judge_script=[C1, NEITHER])
    generate(two)
    judge(two, "arena"), judge(two, "gteval")
    three = comparison_config(make_config, lake_dir, models=THREE, judge_script=[C1, NEITHER])
    generate(three, "run-2")
    backend_calls.clear()
    assert counts(judge(three, "arena", "run-2")) == (12, 4, 8, 0)
    assert counts(judge(three, "gteval", "run-2")) == (12, 8, 4, 0)
    assert backend_calls == {"judge": [8, 4]}  # only the comparisons involving bot-c
    new = [r for r in judged(three, "botchat_arena") if r["run_id"] == "run-2"]
    assert all("bot-c" in (r["model"], r["opponent"]) for r in new)
    assert {r["model"] for r in judged(three, "botchat_gteval") if r["run_id"] == "run-2"} == {"bot-c"}
    # a second identical run calls no one
    backend_calls.clear()
    assert counts(judge(three, "arena", "run-3")) == (12, 12, 0, 0)
    assert counts(judge(three, "gteval", "run-3")) == (12, 12, 0, 0)
    assert backend_calls == {}
    assert len(view(three, "select * from botchat_arena")) == 12
    assert data_tests(open_lake(three.lake)) == {}


def test_arena_views_by_hand(make_config, lake_dir):
    """12 cells in plan order: per pair (a, b) and seed, a first then b first. The script gives
    pair (a, b) and (b, c): C2, C1 (seed 1: the first-listed model wins in both orders), Neither,
    garbage (seed 2: a tie and an unparsed); pair (a, c): C1, C1 (seed 1: a flip), Both, Both."""
    script = [C2, C1, NEITHER, GARBAGE, C1, C1, BOTH, BOTH]
    config = comparison_config(make_config, lake_dir, models=THREE, judge_script=script)
    generate(config)
    assert judge(config, "arena").detail["unparsed"] == 2
    rows = view(config, "select * from botchat_arena")
    assert len(rows) == 12
    assert sum(not r["parsed"] for r in rows) == 2
    assert all((r["winner"] is None) == (not r["parsed"]) for r in rows)  # unparsed is never a tie
    rates = {(r["model_a"], r["model_b"]): r for r in view(config, "select * from botchat_pair_rates")}
    got = {pair: (r["n"], r["games"], r["wins_a"], r["wins_b"], r["ties"], r["unparsed"]) for pair, r in rates.items()}
    assert got == {("bot-a", "bot-b"): (4, 3, 2, 0, 1, 1), ("bot-a", "bot-c"): (4, 4, 1, 1, 2, 0),
                   ("bot-b", "bot-c"): (4, 3, 2, 0, 1, 1)}
    assert rates[("bot-a", "bot-b")]["win_rate_a"] == pytest.approx(0.6667)
    assert rates[("bot-a", "bot-c")]["tie_rate"] == pytest.approx(0.5)
    [reliability] = view(config, "select * from judge_reliability where protocol = 'botchat_arena'")
    assert (reliability["comparisons"], reliability["unparsed"], reliability["pairs_both_orders"],
            reliability["flips"]) == (12, 2, 4, 1)
    assert reliability["unparsed_rate"] == pytest.approx(0.1667) and reliability["flip_rate"] == pytest.approx(0.25)
    # the parsed rows are the input of `dialogbench elo`
    parsed = view(config, "select model_a, model_b, winner from botchat_arena where parsed")
    games = Games.from_records([r["model_a"] for r in parsed], [r["model_b"] for r in parsed],
                               [r["winner"] for r in parsed])
    assert len(games) == 10
    assert data_tests(open_lake(config.lake)) == {}


def test_gteval_views_by_hand(make_config, lake_dir):
    """One model, 3 seeds, cells (seed, model first), (seed, human first): seed 1 C2 (human is AI:
    win), C2 (model is AI: lose) -> a flip; seed 2 Both (tie), garbage (unparsed); seed 3 C1, C2:
    lose twice."""
    script = [C2, C2, BOTH, GARBAGE, C1, C2]
    config = comparison_config(make_config, lake_dir, models=[chatbot("bot-a")], limit=3, judge_script=script)
    generate(config)
    assert counts(judge(config, "gteval")) == (6, 0, 6, 0)
    [row] = view(config, "select * from botchat_gteval")
    assert (row["model"], row["comparisons"], row["win"], row["tie"], row["lose"], row["unparsed"]) == \
           ("bot-a", 6, 1, 1, 3, 1)
    # the authors' rule (analyze.py counts 'unknown' in every rate's denominator): 2 / 6, not 2 / 5
    assert row["win_tie_rate"] == pytest.approx(0.3333)
    assert row["win_tie_rate_parsed"] == pytest.approx(0.4)
    [reliability] = view(config, "select * from judge_reliability where protocol = 'botchat_gteval'")
    assert (reliability["comparisons"], reliability["unparsed"], reliability["pairs_both_orders"],
            reliability["flips"], reliability["flip_rate"]) == (6, 1, 2, 1, 0.5)
    assert reliability["opencompass_differs"] is None
    assert all(r["opponent"] == "human" and r["opponent_generation_key"] is None
               for r in judged(config, "botchat_gteval"))
    assert data_tests(open_lake(config.lake)) == {}


def test_gteval_cuts_both_sides_to_the_human_length(make_config, lake_dir, scripted_calls):
    """Dialogues generated to 6; MT-1 has 4 human utterances, MT-4 7, MT-5 5: L = 4, 6, 5."""
    config = comparison_config(make_config, lake_dir, models=[chatbot("bot-a")], limit=3, n=[6],
                               arena={"n": [6]}, judge_script=[C1])
    generate(config)
    scripted_calls.clear()
    judge(config, "gteval")
    prompts = [c[0]["content"] for call in scripted_calls.calls for c in call.conversations]
    seeds = {s["seed_id"]: s["dialogue"] for s in open_lake(config.lake).read("seeds").to_pylist()}
    gens = {g["item_id"]: g["utterances"] for g in open_lake(config.lake).read("generations", GENERATIONS).to_pylist()}
    rows = judged(config, "botchat_gteval")
    assert {(r["item_id"], r["n_judged"]) for r in rows} == {("MT-1", 4), ("MT-4", 6), ("MT-5", 5)}
    assert len(prompts) == 6
    for prompt, (item, position) in zip(prompts, [(i, p) for i in ("MT-1", "MT-4", "MT-5") for p in (1, 2)]):
        length = {"MT-1": 4, "MT-4": 6, "MT-5": 5}[item]
        first, second = prompt.split("Conversation 1:\n", 1)[1].split("Conversation 2:\n", 1)
        sides = (gens[item], seeds[item]) if position == 1 else (seeds[item], gens[item])
        for shown, full in zip((first, second), sides):
            assert shown.count("<chat_end>") == length
            assert all(f": {u}<chat_end>" in shown for u in full[:length])
            assert not any(f": {u}<chat_end>" in prompt for u in full[length:])  # nothing past L, either side


def test_unieval_pass_rate_at_the_human_length_by_hand(make_config, pipeline, lake_dir):
    """UniEval judged on 6 utterances; of the first 4 seeds MT-1 (L=4) and MT-5 (L=5) are counted,
    MT-4 (L=7) and MT-8 (L=11) are longer than what was judged."""
    config = make_config(config_dict(lake_dir, limit=4, n=[6], judge_script=JUDGE_SCRIPT))
    pipeline(config)
    human = {"MT-1": 4, "MT-5": 5}
    expected = {}
    for j in verdicts(config.lake, "botchat_unieval"):
        if j["item_id"] not in human:
            continue
        length = human[j["item_id"]]
        # the garbage reply has no Index line: unparsed, and a pass by the authors' rule
        passed = {VERDICT_YES_5: 5 > length, VERDICT_NO: True, VERDICT_GARBAGE: None, VERDICT_YES_3: False}[j["raw_output"]]
        row = expected.setdefault(j["model"], [0, 0, 0])
        row[0] += 1
        row[1] += passed is not False
        row[2] += passed is None
    rows = {r["model"]: r for r in view(config, "select * from botchat_unieval_gt")}
    assert {m: [r["dialogues"], r["passed"], r["unparsed"]] for m, r in rows.items()} == expected
    for model, (dialogues, passed, unparsed) in expected.items():
        assert rows[model]["unparsed_passed"] == unparsed
        assert rows[model]["pass_rate"] == pytest.approx(round(passed / dialogues, 4))
        parsed_rate = rows[model]["pass_rate_parsed"]
        assert parsed_rate == (pytest.approx(round((passed - unparsed) / (dialogues - unparsed), 4))
                               if dialogues > unparsed else None)
    assert sum(r[0] for r in expected.values()) == 4


def test_views_exist_and_are_empty_before_any_run(lake_dir):
    with connect(open_lake(lake_dir)) as con:
        for name in ("botchat_arena", "botchat_pair_rates", "botchat_gteval", "botchat_unieval_gt", "judge_reliability"):
            assert con.sql(f"select * from {name}").fetchall() == []


def test_data_tests_catch_broken_comparisons(make_config, lake_dir):
    # a folder lake: its files take a forged row as written (a Delta lake stores a cell once by its key)
    config = comparison_config(make_config, lake_dir, judge_script=[C1], tables="files")
    generate(config)
    judge(config, "arena")
    lake = open_lake(config.lake)
    assert data_tests(lake) == {}
    row = judged(config, "botchat_arena")[0]
    tie_for_garbage = {**row, "cell_key": "bad-1", "parsed": False, "verdict": None, "winner": "tie"}
    write_verdicts(lake, [tie_for_garbage], judge="x")
    plans = lake.read("plans").to_pylist()
    lonely = [{**p, "cell_key": "bad-2", "model": None, "roles": [("first", "bot-a"), ("second", "ghost")],
               "scope": ["bot-a", "ghost"], "run_id": "run-9"} for p in plans[:1]]
    lake.write("plans", pa.Table.from_pylist(lonely, schema=lake.read("plans").schema), partition={"stage": "x"})
    write_verdicts(lake, [{**row, "cell_key": "bad-2", "opponent": "ghost"}], judge="y")
    assert data_tests(lake) == {"pairwise_winner_iff_parsed": 1, "arena_mirror_planned": 1}
