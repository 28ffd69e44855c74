"""The one episode engine: batching by model, fitting, refill, callbacks, errors."""

from __future__ import annotations

import logging

import pytest

from dialogbench.backends.base import Sampling
from dialogbench.episodes import Fit, Progress, Request, Seat, run_episodes
from tests.episodes.fakes import Recorder, Talk, user


def seat(backend, budget: int = 1000) -> Seat:
    return Seat(backend=backend, sampling=Sampling(max_tokens=8), prompt_budget=budget)


def test_each_step_makes_one_generate_call_per_model():
    a, b = Recorder("a"), Recorder("b")
    episodes = [Talk("x", models=("a",), steps=2), Talk("y", models=("b", "a"), steps=3), Talk("z", models=("b",))]
    calls = []
    stats = run_episodes(episodes, seats={"a": seat(a), "b": seat(b)}, on_call=lambda m, r: calls.append(m))
    # step 1: a gets x, y; b gets y, z.  step 2: a gets x, y; b gets y.  step 3: b then a, y alone
    assert calls == ["a", "b", "a", "b", "b", "a"]
    assert [len(c["prompts"]) for c in a.calls] == [2, 2, 1] and [len(c["prompts"]) for c in b.calls] == [2, 1, 1]
    assert a.counts == [2, 2, 1] and b.counts == [2, 1, 1]  # one batched count per call
    assert (stats.steps, stats.backend_calls, stats.moves, stats.finished) == (3, 6, 9, 3)
    assert stats.batch_sizes == [2, 2, 2, 1, 1, 1]
    # batches hold requests in episode order; models go in the order they first ask in a step, and
    # replies come back to their episode in that order
    assert [p[-1]["content"] for p in a.calls[0]["prompts"]] == ["x step 0", "y step 0"]
    assert [[(r.request.tag, r.completion.text) for r in step] for step in episodes[1].replies] == [
        [(("y", "a"), "a:1"), (("y", "b"), "b:1")], [(("y", "a"), "a:2"), (("y", "b"), "b:2")],
        [(("y", "b"), "b:3"), (("y", "a"), "a:3")]]


def test_only_over_budget_prompts_are_fitted_and_counted_as_trimmed():
    backend = Recorder()
    long_history = [user("old " * 20), {"role": "assistant", "content": "mid " * 20}]
    episodes = [Talk("short"), Talk("long", history=long_history)]
    stats = run_episodes(episodes, seats={"m": seat(backend, budget=25)})
    sent = backend.calls[0]["prompts"]
    assert sent[0] == [user("short step 0")]
    assert sent[1] == [long_history[1], user("long step 0")]  # the oldest message went, 22 words fit
    assert stats.trimmed_prompts == 1
    assert [r.trimmed for r in episodes[0].replies[0] + episodes[1].replies[0]] == [False, True]
    assert episodes[1].replies[0][0].messages == sent[1]
    assert backend.single_counts == 2  # counted one at a time only while fitting the long one


def test_the_request_fit_rule_is_used():
    backend = Recorder()

    class Fixed(Talk):
        def pending(self):
            return [Request(model="m", messages=[user("rules " * 10), user("a " * 10), user("b " * 10), user("go")],
                            fit=Fit(keep_head=1, keep_tail=1, unit=2))]

    run_episodes([Fixed("f")], seats={"m": seat(backend, budget=12)})
    assert backend.calls[0]["prompts"][0] == [user("rules " * 10), user("go")]


def test_seeds_and_formats_go_per_request_or_as_none():
    backend = Recorder()
    run_episodes([Talk("a"), Talk("b")], seats={"m": seat(backend)})
    run_episodes([Talk("a", seed=1), Talk("b", seed=2)], seats={"m": seat(backend)})

    class Shaped(Talk):
        def pending(self):
            return [Request(model="m", messages=[user("x")], output_format="json" if self.name == "j" else None)]

    run_episodes([Shaped("j"), Shaped("free")], seats={"m": seat(backend)})
    assert [(c["seeds"], c["formats"]) for c in backend.calls] == [(None, None), ([1, 2], None), (None, ["json", None])]


def test_concurrency_caps_episodes_in_flight_and_refills_as_they_finish():
    backend = Recorder()
    episodes = [Talk(f"e{i}", steps=s) for i, s in enumerate([1, 3, 1, 1, 2])]
    finished, in_flight = [], []
    stats = run_episodes(episodes, seats={"m": seat(backend)}, concurrency=2,
                         on_done=lambda done: finished.append([e.name for e in done]),
                         on_step=lambda s: in_flight.append(s.steps))
    # step 1: e0 e1; e0 done → e2 joins; step 2: e1 e2; e2 done → e3; step 3: e1 e3 both done → e4; step 4-5: e4
    assert [[p[-1]["content"].split()[0] for p in c["prompts"]] for c in backend.calls] == [
        ["e0", "e1"], ["e1", "e2"], ["e1", "e3"], ["e4"], ["e4"]]
    assert finished == [["e0"], ["e2"], ["e1", "e3"], ["e4"]]
    assert stats.batch_sizes == [2, 2, 2, 1, 1] and stats.finished == 5 and in_flight == [1, 2, 3, 4, 5]


def test_episodes_are_taken_lazily_from_the_iterable():
    backend, made = Recorder(), []

    def episodes():
        for i in range(4):
            made.append(i)
            yield Talk(f"e{i}")

    seen = []
    run_episodes(episodes(), seats={"m": seat(backend)}, concurrency=1, on_step=lambda s: seen.append(len(made)))
    assert seen == [2, 3, 4, 4]


def test_an_episode_with_nothing_pending_waits_out_the_step():
    backend = Recorder()

    class Late(Talk):  # asks only at its third step
        def pending(self):
            return super().pending() if len(self.replies) == 2 else []

    late, now = Late("late", steps=3), Talk("now")
    stats = run_episodes([late, now], seats={"m": seat(backend)})
    assert stats.steps == 3 and stats.backend_calls == 2  # step 2 had nothing to send: no call
    assert [len(r) for r in late.replies] == [0, 0, 1]


def test_failed_replies_reach_the_episode():
    backend = Recorder(fail={"b step 0"})
    episodes = [Talk("a"), Talk("b")]
    run_episodes(episodes, seats={"m": seat(backend)})
    assert [r.completion.ok for e in episodes for r in e.replies[0]] == [True, False]
    assert episodes[1].replies[0][0].completion.error == "nope"


def test_backend_exceptions_propagate_after_earlier_steps_were_handed_over():
    class Flaky(Recorder):
        def generate(self, conversations, **kw):
            if len(self.calls) == 1:
                raise RuntimeError("server down")
            return super().generate(conversations, **kw)

    finished, written = [], []
    episodes = [Talk("a", steps=1), Talk("b", steps=3)]
    with pytest.raises(RuntimeError, match="server down"):
        run_episodes(episodes, seats={"m": seat(Flaky())}, on_done=lambda d: finished.extend(e.name for e in d),
                     on_call=lambda m, r: written.extend(x.request.tag for x in r))
    assert finished == ["a"] and written == [("a", "m"), ("b", "m")]
    assert len(episodes[1].replies) == 1  # the failed step reached no episode


def test_a_backend_that_loses_completions_is_an_error():
    class Short(Recorder):
        def generate(self, conversations, **kw):
            return super().generate(conversations, **kw)[:-1]

    with pytest.raises(RuntimeError, match="1 completions for 2 prompts"):
        run_episodes([Talk("a"), Talk("b")], seats={"m": seat(Short())})


def test_on_call_sees_replies_before_the_episodes():
    order = []

    class Noted(Talk):
        def resolve(self, replies):
            order.append(("resolve", self.name))
            super().resolve(replies)

    run_episodes([Noted("a"), Noted("b")], seats={"m": seat(Recorder())},
                 on_call=lambda m, r: order.append(("call", m, len(r))))
    assert order == [("call", "m", 2), ("resolve", "a"), ("resolve", "b")]


def test_unknown_model_and_bad_concurrency_are_errors():
    with pytest.raises(KeyError):
        run_episodes([Talk("a", models=("nobody",))], seats={"m": seat(Recorder())})
    with pytest.raises(ValueError):
        run_episodes([Talk("a")], seats={"m": seat(Recorder())}, concurrency=0)


def test_nothing_to_run_makes_no_call():
    backend = Recorder()
    stats = run_episodes([], seats={"m": seat(backend)})
    assert (stats.steps, backend.calls) == (0, [])


def test_progress_is_logged(caplog):
    with caplog.at_level(logging.INFO, logger="test.progress"):
        run_episodes([Talk("a", steps=2)], seats={"m": seat(Recorder())},
                     progress=Progress(logging.getLogger("test.progress"), every_s=-1, noun="talks"))
    assert [r.getMessage() for r in caplog.records] == [
        "step 1: 0 talks done, 1 in flight, 1 moves in 1 backend calls",
        "step 2: 1 talks done, 0 in flight, 2 moves in 2 backend calls"]
