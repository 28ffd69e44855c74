import json

from dialogbench.gameeval.spyfall import SpyFall
from tests.gameeval.helpers import drive, setup

PAIR = "BMW,BENZ"


def game(seed=7, **limits):
    return SpyFall(setup("spyfall", item=PAIR, seed=seed, assignment={"spy": "a", "villager": "b"}), **limits)


def player(move, name):
    return move.player == name


def voter(target_of):
    """Describe plainly; vote for ``target_of(game, voter)``."""
    def respond(move):
        if move.kind == "describe":
            return json.dumps({"thought": "hmm", "speak": "a car"})
        return json.dumps({"thought": "t", "speak": "suspicious", "name": target_of(move)})
    return respond


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
    assert [len(s) for s in steps] == [1] * 6 + [6]  # six describe steps, then one step with every vote


def test_spy_wins_when_fewer_than_three_players_remain():
    g = game()
    # everyone votes the first living villager (the spy votes for them too): four rounds of eliminations
    drive(g, voter(lambda m: next(n for n in g.living if n != g.spy and n != m.player)))
    assert (g.outcome, g.end_reason, g.round, g._result()["spy_living_rounds"]) == ("spy", "spy_survived", 4, 4)
    assert len(g.living) == 2 and g.spy in g.living


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


def test_tie_is_broken_by_a_seeded_draw_and_replays_identically():
    def play(seed):
        g = game(seed=seed, max_rounds=1)
        names = sorted(g.players)
        # three votes each for two villagers: a tie
        a, b = [n for n in names if n != g.spy][:2]
        others = [n for n in names if n not in (a, b)]
        target = {a: b, b: a, others[0]: a, others[1]: a, others[2]: b, others[3]: b}
        drive(g, voter(lambda m: target[m.player]))
        return g
    a, b = play(3), play(3)
    assert a.transcript == b.transcript
    result = [e for e in a.transcript if e["kind"] == "result"][0]["text"]
    assert "tied with 3 votes; the host drew" in result


def test_invalid_votes_are_void_and_counted_and_no_votes_eliminate_nobody():
    g = game(max_rounds=2)

    def respond(move):
        if move.kind == "describe":
            return "I would rather not use JSON: it is a car."   # heard as raw text, counted
        return json.dumps({"thought": "t", "speak": "me!", "name": move.player})  # self-vote: void
    drive(g, respond)
    assert (g.outcome, g.end_reason, g.finished, g.round) == (None, "round_limit", False, 2)
    assert g.chat_errors == 2 * 6 + 2 * 6
    describe = next(e for e in g.transcript if e["kind"] == "describe")
    assert describe["text"] == "I would rather not use JSON: it is a car." and not describe["valid"]
    assert any("nobody is eliminated" in (e["text"] or "") for e in g.transcript)


def test_vote_in_prose_counts_for_the_named_player_as_a_chat_error():
    g = game()
    drive(g, lambda m: json.dumps({"thought": "t", "speak": "car"}) if m.kind == "describe"
          else (f"I vote for {g.spy}" if m.player != g.spy else "I vote for nobody"))
    votes = [e for e in g.transcript if e["kind"] == "vote"]
    assert g.outcome == "villagers" and all(not v["valid"] for v in votes)
    assert sum(v["target"] == g.spy for v in votes) == 5


def test_saying_your_own_word_is_masked():
    g = game()
    drive(g, lambda m: json.dumps({"thought": "t", "speak": "My word is BENZ or BMW", "name": g.spy}))
    describe = [e for e in g.transcript if e["kind"] == "describe"]
    assert all("***" in e["text"] and not e["valid"] for e in describe)
