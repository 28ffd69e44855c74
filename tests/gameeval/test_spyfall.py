"""SpyFall by its authors' rules (jordddan/GameEval game_spyfall.py): hand-made games driven through the state
machine. Each rule's test is built so that the previous rule (simultaneous votes, seeded tie draws, void self and
non-player votes, a redrawn order, the spy winning below three) gives another result."""

import json

from dialogbench.gameeval.spyfall import SpyFall, _vote_shape
from tests.gameeval.helpers import drive, setup

PAIR = "BMW,BENZ"


def game(seed=7, **limits):
    return SpyFall(setup("spyfall", item=PAIR, seed=seed, assignment={"spy": "a", "villager": "b"}), **limits)


def voter(target_of):
    """Describe plainly; vote for ``target_of(move)`` (a name, written as given)."""
    def respond(move):
        if move.kind == "describe":
            return json.dumps({"thought": "hmm", "speak": "a car"})
        return json.dumps({"thought": "t", "speak": "suspicious", "name": target_of(move)})
    return respond


def results(g):
    return [e["text"] for e in g.transcript if e["kind"] == "result"]


def test_roles_words_and_models():
    g = game()
    spies = [p for p in g.players.values() if p.role == "spy"]
    assert len(g.players) == 6 and len(spies) == 1 and spies[0].name == g.spy
    assert spies[0].model == "a" and {p.model for p in g.players.values() if p.role == "villager"} == {"b"}
    assert "'BMW'" in spies[0].rules and all("'BENZ'" in p.rules for p in g.players.values() if p.role == "villager")
    assert "spy" not in g.players[g.spy].rules.split("Your word")[1]  # nobody is told their role


def test_villagers_win_when_everyone_votes_the_spy():
    g = game()
    steps = drive(g, voter(lambda m: g.spy if m.player != g.spy else next(n for n in g.living if n != g.spy)))
    assert (g.outcome, g.end_reason, g.finished, g.round, g._result()["spy_living_rounds"]) == \
        ("villagers", "spy_eliminated", True, 1, 1)
    assert [len(s) for s in steps] == [1] * 12  # six describe steps, then six votes, one after another


def test_spy_wins_when_three_players_are_left():
    """game_spyfall.py:213 `len(living_players) <= 3`: with six players the spy wins by surviving three votes
    (the old rule, fewer than three left, played a fourth round)."""
    g = game()
    # everyone votes the first living villager other than themselves: a villager is out every round
    drive(g, voter(lambda m: next(n for n in g.living if n != g.spy and n != m.player)))
    assert (g.outcome, g.end_reason, g.finished, g.round, g._result()["spy_living_rounds"]) == \
        ("spy", "spy_survived", True, 3, 3)
    assert len(g.living) == 3 and g.spy in g.living


def test_a_later_voter_hears_the_earlier_votes_of_the_round():
    """game_spyfall.py:152-171: votes are cast in turn and each is public at once."""
    g = game(max_rounds=1)
    seen = {}

    def respond(move):
        if move.kind == "describe":
            return json.dumps({"thought": "t", "speak": "a car"})
        seen[move.player] = "\n".join(m["content"] for m in move.messages)
        return json.dumps({"thought": "secret", "speak": f"reason of {move.player}",
                           "name": next(n for n in g.order if n != move.player and n != g.spy)})
    steps = drive(g, respond)
    votes = [s for s in steps if s[0].kind == "vote"]
    assert [len(s) for s in votes] == [1] * 6 and [s[0].player for s in votes] == g.order
    for i, name in enumerate(g.order):
        for earlier in g.order[:i]:
            assert f"{earlier}: I vote for" in seen[name] and f"reason of {earlier}" in seen[name]
        for later in g.order[i + 1:]:
            assert f"reason of {later}" not in seen[name]
    assert "secret" not in seen[g.order[-1]]  # thoughts stay private


def test_a_tie_goes_to_the_name_voted_for_first():
    """game_spyfall.py:49-69 get_voted_name: counts in order of first appearance, strict `>`: among the tied,
    the name voted for first. The name voted for first is the one a sorted draw lists last, and every seed
    agrees (a seeded draw would not)."""
    for seed in range(8):
        g = game(seed=seed, max_rounds=1)
        o0 = g.order[0]
        x, y = sorted((n for n in g.order if n not in (g.spy, o0)), reverse=True)[:2]  # y sorts before x
        r1, r2, r3 = [n for n in g.order if n not in (o0, x, y)]
        # x and y get 2 votes each, x's first one from the first voter
        target = {o0: x, x: y, y: x, r1: y, r2: o0, r3: r1}
        drive(g, voter(lambda m: target[m.player]))
        assert x not in g.living and y in g.living and len(g.living) == 5, seed
        assert f"(2 names tied with 2 votes; '{x}' was voted for first)" in results(g)[0], seed
        assert (g.outcome, g.end_reason) == (None, "round_limit")


def test_a_vote_for_no_living_player_discards_the_game():
    """game_spyfall.py:186-190: the most-voted name is no living player → the game ends as 'exit', which
    compute_adversarial.py leaves out. Names count as written: 'Player 3' is no player."""
    g = game()
    written = {n: "Player " + n[-1] for n in g.order}  # every vote names a player, but not as its name is written
    drive(g, voter(lambda m: written[m.player]))
    assert (g.outcome, g.end_reason, g.finished, g.round, g._result()["spy_living_rounds"]) == \
        ("discarded", "voted_no_player", False, 1, None)
    assert len(g.living) == 6 and g.chat_errors == 6
    votes = [e for e in g.transcript if e["kind"] == "vote"]
    assert all(not v["valid"] and v["target"].startswith("Player ") for v in votes)
    assert g.row(run_id="r")["outcome"] == "discarded"


def test_a_vote_for_a_dead_player_null_or_prose_counts_and_can_discard():
    """Round 1 eliminates a villager; in round 2 three vote for the dead player, one names null, one votes in
    prose (authors: json.loads fails → name None): the dead player has the most votes → discarded. With void
    votes and prose read for a player name, the spy would have been voted out."""
    g = game()
    out = next(n for n in g.order if n != g.spy)

    def respond(move):
        if move.kind == "describe":
            return json.dumps({"thought": "t", "speak": "a car"})
        if g.round == 1:
            return json.dumps({"thought": "t", "speak": "s", "name": out if move.player != out else g.spy})
        i = g.living.index(move.player)
        name = out if i < 3 else None
        return json.dumps({"thought": "t", "speak": "s", "name": name}) if i < 4 else f"I vote for {g.spy}"
    drive(g, respond)
    assert (g.outcome, g.end_reason, g.finished, g.round) == ("discarded", "voted_no_player", False, 2)
    assert out not in g.living and len(g.living) == 5 and g.chat_errors == 5
    assert "the most votes went to '" + out + "'" in results(g)[-1]


def test_a_vote_for_oneself_counts():
    """game_spyfall.py has no self-vote check. Votes (in seating order v, a, b, c, d, e): v→v, a→v, b→d, c→b,
    d→b, e→c. Counted: v 2, b 2 and v voted for first → v is out. With self-votes void: b 2, v 1 → b."""
    for seed in range(4):
        g = game(seed=seed, max_rounds=1)
        v, a, b, c, d, e = g.order
        target = {v: v, a: v, b: d, c: b, d: b, e: c}
        drive(g, voter(lambda m: target[m.player]))
        assert v not in g.living and b in g.living, seed
        own = next(x for x in g.transcript if x["kind"] == "vote" and x["speaker"] == v)
        assert own["valid"] and own["target"] == v
        assert results(g)[0].startswith(f"{v} received the most votes"), seed


def test_the_speaking_order_is_drawn_once_and_kept_minus_the_dead():
    """game_spyfall.py:23 shuffles the seats once; every round (:117, :152) walks them, skipping the dead;
    the votes follow the same order."""
    for seed in range(4):
        g = game(seed=seed)
        drive(g, voter(lambda m: next(n for n in g.living if n != g.spy and n != m.player)))
        assert g.round == 3
        rounds: dict = {}
        for e in g.transcript:
            if e["kind"] in ("describe", "vote"):
                rounds.setdefault((e["round"], e["kind"]), []).append(e["speaker"])
        dead: list[str] = []
        for r in range(1, g.round + 1):
            alive = [n for n in g.order if n not in dead]
            assert rounds[(r, "describe")] == alive == rounds[(r, "vote")], (seed, r)
            dead.append(results(g)[r - 1].split()[0])  # "playerN received the most votes, …"
        assert [n for n in g.order if n not in dead] == g.living


def test_a_constrained_vote_names_a_living_player_the_voter_included():
    assert _vote_shape(["player2", "player5"]).choices == (("name", ("player2", "player5")),)


def test_descriptions_are_sequential_and_heard_by_the_later_speakers():
    g = game()
    order = []

    def respond(move):
        order.append(move.player)
        if move.kind == "describe":
            heard = [m["content"] for m in move.messages if m["role"] == "user"]
            earlier = [p for p in order[:-1]]
            assert all(any(f"{p}: said by {p}" in h for h in heard) for p in earlier)
            return json.dumps({"thought": "secret plan", "speak": f"said by {move.player}"})
        return json.dumps({"thought": "t", "speak": "s", "name": g.spy if move.player != g.spy else "player1"})
    drive(g, respond)
    first_villager = next(p for p in g.players.values() if p.name != order[0])
    assert not any("secret plan" in m["content"] for m in first_villager.history if m["role"] == "user")
    assert any("secret plan" in m["content"] for m in g.players[order[0]].history if m["role"] == "assistant")


def test_unreadable_moves_are_counted_chat_errors():
    g = game(max_rounds=1)

    def respond(move):
        if move.kind == "describe":
            return "I would rather not use JSON: it is a car."   # heard as raw text, counted
        return json.dumps({"thought": "t", "speak": "me!", "name": g.order[0]})
    drive(g, respond)
    assert g.chat_errors == 6  # the descriptions; the votes (one of them for oneself) are valid
    describe = next(e for e in g.transcript if e["kind"] == "describe")
    assert describe["text"] == "I would rather not use JSON: it is a car." and not describe["valid"]


def test_saying_your_own_word_is_heard_as_said_and_flagged():
    """game_spyfall.py L127-131 passes a description on as it came: the others hear the word, and it is no error."""
    g = game()
    drive(g, lambda m: json.dumps({"thought": "t", "speak": "My word is BENZ or BMW", "name": g.spy}))
    describe = [(e, f) for e, f in zip(g.transcript, g.move_flags) if e["kind"] == "describe"]
    assert describe and all(e["text"] == "My word is BENZ or BMW" and e["valid"] for e, _ in describe)
    assert all(f == "said its own word" for _, f in describe) and g.chat_errors == 0
    first, second = g.order[:2]
    assert {"role": "user", "content": f"{first}: My word is BENZ or BMW"} in g.players[second].history


def test_with_mask_own_word_the_word_is_masked_and_a_chat_error():
    g = game(mask_own_word=True)
    drive(g, lambda m: json.dumps({"thought": "t", "speak": "My word is BENZ or BMW", "name": g.spy}))
    describe = [(e, f) for e, f in zip(g.transcript, g.move_flags) if e["kind"] == "describe"]
    # the spy's word is BMW, the villagers' BENZ: each masks only its own
    assert all(e["text"] == ("My word is BENZ or ***" if e["speaker"] == g.spy else "My word is *** or BMW")
               for e, _ in describe)
    assert all(not e["valid"] and e["error"] == "said its own word (masked)" and f is None for e, f in describe)
    assert g.chat_errors == len(describe)
    first, second = g.order[:2]
    heard = [m["content"] for m in g.players[second].history if m["content"].startswith(f"{first}: My word")]
    assert heard and all("***" in h for h in heard)  # the descriptions; the votes' speech is not checked


def test_a_vote_without_thought_or_speak_counts_for_no_one_extra_keys_are_ignored():
    """base_agent.py vote() L137-143 reads thought, speak and name in turn inside one try: a missing key ends it
    with name None, whatever name the reply gave; keys it does not read change nothing. Votes in seat order
    (v, a, b, c, d, e): v and a for x without 'thought' / 'speak', b, c (with an extra key) and d for y, e for x.
    Counted as the authors count them: None 2, y 3, x 1 → y is out; were v's and a's votes counted for x, x and y
    would tie at 3 and x, voted for first, would be out."""
    for seed in range(4):
        g = game(seed=seed, max_rounds=1)
        v, a, b, c, d, e = g.order
        x, y = c, d
        replies = {v: {"speak": "s", "name": x}, a: {"thought": "t", "name": x},
                   b: {"thought": "t", "speak": "s", "name": y}, c: {"thought": "t", "speak": "s", "name": y, "vote": y},
                   d: {"thought": "t", "speak": "s", "name": y}, e: {"thought": "t", "speak": "s", "name": x}}
        drive(g, lambda m: json.dumps({"thought": "t", "speak": "a car"} if m.kind == "describe" else replies[m.player]))
        votes = {e["speaker"]: e for e in g.transcript if e["kind"] == "vote"}
        for voter, missing in ((v, "thought"), (a, "speak")):
            assert votes[voter]["target"] is None and not votes[voter]["valid"], seed
            assert f"'{missing}'" in votes[voter]["error"] and "counts for no one" in votes[voter]["error"]
        assert votes[c]["valid"] and votes[c]["target"] == y  # the extra key changes nothing
        assert y not in g.living and x in g.living, seed
        assert {"role": "user", "content": f"{v}: I vote for nobody."} in g.players[e].history
