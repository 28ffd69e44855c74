"""The one fitter: what a rule keeps, what it drops, and when it stops."""

import pytest

from dialogbench.episodes import Fit, fit_prompt
from dialogbench.gameeval.game import merge_roles
from tests.episodes.fakes import words


def msg(role: str, text: str) -> dict:
    return {"role": role, "content": text}


def test_under_budget_is_untouched_and_counted_once():
    messages = [msg("user", "a b"), msg("assistant", "c d"), msg("user", "e")]
    counted = []
    out, drops = fit_prompt(messages, fit=Fit(), count_tokens=lambda m: counted.append(1) or words(m), budget=5)
    assert (out, drops, len(counted)) == (messages, 0, 1)


def test_drops_the_oldest_after_the_head_until_it_fits():
    messages = [msg("system", "sys"), *(msg("user" if i % 2 else "assistant", f"w{i} " * 3) for i in range(5))]
    out, drops = fit_prompt(messages, fit=Fit(keep_head=1), count_tokens=words, budget=1 + 6)
    assert drops == 3
    assert out == [messages[0], *messages[-2:]]


def test_never_drops_head_or_tail_even_over_budget():
    messages = [msg("system", "s " * 50), msg("user", "old " * 50), msg("assistant", "x " * 50), msg("user", "q " * 50)]
    out, drops = fit_prompt(messages, fit=Fit(keep_head=1, keep_tail=1), count_tokens=words, budget=1)
    assert drops == 2 and out == [messages[0], messages[-1]]


def test_unit_two_drops_whole_turns():
    pairs = [("u0 " * 4, "b0 " * 4), ("u1 " * 4, "b1 " * 4), ("u2 " * 4, "b2 " * 4)]
    messages = [m for u, b in pairs for m in (msg("user", u), msg("assistant", b))] + [msg("user", "now?")]
    out, drops = fit_prompt(messages, fit=Fit(keep_head=0, keep_tail=1, unit=2), count_tokens=words, budget=9)
    assert drops == 2 and out == messages[4:]
    out, drops = fit_prompt(messages, fit=Fit(keep_head=0, keep_tail=1, unit=2), count_tokens=words, budget=0)
    assert drops == 3 and out == [messages[-1]]  # the current message stays, alone


def test_rebuild_runs_after_each_drop():
    rules, speech, instruction = msg("user", "rules"), msg("user", "p2: " + "b " * 9), msg("user", "host: move")
    messages = merge_roles([rules, msg("assistant", "a " * 5), speech, msg("assistant", "c " * 5), instruction])
    assert words(messages) == 23
    out, drops = fit_prompt(messages, fit=Fit(keep_head=1, keep_tail=1, rebuild=merge_roles), count_tokens=words,
                            budget=18)
    # dropping the assistant message leaves two user messages in a row: merged, roles alternate again
    assert drops == 1
    assert out == [msg("user", "rules\n" + speech["content"]), msg("assistant", "c " * 5), instruction]
    assert messages[0] == rules  # the caller's messages are not touched


@pytest.mark.parametrize("bad", [dict(unit=0), dict(keep_head=-1), dict(keep_tail=-1)])
def test_a_rule_that_could_loop_forever_is_refused(bad):
    with pytest.raises(ValueError):
        Fit(**bad)
