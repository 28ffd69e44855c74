"""The ``stored_usage`` view: calls and prompt / completion tokens per (model, role, protocol), built through the real
stages with scripted backends and checked against what the backends returned: BotChat generations, UniEval / Arena /
GTEval verdicts, MT-Bench-101 answers and verdicts, GameEval moves. Rows written before a count was stored (BotChat
prompt tokens, GameEval per-move counts) are counted in ``calls_without_counts``, never as zero tokens."""

from __future__ import annotations

import json
from collections import defaultdict

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dialogbench.backends import clear_backends
from dialogbench.gameeval.tables import GAMEEVAL_GAMES
from dialogbench.run.registry import open_lake
from dialogbench.lake.catalog import connect, data_tests
from dialogbench.run.runs import sum_reports
from dialogbench.botchat.config import chatbots
from tests import stage_runner as stages
from tests.conftest import ScriptedCalls, chatbot, config_dict

MOVE = json.dumps({"thought": "t", "speak": "a thing", "name": "player1", "question": 2, "ask": "player2"})
JUDGE_PROTOCOLS = ("botchat_unieval", "botchat_arena", "botchat_gteval", "mtbench101_judge")


def spent(calls: ScriptedCalls) -> dict[str, list[tuple[int, int]]]:
    """Every scripted completion so far, as {model: [(prompt_tokens, completion_tokens), …]}."""
    found: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for call in calls.calls:
        found[call.model] += [(r.prompt_tokens, r.completion_tokens) for r in call.completions or []]
    return found


def usage_config(make_config, lake_dir, *, n=(4,), tables=None):
    data = config_dict(lake_dir, models=[chatbot("bot-a", [MOVE]), chatbot("bot-b", [MOVE])], n=list(n), limit=2,
                       arena={"enabled": True, "n": [4]}, gteval={"enabled": True}, tables=tables)
    data["mtbench101"] = {"enabled": True, "judge": "judge", "tasks": ["GR"], "limit": 1}
    data["gameeval"] = {"enabled": True, "spyfall": {"limit": 1, "max_rounds": 2}}
    return make_config(data)


def generate(config, run_id: str) -> None:
    clear_backends()
    stages.extract_seeds(config)
    for model in chatbots(config):
        stages.generate(config, model.name, run_id)


def judge(config, protocol: str, run_id: str):
    clear_backends()
    chunks, planned = stages.plan(config, protocol, run_id)
    return sum_reports([planned, *(stages.compute(config, chunk, run_id) for chunk in chunks)])


def usage(config) -> dict[tuple[str, str, str], dict]:
    with connect(open_lake(config.lake)) as con:
        return {(r["model"], r["role"], r["protocol"]): r for r in con.sql("select * from stored_usage").to_arrow_table().to_pylist()}


def test_usage_is_what_the_backends_returned_for_every_protocol(make_config, lake_dir, scripted_calls):
    config = usage_config(make_config, lake_dir)
    generate(config, "run-1")
    judged = {p: judge(config, p, "run-1").computed for p in ("botchat_unieval", "botchat_arena", "botchat_gteval")}
    for model in ("bot-a", "bot-b"):
        stages.answer(config, model, "run-1")
    judged["mtbench101_judge"] = judge(config, "mtbench101_judge", "run-1").computed
    stages.run_game(config, "spyfall", "run-1")

    rows = usage(config)
    assert set(rows) == {(m, "chatbot", p) for m in ("bot-a", "bot-b") for p in ("botchat", "mtbench101")} | \
        {(m, "player", "gameeval_spyfall") for m in ("bot-a", "bot-b")} | {("judge", "judge", p) for p in JUDGE_PROTOCOLS}
    # every call the backends answered is counted once, with its own counts, under its model
    for model, calls in spent(scripted_calls).items():
        mine = [r for (m, _, _), r in rows.items() if m == model]
        assert sum(r["calls"] for r in mine) == len(calls)
        assert sum(r["prompt_tokens"] for r in mine) == sum(p for p, _ in calls) > 0
        assert sum(r["completion_tokens"] for r in mine) == sum(c for _, c in calls) > 0
    assert all(r["calls_without_counts"] == 0 for r in rows.values())
    # … and under its protocol
    assert {p: rows[("judge", "judge", p)]["calls"] for p in JUDGE_PROTOCOLS} == judged
    assert all(judged.values())
    for model in ("bot-a", "bot-b"):
        assert rows[(model, "chatbot", "botchat")]["calls"] == 2 * 2    # 2 seeds, utterances 3 and 4
        assert rows[(model, "chatbot", "mtbench101")]["calls"] == 3     # GR dialogue 1: 3 judged turns
    with connect(open_lake(config.lake)) as con:
        judge_tokens = dict(((p, kind), n) for p, kind, n in con.sql(
            "select protocol, 'prompt', sum(prompt_tokens) from judgments group by all union all "
            "select protocol, 'completion', sum(completion_tokens) from judgments group by all").fetchall())
        moves = dict(con.sql("select model, count(*) from gameeval_transcripts where model is not null "
                             "group by all").fetchall())
    for p in JUDGE_PROTOCOLS:
        row = rows[("judge", "judge", p)]
        assert (row["prompt_tokens"], row["completion_tokens"]) == (judge_tokens[(p, "prompt")],
                                                                     judge_tokens[(p, "completion")])
    assert {m: rows[(m, "player", "gameeval_spyfall")]["calls"] for m in ("bot-a", "bot-b")} == moves
    assert data_tests(open_lake(config.lake)) == {}


def test_rows_written_before_the_counts_were_kept(make_config, lake_dir, scripted_calls):
    """Dialogues generated to N = 4 by a version that kept no prompt tokens, extended to 8 by this one: each
    utterance counts once (the longest row), the four old ones in calls_without_counts, their completion tokens still
    summed. A game row without per-move counts: its moves are calls without counts."""
    generate(usage_config(make_config, lake_dir, n=(4,), tables="files"), "run-1")
    lake = open_lake(lake_dir)
    for path in lake.files("generations"):  # rewritten in place as an older version wrote them (a folder lake's files)
        partition = dict(d.name.split("=", 1) for d in (path.parent.parent, path.parent))
        lake.write("generations", pq.read_table(path).drop_columns(["prompt_tokens"]), partition=partition,
                   name=path.name)
    assert "prompt_tokens" not in pq.read_schema(lake.files("generations")[0]).names
    first = spent(scripted_calls)
    config = usage_config(make_config, lake_dir, n=(4, 8), tables="files")
    generate(config, "run-2")

    rows, every = usage(config), spent(scripted_calls)
    for model in ("bot-a", "bot-b"):
        row, before, after = rows[(model, "chatbot", "botchat")], first[model], every[model][len(first[model]):]
        assert (len(before), len(after)) == (4, 8)
        assert (row["calls"], row["calls_without_counts"]) == (12, 4)
        assert row["prompt_tokens"] == sum(p for p, _ in after)   # the old utterances' prompts are unknown
        assert row["completion_tokens"] == sum(c for _, c in before + after)
    with connect(open_lake(config.lake)) as con:
        extended = con.sql("select prompt_tokens from generations where n_target = 8").fetchall()
    assert len(extended) == 4 and all(p[:2] == [None, None] and None not in p[2:] for (p,) in extended)

    game = {"cell_key": "old-game", "game": "spyfall", "game_version": "1", "item_id": "x/0", "item": "", "setting":
            "default", "trial": 0, "seed": 1, "assignment": [("spy", "bot-a"), ("villager", "bot-b")],
            "end_reason": "rules", "finished": True, "prompt_tokens": 50, "completion_tokens": 5, "transcript": [
                {"step": 0, "round": 0, "speaker": "host", "role": "host", "kind": "announce", "text": "go"},
                {"step": 0, "round": 1, "speaker": "player1", "role": "spy", "model": "bot-a", "kind": "describe"},
                {"step": 1, "round": 1, "speaker": "player2", "role": "villager", "model": "bot-b", "kind": "describe"},
                {"step": 2, "round": 1, "speaker": "player3", "role": "villager", "model": "bot-b", "kind": "describe"}]}
    older = pa.schema([f for f in GAMEEVAL_GAMES if not f.name.startswith("move_")])
    open_lake(config.lake).write("gameeval_games", pa.Table.from_pylist([game], schema=older), partition={"game": "spyfall"})
    rows = usage(config)
    assert {m: (rows[(m, "player", "gameeval_spyfall")]["calls"], rows[(m, "player", "gameeval_spyfall")]
                ["calls_without_counts"], rows[(m, "player", "gameeval_spyfall")]["prompt_tokens"])
            for m in ("bot-a", "bot-b")} == {"bot-a": (1, 1, None), "bot-b": (2, 2, None)}
    assert data_tests(open_lake(config.lake)) == {}


def test_usage_per_run_is_every_backend_call_with_its_seconds_and_cost(make_config, lake_dir, scripted_calls):
    """``usage``: what each run's backend calls cost per (model, role, stage), from the calls themselves (every call
    of a chunk, failed conversations included), with their wall time and, for a model with prices, the cost."""
    data = config_dict(lake_dir, models=[chatbot("bot-a", ["hi", "!error:HTTP 503"]), chatbot("bot-b")], n=[4],
                       limit=3)
    data["judges"][0]["prices"] = {"prompt_per_million": 2.0, "completion_per_million": 10.0}
    data["judges"][0]["script_delay_s"] = 0.05
    config = make_config(data)
    generate(config, "run-1")
    judge(config, "botchat_unieval", "run-1")
    with connect(open_lake(config.lake)) as con:
        rows = {(r["model"], r["role"], r["stage"]): r for r in
                con.sql("select * from usage where run_id = 'run-1'").to_arrow_table().to_pylist()}
    assert set(rows) == {("bot-a", "chatbot", "generate:bot-a"), ("bot-b", "chatbot", "generate:bot-b"),
                         ("judge", "judge", "botchat_unieval")}
    returned = spent(scripted_calls)
    for model in ("bot-a", "bot-b", "judge"):
        (row,) = [r for (m, _, _), r in rows.items() if m == model]
        assert row["conversations"] == len(returned[model])  # every conversation sent, failed ones too
        assert row["prompt_tokens"] == sum(p for p, _ in returned[model])
        assert row["completion_tokens"] == sum(c for _, c in returned[model])
        assert row["board"] == config.board
    assert rows[("bot-a", "chatbot", "generate:bot-a")]["failed"] > 0
    judged = rows[("judge", "judge", "botchat_unieval")]
    assert judged["batches"] == 1 and judged["seconds"] >= 0.05
    assert judged["cost"] == pytest.approx((judged["prompt_tokens"] * 2.0 + judged["completion_tokens"] * 10.0) / 1e6)
    assert rows[("bot-b", "chatbot", "generate:bot-b")]["cost"] is None  # no prices: no cost, never zero
