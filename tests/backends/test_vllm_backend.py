"""VLLMBackend against a fake ``vllm`` module (tests/fakes/fake_vllm.py)."""

from __future__ import annotations

import sys

import pytest

from dialogbench.backends.base import BackendError, Sampling
from dialogbench.backends.vllm_backend import VLLMBackend
from dialogbench.config import ModelConfig
from tests.fakes import fake_vllm

SYSTEM = {"role": "system", "content": "You are Alice."}


@pytest.fixture
def vllm(monkeypatch):
    fake_vllm.reset()
    monkeypatch.setitem(sys.modules, "vllm", fake_vllm)
    yield fake_vllm
    fake_vllm.reset()


def make(**overrides) -> ModelConfig:
    return ModelConfig(**{"name": "m", "backend": "vllm", "weights": "org/model", **overrides})


def conv(i: int) -> list[dict[str, str]]:
    return [SYSTEM, {"role": "user", "content": f"hello {i}"}]


def test_whole_batch_goes_to_one_chat_call(vllm):
    backend = VLLMBackend(make())
    results = backend.generate([conv(i) for i in range(5)], sampling=Sampling(max_tokens=8))
    (llm,) = vllm.LLM.instances
    assert len(llm.chat_calls) == 1
    messages, params, use_tqdm = llm.chat_calls[0]
    assert len(messages) == 5 and use_tqdm is False
    assert [r.text for r in results] == [f"reply {i} to: hello {i}" for i in range(5)]
    assert all(r.ok and r.completion_tokens == 5 and r.prompt_tokens > 0 for r in results)
    assert backend.stats.calls == 1 and backend.stats.per_call == [5] and backend.stats.conversations == 5
    assert backend.stats.completion_tokens == 25
    assert backend.stats.prompt_tokens == sum(r.prompt_tokens for r in results)


def test_sampling_params_built_from_sampling(vllm):
    backend = VLLMBackend(make())
    backend.generate([conv(0)], sampling=Sampling(temperature=0.7, top_p=0.9, max_tokens=33, seed=5))
    params = vllm.LLM.instances[0].chat_calls[0][1]
    assert params.kwargs == {"temperature": 0.7, "top_p": 0.9, "max_tokens": 33, "seed": 5}


def test_engine_kwargs_revision_and_seed_pass_through(vllm):
    VLLMBackend(make(revision="abc123", sampling={"seed": 7},
                     engine={"gpu_memory_utilization": 0.5, "max_model_len": 4096, "enforce_eager": True}))
    assert vllm.LLM.instances[0].init_kwargs == {
        "model": "org/model", "revision": "abc123", "seed": 7,
        "gpu_memory_utilization": 0.5, "max_model_len": 4096, "enforce_eager": True}


def test_gguf_file_is_passed_with_its_directory_as_tokenizer(vllm, tmp_path):
    (tmp_path / "model.Q4_K_M.gguf").write_bytes(b"GGUF")
    (tmp_path / "tokenizer_config.json").write_text("{}")
    VLLMBackend(make(weights=str(tmp_path / "model.Q4_K_M.gguf")))
    kwargs = vllm.LLM.instances[0].init_kwargs
    assert kwargs["model"] == str(tmp_path / "model.Q4_K_M.gguf")
    assert kwargs["tokenizer"] == str(tmp_path)


def test_missing_vllm_gives_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # makes ``import vllm`` raise ImportError
    with pytest.raises(BackendError, match=r"pip install '\.\[vllm\]'"):
        VLLMBackend(make())


def test_template_without_system_role_gets_merged_conversations(vllm):
    vllm.LLM.rejects_system = True
    backend = VLLMBackend(make())
    backend.generate([conv(0)], sampling=Sampling())
    (sent,) = vllm.LLM.instances[0].chat_calls[0][0]
    assert sent == [{"role": "user", "content": "You are Alice.\n\nhello 0"}]
    # count_tokens renders the same adapted conversation (a rejected system message would raise)
    assert backend.count_tokens(conv(0)) > 0


def test_template_without_leading_assistant_gets_filler(vllm):
    vllm.LLM.rejects_leading_assistant = True
    backend = VLLMBackend(make())
    conversation = [SYSTEM, {"role": "assistant", "content": "hi"}, {"role": "user", "content": "yo"}]
    backend.generate([conversation], sampling=Sampling())
    (sent,) = vllm.LLM.instances[0].chat_calls[0][0]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]


def test_explicit_native_skips_probing(vllm):
    vllm.LLM.rejects_system = True  # the config says native: we trust it and send the system message
    backend = VLLMBackend(make(chat_template={"system": "native", "leading_assistant": "native"}))
    backend.generate([conv(0)], sampling=Sampling())
    messages = vllm.LLM.instances[0].chat_calls[0][0]
    assert messages[0][0] == SYSTEM


def test_engine_failure_marks_every_item(vllm):
    vllm.LLM.fail_with = RuntimeError("CUDA out of memory")
    backend = VLLMBackend(make())
    results = backend.generate([conv(0), conv(1)], sampling=Sampling())
    assert [r.ok for r in results] == [False, False]
    assert all("CUDA out of memory" in r.error and r.text is None for r in results)
    assert backend.stats.calls == 1 and backend.stats.per_call == [2]


def test_count_tokens_uses_chat_template(vllm):
    backend = VLLMBackend(make())
    tokenizer = vllm.LLM.instances[0].get_tokenizer()
    expected = len(tokenizer.apply_chat_template(conv(3), tokenize=True, add_generation_prompt=True))
    assert backend.count_tokens(conv(3)) == expected


def test_seeds_give_one_sampling_params_per_conversation(vllm):
    backend = VLLMBackend(make())
    sampling = Sampling(temperature=0.7, top_p=0.9, max_tokens=33, seed=5)
    results = backend.generate([conv(i) for i in range(3)], sampling=sampling, seeds=[11, 12, 13])
    assert [r.text for r in results] == [f"reply {i} to: hello {i}" for i in range(3)]
    (call,) = vllm.LLM.instances[0].chat_calls
    messages, params, _ = call
    assert len(messages) == 3 and isinstance(params, list) and len(params) == 3
    # each conversation's own seed replaces sampling.seed; the rest is the call's sampling
    assert [p.kwargs for p in params] == [{"temperature": 0.7, "top_p": 0.9, "max_tokens": 33, "seed": s}
                                          for s in (11, 12, 13)]
    backend.generate([conv(0)], sampling=sampling)  # without seeds: one SamplingParams for the batch, as before
    assert vllm.LLM.instances[0].chat_calls[1][1].kwargs["seed"] == 5


@pytest.mark.parametrize("backend_name", ["vllm", "scripted"])
def test_seed_count_must_match_conversations(vllm, backend_name):
    from dialogbench.backends.scripted import ScriptedBackend

    backend = VLLMBackend(make()) if backend_name == "vllm" else ScriptedBackend(make(backend="scripted", script=["x"]))
    with pytest.raises(ValueError, match="3 seeds for 2 conversations"):
        backend.generate([conv(0), conv(1)], sampling=Sampling(temperature=1.0), seeds=[1, 2, 3])
    assert backend.stats.calls == 0
    # scripted replies are deterministic: seeds of the right length are accepted and ignored
    assert [r.ok for r in backend.generate([conv(0)], sampling=Sampling(), seeds=[4])] == [True]
