"""``generations.prompt_tokens``: the backend's prompt tokens of each generated utterance's call, aligned with
``completion_tokens``; an utterance kept from a prefix (or checkpoint) stored before the column has None."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from dialogbench.backends.scripted import ScriptedBackend
from dialogbench.botchat.generate_stage import STATE
from dialogbench.botchat.generation import build_messages
from dialogbench.botchat.tables import GENERATIONS
from dialogbench.run.registry import open_lake
from dialogbench.lake.catalog import data_tests
from tests.conftest import chatbot


def generations(config) -> list[dict]:
    return open_lake(config.lake).read("generations", GENERATIONS).to_pylist()


def prompt_of(config, utterances: list[str]) -> int:
    """What the scripted backend counts for the prompt that generates the next utterance (words + 4 a message)."""
    return ScriptedBackend(config.model("bot-a")).count_tokens(build_messages(utterances, config.botchat.system_prompt))


def test_each_utterance_keeps_the_prompt_tokens_of_its_call(make_config, pipeline):
    config = make_config(limit=2, n=[6], models=[chatbot("bot-a")])
    pipeline(config)
    rows = generations(config)
    assert len(rows) == 2
    for row in rows:
        utterances = row["utterances"]
        assert len(row["prompt_tokens"]) == len(row["completion_tokens"]) == 4
        assert row["prompt_tokens"] == [prompt_of(config, utterances[:k]) for k in range(2, 6)]
        assert row["prompt_tokens"][0] < row["prompt_tokens"][-1]  # the history grows
    assert data_tests(open_lake(config.lake)) == {}


def test_a_checkpoint_written_before_prompt_tokens_resumes_with_unknowns(make_config, pipeline, scripted_calls):
    config = make_config(limit=2, n=[8], models=[chatbot("bot-a")])

    def dies_on_call_4(backend, conversations, script):
        if backend.stats.calls == 3:
            raise RuntimeError("killed")
        return script(conversations)

    scripted_calls.instead = dies_on_call_4
    with pytest.raises(RuntimeError, match="killed"):
        pipeline(config)
    lake = open_lake(config.lake)
    [checkpoint] = lake.files(STATE)
    lake.write(STATE, pq.read_table(checkpoint).drop_columns(["prompt_tokens"]),
               partition={"stage": "botchat_generation"}, name=checkpoint.name)  # as an older version wrote it
    scripted_calls.instead = None
    pipeline(config, "run-2")
    for row in generations(config):
        utterances = row["utterances"]
        assert row["prompt_tokens"] == [None] * 3 + [prompt_of(config, utterances[:k]) for k in range(5, 8)]
        assert len(row["completion_tokens"]) == 6 and None not in row["completion_tokens"]
    assert data_tests(lake) == {}
