"""The three users of the engine: MT-Bench-101 answering, games, and the fitter rules they pass."""

from __future__ import annotations

import pytest

from dialogbench.backends.base import Sampling
from dialogbench.episodes import Seat, fit_prompt, run_episodes
from dialogbench.gameeval.game import Game, GameSetup, merge_roles
from dialogbench.gameeval.play import MOVE_FIT, GameEpisode, play
from dialogbench.mtbench101.answer_cells import AnswerCell, conversation, history
from tests.mtbench101.fit_oracle import fit_conversation
from dialogbench.mtbench101.answer_episodes import TURN_FIT, answer_cells
from dialogbench.mtbench101.dataset import Dialogue, Turn
from dialogbench.mtbench101.scoring import is_judged
from tests.episodes.fakes import Recorder, words


def dialogue(i: int, task: str, n: int) -> Dialogue:
    return Dialogue(id=i, task=task, line=i, turns=tuple(Turn(user=f"u{i}.{t} " * 2, bot=f"b{i}.{t}") for t in range(n)))


DIALOGUES = [dialogue(1, "GR", 3), dialogue(2, "CM", 4), dialogue(3, "GR", 1)]  # CM: turn 0 not judged


def cells(dialogues=DIALOGUES, skip=()) -> list[AnswerCell]:
    return [AnswerCell(f"{d.id}:{t}", d, t) for d in dialogues for t in range(len(d.turns))
            if is_judged(task=d.task, turn=t) and (d.id, t) not in skip]


def key(d: Dialogue, turn: int) -> str:
    return f"{d.id}:{turn}"


def run(context: str, *, backend=None, **kw):
    backend = backend or Recorder()
    batches = []
    stats = answer_cells(kw.pop("todo", None) or cells(), context=context, backend=backend,
                         sampling=Sampling(max_tokens=8), context_window=kw.pop("context_window", 1000),
                         on_batch=lambda b: batches.append([(c.cell_key, r.text) for c, r in b]),
                         earlier_key=key, **kw)
    return backend, batches, stats


# the fitter rules reproduce the three old fitters ----------------------------------------------------

@pytest.mark.parametrize("budget", [0, 3, 6, 10, 14, 100])
def test_turn_fit_is_fit_conversation(budget):
    pairs = [(f"u{i} " * (i + 1), f"b{i} " * 2) for i in range(4)]
    expected, dropped = fit_conversation(pairs, "now?", count_tokens=words, budget=budget)
    assert fit_prompt(conversation(pairs, "now?"), fit=TURN_FIT, count_tokens=words, budget=budget) == (expected, dropped)


def old_game_fit(messages, *, count_tokens, budget):
    trimmed = False
    while len(messages) > 2 and count_tokens(messages) > budget:
        messages = merge_roles([messages[0], *messages[2:]])
        trimmed = True
    return messages, trimmed


@pytest.mark.parametrize("budget", [0, 5, 9, 13, 20, 100])
def test_move_fit_is_the_old_game_fit(budget):
    raw = [{"role": "user", "content": "rules of it"}, {"role": "user", "content": "host: hi all"},
           {"role": "assistant", "content": "me a b"}, {"role": "user", "content": "p2: c d"},
           {"role": "user", "content": "host: e"}, {"role": "assistant", "content": "f g h"},
           {"role": "user", "content": "host: go"}]
    messages = merge_roles(raw)
    expected, trimmed = old_game_fit(messages, count_tokens=words, budget=budget)
    out, drops = fit_prompt(messages, fit=MOVE_FIT, count_tokens=words, budget=budget)
    assert (out, drops > 0) == (expected, trimmed)


# MT-Bench-101 answering ---------------------------------------------------------------------------

def test_golden_answers_every_turn_in_one_call():
    backend, batches, stats = run("golden")
    assert [len(c["prompts"]) for c in backend.calls] == [7]
    assert batches == [[(c.cell_key, "m:1") for c in cells()]]
    cm_turn2 = backend.calls[0]["prompts"][4]
    assert cm_turn2 == conversation(history(DIALOGUES[1], 2, context="golden"), DIALOGUES[1].turns[2].user)
    assert (stats.backend_calls, stats.blocked, stats.trimmed_prompts) == (1, 0, 0)


@pytest.mark.parametrize("chunk, sizes", [(None, [7]), (0, [7]), (4, [4, 3]), (1, [1] * 7)])
def test_golden_chunks(chunk, sizes):
    backend, batches, stats = run("golden", chunk_size=chunk)
    assert [len(c["prompts"]) for c in backend.calls] == sizes == [len(b) for b in batches]
    assert [k for b in batches for k, _ in b] == [c.cell_key for c in cells()]


def test_golden_trims_whole_turns_of_long_histories():
    backend, _, stats = run("golden", context_window=8 + 9)
    prompts = backend.calls[0]["prompts"]
    assert stats.trimmed_prompts == sum(p != conversation(history(c.dialogue, c.turn, context="golden"),
                                                          c.dialogue.turns[c.turn].user)
                                        for p, c in zip(prompts, cells())) > 0
    assert all(p[0]["role"] == "user" and len(p) % 2 == 1 for p in prompts)


def test_self_one_call_per_turn_index_with_own_answers():
    backend, batches, stats = run("self")
    # turn 0: GR 1, GR 3; turn 1: GR 1, CM 2; turn 2: GR 1, CM 2; turn 3: CM 2
    assert [[k for k, _ in b] for b in batches] == [["1:0", "3:0"], ["1:1", "2:1"], ["1:2", "2:2"], ["2:3"]]
    gr1_turn2 = backend.calls[2]["prompts"][0]
    assert [m["content"] for m in gr1_turn2 if m["role"] == "assistant"] == ["m:1", "m:2"]  # its own answers
    cm_turn2 = backend.calls[2]["prompts"][1]
    assert [m["content"] for m in cm_turn2 if m["role"] == "assistant"] == ["b2.0", "m:2"]  # golden turn 0 kept
    assert (stats.backend_calls, stats.blocked) == (4, 0)


def test_self_uses_stored_answers_and_steps_by_turn_index():
    todo = cells(skip={(1, 0), (1, 1)})  # dialogue 1 has turns 0 and 1 in the lake
    backend, batches, _ = run("self", todo=todo, stored={"1:0": "kept 0", "1:1": "kept 1"})
    assert [[k for k, _ in b] for b in batches] == [["3:0"], ["2:1"], ["1:2", "2:2"], ["2:3"]]
    gr1_turn2 = backend.calls[2]["prompts"][0]
    assert [m["content"] for m in gr1_turn2 if m["role"] == "assistant"] == ["kept 0", "kept 1"]


def test_self_turns_after_a_failed_answer_are_blocked():
    backend = Recorder(fail={DIALOGUES[0].turns[1].user})
    _, batches, stats = run("self", backend=backend)
    assert [[(k, t) for k, t in b] for b in batches][1] == [("1:1", None), ("2:1", "m:2")]
    assert [[k for k, _ in b] for b in batches] == [["1:0", "3:0"], ["1:1", "2:1"], ["2:2"], ["2:3"]]
    assert (stats.backend_calls, stats.blocked) == (4, 1)


def test_self_a_turn_index_with_every_cell_blocked_makes_no_call():
    backend = Recorder(fail={DIALOGUES[0].turns[0].user, DIALOGUES[2].turns[0].user})
    _, batches, stats = run("self", backend=backend, todo=cells(DIALOGUES[:1] + DIALOGUES[2:]))
    assert [[k for k, _ in b] for b in batches] == [["1:0", "3:0"]]
    assert (stats.backend_calls, stats.blocked) == (1, 2)


def test_unknown_context_is_an_error():
    with pytest.raises(ValueError):
        run("psychic")


# games --------------------------------------------------------------------------------------------

class Mute(Game):
    """A broken host: asks for nothing and never ends."""

    def _next_requests(self):
        return []


def test_a_game_with_no_moves_ends_instead_of_spinning():
    game = Mute(GameSetup(cell_key="k", game="mute", item_id="i", item="", setting="s", trial=0, seed=1, assignment={}))
    done = []
    stats = play([game], seats={}, concurrency=4, on_done=done.extend)
    assert done == [game] and (game.end_reason, game.finished) == ("no_moves", False)
    assert (stats.steps, stats.backend_calls, stats.finished) == (1, 0, 1)


def test_game_moves_carry_their_seed_and_are_answered_by_player():
    from dialogbench.gameeval.spyfall import SpyFall

    setup = GameSetup(cell_key="k", game="spyfall", item_id="i", item="BMW,BENZ", setting="default", trial=0, seed=7,
                      assignment={"spy": "a", "villager": "b"})
    game, backend = SpyFall(setup), Recorder()
    seats = {m: Seat(backend=backend, sampling=Sampling(max_tokens=64), prompt_budget=10_000) for m in "ab"}
    episode = GameEpisode(game, seats=seats)
    moves = game.pending()
    requests = episode.pending()
    assert [(r.model, r.seed, r.messages, r.tag.player) for r in requests] == \
        [(m.model, m.seed, m.messages, m.player) for m in moves]
    assert all(r.output_format is not None for r in requests) == all(m.shape is not None for m in moves)
    stats = run_episodes([episode], seats=seats, concurrency=1)
    # SpyFall asks one player per step (its votes too are cast in turn): one call per step
    assert game.ended and game.step == stats.steps == stats.moves == stats.backend_calls == len(backend.calls)
