"""Algorithm 1, batched: roles, context fitting, one backend call per step for every dialogue."""

from __future__ import annotations

import pytest

from dialogbench.backends import get_backend
from dialogbench.backends.base import Sampling
from dialogbench.backends.chat_format import adapt_conversation, probe_template
from dialogbench.botchat.generation import DialogueState, build_messages, dialogue_fit, generate_dialogues
from dialogbench.run.config import ModelConfig
from dialogbench.episodes import fit_prompt

SEED = ["You look rather pale. Are you feeling well?", "Not very. I was sick most of the night."]


def scripted(script: list[str], **extra) -> tuple:
    model = ModelConfig(name="bot", backend="scripted", script=script, **extra)
    return get_backend(model), Sampling(max_tokens=model.max_tokens)


def states(count: int, n_target: int) -> list[DialogueState]:
    return [DialogueState(f"d{i}", [f"seed {i} first", f"seed {i} second"], n_target) for i in range(count)]


def roles(messages) -> list[str]:
    return [m["role"] for m in messages]


# build_messages ---------------------------------------------------------------------------------

def test_roles_odd_length_start_with_user():
    messages = build_messages(["u1", "u2", "u3"], "be human")
    assert messages[0] == {"role": "system", "content": "be human"}
    assert roles(messages) == ["system", "user", "assistant", "user"]
    assert [m["content"] for m in messages[1:]] == ["u1", "u2", "u3"]


def test_roles_even_length_start_with_assistant():
    messages = build_messages(["u1", "u2", "u3", "u4"], "be human")
    assert roles(messages) == ["system", "assistant", "user", "assistant", "user"]


@pytest.mark.parametrize("length", range(1, 9))
def test_newest_is_always_user_and_roles_alternate(length):
    messages = build_messages([f"u{i}" for i in range(length)], None)
    assert roles(messages)[-1] == "user"
    assert all(a["role"] != b["role"] for a, b in zip(messages, messages[1:]))
    assert "system" not in roles(messages)


# fitting a dialogue (the one fitter, with the dialogue's rule) -----------------------------------

def words(conversation) -> int:
    return sum(len(m["content"].split()) for m in conversation)


def fit_context(utterances, *, system_prompt, count_tokens, budget):
    messages, drops = fit_prompt(build_messages(utterances, system_prompt), fit=dialogue_fit(system_prompt),
                                 count_tokens=count_tokens, budget=budget)
    assert messages == build_messages(utterances[drops:], system_prompt)  # roles as if rebuilt from the kept ones
    return messages, drops > 0


def test_fit_context_keeps_everything_under_budget():
    utterances = ["one two", "three four", "five six"]
    messages, trimmed = fit_context(utterances, system_prompt="sys", count_tokens=words, budget=100)
    assert not trimmed
    assert messages == build_messages(utterances, "sys")


def test_fit_context_drops_oldest_first():
    utterances = ["a " * 10, "b " * 10, "c " * 10, "d " * 10, "e " * 10]  # 10 words each
    messages, trimmed = fit_context(utterances, system_prompt="sys", count_tokens=words, budget=31)
    assert trimmed
    assert [m["content"] for m in messages[1:]] == utterances[-3:]  # 1 + 30 words fit, 41 do not
    assert roles(messages) == ["system", "user", "assistant", "user"]
    assert words(messages) <= 31


def test_fit_context_drop_changes_parity_but_newest_stays_user():
    utterances = [f"w{i} " * 5 for i in range(6)]
    messages, trimmed = fit_context(utterances, system_prompt=None, count_tokens=words, budget=10)
    assert trimmed
    assert [m["content"] for m in messages] == utterances[-2:]
    assert roles(messages) == ["assistant", "user"]


def test_fit_context_never_drops_the_newest():
    utterances = ["old " * 50, "new " * 50]
    messages, trimmed = fit_context(utterances, system_prompt="sys", count_tokens=words, budget=1)
    assert trimmed
    assert messages == [{"role": "system", "content": "sys"}, {"role": "user", "content": utterances[-1]}]


# step_dialogues / generate_dialogues --------------------------------------------------------------

def test_one_backend_call_per_step_for_all_dialogues():
    backend, sampling = scripted(["reply {n}"])
    batch = states(5, 3)
    seen = []
    generate_dialogues(batch, backend=backend, sampling=sampling, system_prompt="sys", context_window=2048,
                       on_step=lambda step, st: seen.append(step))
    assert seen == [1]
    assert backend.stats.calls == 1
    assert backend.stats.per_call == [5]
    for state in batch:
        assert state.utterances[-1] == "reply 2"  # it saw the 2 seed utterances (system excluded)
        assert len(state.utterances) == 3


def test_finished_dialogues_are_not_stepped():
    backend, sampling = scripted(["r"])
    batch = states(3, 4) + [DialogueState("done", ["a", "b", "c", "d"], 4)]
    generate_dialogues(batch, backend=backend, sampling=sampling, system_prompt=None, context_window=2048)
    assert backend.stats.per_call == [3, 3]
    assert batch[-1].utterances == ["a", "b", "c", "d"]
    seen = []
    generate_dialogues([batch[-1]], backend=backend, sampling=sampling, system_prompt=None, context_window=2048,
                       on_step=lambda step, st: seen.append(step))
    assert backend.stats.calls == 2 and seen == []


@pytest.mark.parametrize("count", [3, 7])
@pytest.mark.parametrize("n_target", [3, 4, 8])
def test_generating_to_n_takes_n_minus_2_calls(count, n_target):
    backend, sampling = scripted(["reply {n}"])
    batch = states(count, n_target)
    seen = []
    generate_dialogues(batch, backend=backend, sampling=sampling, system_prompt="sys", context_window=2048,
                       on_step=lambda step, st: seen.append((step, sum(s.done for s in st))))
    assert backend.stats.calls == n_target - 2
    assert backend.stats.per_call == [count] * (n_target - 2)
    assert seen[-1] == (n_target - 2, count)
    for state in batch:
        assert len(state.utterances) == n_target
        # each generated utterance saw every previous one (no trimming in a big window)
        assert state.utterances[2:] == [f"reply {k}" for k in range(2, n_target)]
        assert state.completion_tokens == [2] * (n_target - 2)
        assert state.error is None and state.trimmed_steps == 0


def test_failed_completion_marks_only_that_dialogue():
    # 7 replies: step 1 uses replies 0-2 (the 2nd fails), steps 2 and 3 use 3-4 and 5-6 (all fine)
    backend, sampling = scripted(["ok", "!error:server said no", "ok", "ok", "ok", "ok", "ok"])
    batch = states(3, 5)
    generate_dialogues(batch, backend=backend, sampling=sampling, system_prompt=None, context_window=2048)
    assert batch[1].error == "utterance 3: server said no"
    assert batch[1].done
    assert len(batch[1].utterances) == 2 and batch[1].completion_tokens == []
    assert batch[0].error is None and batch[2].error is None
    assert len(batch[0].utterances) == 5 and len(batch[2].utterances) == 5
    # the failed dialogue is not sent again
    assert backend.stats.per_call == [3, 2, 2]


def test_failure_in_a_later_step():
    backend, sampling = scripted(["ok", "ok", "ok", "ok", "!error:boom", "ok"])
    batch = states(3, 5)
    generate_dialogues(batch, backend=backend, sampling=sampling, system_prompt=None, context_window=2048)
    # step 1 used replies 0-2, step 2 replies 3-5: the second dialogue fails at its 4th utterance
    assert [s.error for s in batch] == [None, "utterance 4: boom", None]
    assert len(batch[1].utterances) == 3
    assert backend.stats.per_call == [3, 3, 2]


def test_empty_replies_are_kept_and_counted():
    backend, sampling = scripted(["", "hello"])
    batch = states(2, 5)
    generate_dialogues(batch, backend=backend, sampling=sampling, system_prompt=None, context_window=2048)
    # 3 steps x 2 dialogues = 6 replies: "", "hello", "", "hello", "", "hello"
    assert [s.utterances[2:] for s in batch] == [["", "", ""], ["hello", "hello", "hello"]]
    assert [s.empty_utterances for s in batch] == [3, 0]
    assert all(s.error is None for s in batch)


def test_whitespace_reply_counts_as_empty():
    backend, sampling = scripted(["   \n "])
    batch = states(1, 3)
    generate_dialogues(batch, backend=backend, sampling=sampling, system_prompt=None, context_window=2048)
    assert batch[0].utterances[-1] == "" and batch[0].empty_utterances == 1


def test_context_window_trims_and_counts_steps():
    # scripted count_tokens: words + 4 per message; budget = context_window - max_tokens
    backend, sampling = scripted(["a b c d e f g h i j"], max_tokens=8)
    batch = [DialogueState("d", ["x " * 10, "y " * 10], 8)]
    generate_dialogues(batch, backend=backend, sampling=sampling, system_prompt=None, context_window=8 + 40)
    state = batch[0]
    assert len(state.utterances) == 8
    assert state.trimmed_steps > 0
    assert state.utterances[-1] == "a b c d e f g h"  # cut to max_tokens words


# adapt_conversation -----------------------------------------------------------------------------

CONV = [{"role": "system", "content": "SYS"}, {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"}, {"role": "user", "content": "bye"}]
LEADING = [{"role": "system", "content": "SYS"}, {"role": "assistant", "content": "hello"},
           {"role": "user", "content": "bye"}]


def test_adapt_native_everything_is_unchanged():
    assert adapt_conversation(CONV, system_native=True, leading_assistant_native=True, filler="F") == CONV
    assert adapt_conversation(LEADING, system_native=True, leading_assistant_native=True, filler="F") == LEADING


def test_adapt_merges_system_into_first_user():
    out = adapt_conversation(CONV, system_native=False, leading_assistant_native=True, filler="F")
    assert out == [{"role": "user", "content": "SYS\n\nhi"}, *CONV[2:]]
    assert CONV[1]["content"] == "hi"  # the input is not modified


def test_adapt_leading_assistant_gets_system_text_as_user_turn():
    out = adapt_conversation(LEADING, system_native=False, leading_assistant_native=False, filler="F")
    assert out == [{"role": "user", "content": "SYS"}, *LEADING[1:]]
    # also when the template takes leading assistants: the system text has to go somewhere
    out = adapt_conversation(LEADING, system_native=False, leading_assistant_native=True, filler="F")
    assert out == [{"role": "user", "content": "SYS"}, *LEADING[1:]]


def test_adapt_leading_assistant_gets_filler_when_system_is_native():
    out = adapt_conversation(LEADING, system_native=True, leading_assistant_native=False, filler="F")
    assert out == [LEADING[0], {"role": "user", "content": "F"}, *LEADING[1:]]


def test_adapt_leading_assistant_without_system():
    out = adapt_conversation(LEADING[1:], system_native=False, leading_assistant_native=False, filler="F")
    assert out == [{"role": "user", "content": "F"}, *LEADING[1:]]


@pytest.mark.parametrize("length", range(1, 7))
def test_adapted_botchat_prompts_alternate_from_user(length):
    """What a template without system role or leading assistant gets from every step of Algorithm 1."""
    messages = build_messages([f"u{i}" for i in range(length)], "SYS")
    out = adapt_conversation(messages, system_native=False, leading_assistant_native=False, filler="F")
    assert roles(out)[0] == "user" and roles(out)[-1] == "user"
    assert all(a["role"] != b["role"] for a, b in zip(out, out[1:]))
    assert out[0]["content"].startswith("SYS")


def test_probe_template():
    def strict(conversation):
        if conversation[0]["role"] != "user":
            raise ValueError("must start with user")

    assert probe_template(strict) == (False, False)
    assert probe_template(lambda c: "ok") == (True, True)
