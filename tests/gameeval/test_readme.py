"""dialogbench/gameeval/README.md's chat-error rules, re-read against the code, so the two cannot drift apart.

* The "Chat errors and fallbacks" table: every row is played here (a real game through its state machine, the row's
  problem injected into one player's moves, every other move valid) and its "chat error" column must say what the
  game counted (``chat_errors``); a row with no scenario here, or a scenario with no row, fails.
* Ask-Guess's rules table, row "chat error": the end reasons it lists as CE must be the ones the code scores CE, and
  a failed chat call must be listed as no CE, ending ``backend_error`` (the project's rule: scored nowhere, replayed
  by the next run), which the code must do."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from dialogbench.gameeval.askguess import AskGuess
from dialogbench.gameeval.game import Game
from dialogbench.gameeval.spyfall import SpyFall
from dialogbench.gameeval.tofukingdom import TofuKingdom
from tests.gameeval.helpers import drive, setup

README = Path(__file__).resolve().parents[2] / "dialogbench" / "gameeval" / "README.md"
_CODE = re.compile(r"`([^`]+)`")


def split_row(line: str) -> list[str]:
    """A markdown table row's cells (``\\|`` is a pipe inside a cell)."""
    cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [c.strip().replace("\\|", "|") for c in cells]


def table_after(text: str, marker: str) -> list[dict[str, str]]:
    """The first markdown table after the line that starts with ``marker``: its rows as {header: cell}."""
    lines = text[text.index("\n" + marker) + 1:].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    block = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        block.append(line)
    header = split_row(block[0])
    assert set(block[1].replace("|", "").strip()) <= {"-", " ", ":"}, "a table's second line is its separator"
    rows = [dict(zip(header, split_row(line))) for line in block[2:]]
    assert all(len(r) == len(header) for r in rows)
    return rows


# -- scenarios: one per row of the chat-error table -------------------------------------------------------------------

def spyfall(**limits) -> SpyFall:
    return SpyFall(setup("spyfall", item="BMW,BENZ", seed=3, assignment={"spy": "a", "villager": "b"}),
                   max_rounds=1, **limits)


def tofu() -> TofuKingdom:
    return TofuKingdom(setup("tofukingdom", seed=5, assignment={"prince": "p", "queen": "q", "spy": "s"}))


def askguess() -> AskGuess:
    return AskGuess(setup("askguess", item="apple", setting="without_description",
                          assignment={"questioner": "m", "answerer": "m"}), max_rounds=2)


def spy_play(g: SpyFall, *, describe=None, vote=None) -> Callable:
    """Valid moves, but the first seat's description (``describe``) or vote (``vote``), when given: its reply."""
    first = g.order[0]

    def respond(move):
        if move.kind == "describe":
            return describe if describe is not None and move.player == first else \
                json.dumps({"thought": "t", "speak": "it has wheels"})
        if vote is not None and move.player == first:
            return vote
        return json.dumps({"thought": "t", "speak": "s", "name": next(n for n in g.living if n != move.player)})
    return respond


def tofu_play(g: TofuKingdom, *, question=None, extra=None, answer=None, choose=None) -> Callable:
    """Valid moves, but the first question, the extra question, player1's answers or the choice, when given."""
    def respond(move):
        if move.kind == "question":
            return question if question is not None and g.round == 0 else json.dumps({"thought": "t", "question": 2})
        if move.kind == "extra":
            return extra if extra is not None else json.dumps({"thought": "t", "ask": "player2", "question": 2})
        if move.kind == "answer":
            return answer if answer is not None and move.player == "player1" else \
                json.dumps({"thought": "t", "speak": "I am the Chef"})
        return choose if choose is not None else json.dumps({"thought": "t", "name": "player3"})
    return respond


def played(g: Game, respond: Callable) -> Game:
    drive(g, respond)
    return g


def backend_errors() -> list[Game]:
    """Every game, its first mover's backend failing every time: the game ends backend_error, nothing counted."""
    games = []
    for g in (askguess(), spyfall(), tofu()):
        first = g.pending()[0].player
        games.append(played(g, lambda m, first=first: None if m.player == first else "x"))
    for g in games:
        assert (g.end_reason, g.outcome, g.finished) == ("backend_error", None, False)
    return games


def own_word(**limits) -> list[Game]:
    g = spyfall(**limits)
    return [played(g, spy_play(g, describe=json.dumps({"thought": "t", "speak": f"my word: {g.words[g.order[0]]}"})))]


def blank_descriptions() -> list[Game]:
    out = []
    for speak in ("", "   ", None):
        g = spyfall()
        out.append(played(g, spy_play(g, describe=json.dumps({"thought": "secret", "speak": speak}))))
    return out


def blank_vote() -> list[Game]:
    g = spyfall()
    return [played(g, spy_play(g, vote=json.dumps({"thought": "secret", "speak": " ", "name": g.order[1]})))]


def blank_answers(*speaks) -> list[Game]:
    out = []
    for speak in speaks:
        g = tofu()
        out.append(played(g, tofu_play(g, answer=json.dumps({"thought": "secret", "speak": speak}))))
    return out


def placeholders() -> list[Game]:
    g, t = spyfall(), tofu()
    out = [played(g, spy_play(g, describe=json.dumps({"thought": "your plan", "speak": "your description"}))),
           played(t, tofu_play(t, answer=json.dumps({"thought": "your reasoning", "speak": "your answer"})))]
    assert all(x.placeholder_moves for x in out)
    return out


def one(make: Callable[[], Game], **replies) -> Callable[[], list[Game]]:
    def run() -> list[Game]:
        g = make()
        return [played(g, (spy_play if isinstance(g, SpyFall) else tofu_play)(g, **replies))]
    return run


SCENARIOS: dict[tuple[str, str], Callable[[], list[Game]]] = {
    ("any", "backend error (the call failed: connection, timeout, 5xx)"): backend_errors,
    ("Ask-Guess any", "empty reply"): lambda: [played(askguess(), lambda m: "" if m.player == "questioner" else "no")],
    ("SpyFall describe", "not JSON"): one(spyfall, describe="It has four wheels and a star."),
    ("SpyFall describe", "JSON without `speak`"): one(spyfall, describe=json.dumps({"thought": "secret"})),
    ("SpyFall describe", "blank `speak` (`\"\"`, spaces, null)"): blank_descriptions,
    ("SpyFall describe", "says the speaker's own word"): own_word,
    ("SpyFall describe", "says the speaker's own word, with `spyfall.mask_own_word`"):
        lambda: own_word(mask_own_word=True),
    ("SpyFall vote", "not JSON / no `thought`, `speak` or `name`"): lambda: [
        *one(spyfall, vote="I vote for player2")(),
        *one(spyfall, vote=json.dumps({"speak": "s", "name": "player2"}))()],
    ("SpyFall vote", "for a dead or unknown player, or not written exactly as a player's name"):
        one(spyfall, vote=json.dumps({"thought": "t", "speak": "s", "name": "Player 9"})),
    ("SpyFall vote", "blank `speak`"): blank_vote,
    ("TofuKingdom question", "not JSON"): one(tofu, question="player1, what is your identity?"),
    ("TofuKingdom question", "names none of the three (\"Is player3 the Princess?\", \"Who is the Queen?\")"): lambda: [
        *one(tofu, question=json.dumps({"thought": "t", "question": "Is player3 the Princess?"}))(),
        *one(tofu, question=json.dumps({"thought": "t", "question": "Who is the Queen?"}))()],
    ("TofuKingdom question", "JSON without `question`"):
        one(tofu, question=json.dumps({"thought": "who is the princess", "name": "player2"})),
    ("TofuKingdom question 3", "about no other seated player (in `name`, or in its text)"):
        one(tofu, question=json.dumps({"thought": "t", "question": 3, "name": "player1"})),
    ("TofuKingdom extra", "no valid player asked"):
        one(tofu, extra=json.dumps({"thought": "t", "ask": "nobody", "question": 2})),
    ("TofuKingdom answer", "not JSON"): one(tofu, answer="I am the Chef, truly."),
    ("TofuKingdom answer", "JSON without `speak`"): one(tofu, answer=json.dumps({"thought": "secret"})),
    ("TofuKingdom answer", "null `speak`"): lambda: blank_answers(None),
    ("TofuKingdom answer", "blank `speak` (`\"\"`, spaces)"): lambda: blank_answers("", "  "),
    ("TofuKingdom choice", "names no seated player"): one(tofu, choose="I cannot decide."),
    ("SpyFall, TofuKingdom any", "repeats the prompt's placeholder text"): placeholders,
}


def chat_error_rows() -> list[dict[str, str]]:
    return table_after(README.read_text(), "## Chat errors and fallbacks")


def test_every_row_of_the_chat_error_table_is_played_here_and_every_scenario_is_a_row():
    rows = chat_error_rows()
    assert list(rows[0]) == ["move", "problem", "what the host does", "chat error"]
    keys = [(r["move"], r["problem"]) for r in rows]
    assert len(keys) == len(set(keys))
    assert set(keys) == set(SCENARIOS), (set(keys) ^ set(SCENARIOS))
    assert {r["chat error"] for r in rows} <= {"yes", "no"}


@pytest.mark.parametrize("key", list(SCENARIOS), ids=[" / ".join(k) for k in SCENARIOS])
def test_each_row_says_whether_the_code_counts_a_chat_error(key):
    row = next(r for r in chat_error_rows() if (r["move"], r["problem"]) == key)
    games = SCENARIOS[key]()
    assert games and all(g.ended for g in games)
    counted = {g.chat_errors > 0 for g in games}
    assert counted == {row["chat error"] == "yes"}, (key, [g.chat_errors for g in games], row["chat error"])
    if row["chat error"] == "no":
        assert all(g.chat_errors == 0 for g in games)


def test_the_backend_error_row_ends_the_game_backend_error_unscored():
    row = next(r for r in chat_error_rows() if r["move"] == "any" and r["problem"].startswith("backend error"))
    assert "`backend_error`" in row["what the host does"] and "no outcome" in row["what the host does"]
    for g in backend_errors():
        result = g.row(run_id="r")
        assert (result["outcome"], result["end_reason"], result["chat_errors"]) == (None, "backend_error", 0)
        assert all(e["error"].startswith("backend: ") for e in g.transcript if not e["valid"])


def test_askguess_chat_error_rule_is_the_codes():
    """Ask-Guess's rules table, row "chat error", column dialogbench: "CE: …" lists the end reasons the code scores
    CE, "No CE: …" the failed chat call, which ends ``backend_error`` with no outcome (the authors: a ChatError in
    Table 2's denominator). Both read from games the code plays."""
    text = README.read_text()
    (row,) = [r for r in table_after(text, "**Ask-Guess**") if r["rule"] == "chat error"]
    cell = row["dialogbench"]
    assert cell.startswith("CE:") and "No CE:" in cell
    ce_part, not_ce = cell.split("No CE:", 1)
    # the code: an empty reply scores CE (end reason empty_reply); a backend that keeps failing scores nothing
    empty = played(askguess(), lambda m: "" if m.player == "questioner" else "no")
    failed = backend_errors()[0]
    assert isinstance(failed, AskGuess)
    ce_reasons = {g.end_reason for g in (empty, failed) if g.outcome == "CE"}
    assert ce_reasons == {"empty_reply"} and (failed.outcome, failed.end_reason) == (None, "backend_error")
    assert set(_CODE.findall(ce_part)) == ce_reasons
    assert "backend_error" in _CODE.findall(not_ce) and failed.end_reason not in _CODE.findall(ce_part)
    assert "ChatError" in row["authors' code"]
    # and nowhere does the README call a failed backend call a CE again
    assert not re.search(r"backend[^|\n]*(?:→|->)\s*CE\b", text), "a failed backend call is no CE"
