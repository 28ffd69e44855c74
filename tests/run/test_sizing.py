"""`dialogbench plan`: what a run would compute, per stage and model, before it runs; nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialogbench.run import registry
from dialogbench.cli import main
from dialogbench.run.runs import record_stage
from dialogbench.run.sizing import size
from tests.conftest import chatbot
from tests.stage_runner import run, run_all


def _rows(config) -> dict[tuple[str, str], dict]:
    rows = size(config, registry.stages(config), registry.open_lake(config.lake))
    return {(r.stage, r.models): r.to_dict() for r in rows}


def test_a_run_s_cells_tokens_and_history(make_config, lake_dir):
    config = make_config(limit=3, n=[4, 8])  # two chatbots of max_tokens 64, a judge of 64
    run(config, "extract_seeds")
    before = _rows(config)
    generate = before[("generate:bot-a", "bot-a")]
    assert (generate["planned"], generate["cached"], generate["to_compute"]) == (3, 0, 3)
    assert generate["max_tokens"] == 3 * (8 - 2) * 64  # every utterance after the seed's two, at most 64 tokens
    # no history yet: the protocol's lengths, each utterance as long as the dataset's human ones (at most 64 tokens)
    assert generate["estimate"] == "protocol"
    utterances = [u for line in Path(config.botchat.dataset).read_text().splitlines() if line.strip()
                  for u in json.loads(line)["conv-GT"][2:]]
    typical = sum(min(64, len(u.split()) * 4 / 3) for u in utterances) / len(utterances)
    assert generate["expected_tokens"] == round(3 * (8 - 2) * typical) < generate["max_tokens"]
    unieval = before[("botchat_unieval", "judge")]
    assert unieval["estimate"] == "protocol" and 0 < unieval["expected_tokens"] < unieval["max_tokens"]  # examples
    # one verdict per dialogue (at the largest N), once it is generated: 3 seeds x 2 models
    assert unieval["to_compute"] == 0 and unieval["waiting"] == 6 and unieval["max_tokens"] == 6 * 64

    for report in run_all(config, "r1").values():  # recorded as the flow records them: the history
        record_stage(registry.open_lake(config.lake), run_id="r1", report=report, config="config.yaml")
    after = _rows(config)
    assert after[("generate:bot-a", "bot-a")]["cached"] == 3 and after[("generate:bot-a", "bot-a")]["to_compute"] == 0
    # every group of models carries its own counts (the judged model, for a judge's cells): not the first row alone
    unieval = {models: row for (stage, models), row in after.items() if stage == "botchat_unieval"}
    assert {m: (r["planned"], r["cached"], r["to_compute"]) for m, r in unieval.items()} == \
        {"bot-a": (3, 3, 0), "bot-b": (3, 3, 0)}

    grown = make_config(limit=5, n=[4, 8])  # two more seeds: their cells only, expected from the first run
    rows = _rows(grown)
    generate = rows[("generate:bot-a", "bot-a")]
    assert (generate["planned"], generate["cached"], generate["to_compute"]) == (5, 3, 2)
    lake = registry.open_lake(config.lake)
    calls = [c for c in lake.read("backend_calls").to_pylist() if c["stage"] == "generate:bot-a"]
    per_cell = sum(c["completion_tokens"] for c in calls) / 3
    assert generate["expected_tokens"] == round(2 * per_cell) > 0 and generate["estimate"] == "history"
    assert generate["expected_seconds"] is not None


def test_plan_prints_the_table_and_writes_json_without_writing_the_lake(config_file, lake_dir, tmp_path, capsys):
    path = config_file(models=[chatbot("bot-a")], limit=2, n=[4])
    assert main(["plan", "--config", str(path), "--json", str(tmp_path / "plan.json")]) == 0
    out = capsys.readouterr().out
    assert "to_compute" in out and "max_tokens" in out and any(line.startswith("total") for line in out.splitlines())
    # a fresh lake: BotChat's stages sized on the seeds extract_seeds would make (in a scratch lake, thrown away)
    assert "note: a fresh lake: the stages after extract_seeds are sized as if it had run" in out
    rows = json.loads((tmp_path / "plan.json").read_text())["rows"]
    assert {r["stage"] for r in rows} >= {"extract_seeds", "generate:bot-a", "botchat_unieval"}
    by_stage = {r["stage"]: r for r in rows}
    assert (by_stage["extract_seeds"]["to_compute"], by_stage["generate:bot-a"]["to_compute"]) == (547, 2)  # limit 2
    assert by_stage["generate:bot-a"]["max_tokens"] > 0
    assert by_stage["botchat_unieval"]["waiting"] == 2  # one verdict per dialogue, once it is generated
    assert not lake_dir.exists() or not any(lake_dir.rglob("*.parquet"))  # nothing computed, nothing written



def test_each_group_of_models_carries_its_own_counts(make_config, lake_dir):
    """A stage of several models is one row per model (a game's players together), each with its planned, cached,
    to-compute and waiting cells, where the first row used to hold the stage's: MT-Bench-101's judge, per judged
    model, waits for that model's answers only."""
    from tests.conftest import config_dict

    data = config_dict(lake_dir, models=[chatbot("bot-a"), chatbot("bot-b")])
    config = make_config({**data, "mtbench101": {"limit": 1, "tasks": ["CM"]}})
    turns = _rows(config)[("mtbench101_answer:bot-a", "bot-a")]["planned"]
    assert turns > 0
    run(config, "mtbench101_answer:bot-a")
    judge = {models: row for (stage, models), row in _rows(config).items() if stage == "mtbench101_judge"}
    assert {m: (r["planned"], r["cached"], r["to_compute"], r["waiting"]) for m, r in judge.items()} == \
        {"bot-a": (turns, 0, turns, 0), "bot-b": (turns, 0, 0, turns)}


def test_arena_and_gteval_verdicts_are_expected_as_long_as_the_authors_examples_choice_and_reason():
    config = registry.load_config(Path(__file__).resolve().parents[2] / "configs" / "nightly.yaml")
    examples = json.loads(Path(config.botchat.unieval_examples).read_text())
    for name in ("botchat_arena", "botchat_gteval"):
        stage = registry.stage(config, name)
        expected = sum(min(stage.judge.max_tokens, len(f"Choice: {ex['choice']}\nReason: {ex['reason'].strip()}".split())
                           * 4 / 3) for ex in examples) / len(examples)
        assert stage.typical_tokens_per_cell(config) == pytest.approx(expected)
        assert 0 < expected < stage.tokens_per_cell(config)  # an estimate, not the bound
