"""Write ``spyfall_logs.jsonl``: the facts of the SpyFall games the GameEval authors logged, for the replay test.

The authors' repository (jordddan/GameEval) held 177 logged SpyFall games at commit d4de3b2 (``spyfall/random/<spy
word>&<common word>/<n>.log``, each pair's outcomes in ``res.json``; removed from the repository in afa84c5). Their
repository publishes no licence, so no text of theirs is kept here: only facts about each game, enough for our host
to replay it and to compare its end with theirs:

* ``order``: the seating order (the first "living players" announcement), ``spy``: the spy's seat (``res.json``'s
  ``spy_index`` into its ``players``, matched by that order; two games of a pair with the same order are told apart
  by the ``log`` field), ``end``: ``res.json``'s ``[winer, round]`` (``exit`` with round -1: discarded);
* ``moves``: every description and vote in the order the log has them: ``[player, "describe", extra?]`` or
  ``[player, "vote", name, extra?]``, ``name`` the vote's ``name`` as written (null when absent). ``extra`` only says
  what is unusual: ``keys``, the keys of the reply's JSON object when they are not the ones the move asks for
  (a description ``speak`` and ``thought``, a vote also ``name``), null when ``json.loads`` (what the authors'
  ``base_agent.py`` calls) cannot read the reply; ``inner``, for such a reply, the keys of the first JSON object
  inside it (after prose or a code fence; Python's ``JSONDecoder.raw_decode``), whose ``name`` is then the vote's;
  ``own_word``: true when a description names the speaker's own word (dialogbench's whole-word test,
  ``askguess.word_pattern``) in what the log shows the others heard.

Run it on an export of their logs (``git --git-dir=<their repo> archive d4de3b2 spyfall/random | tar -x -C DIR``):
``python -m tests.gameeval.logged.make_spyfall_logs DIR/spyfall/random``. The output is sorted and stable.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from dialogbench.gameeval.words import word_pattern

OUT = Path(__file__).with_name("spyfall_logs.jsonl")
_SPEECH = re.compile(r"^(player\d): ", re.S)
_LIVING = re.compile(r"living players are:\s*(\[.*\])")
_DECODER = json.JSONDecoder()


def _blocks(path: Path) -> list:
    """A log is JSON values separated by blank lines: chat messages and the players' parsed (or raw) replies."""
    return [json.loads(chunk) for chunk in path.read_text(encoding="utf-8").split("\n\n") if chunk.strip()]


def _inner(text: str) -> dict | None:
    for i, ch in enumerate(text):
        if ch == "{":
            try:
                value, _ = _DECODER.raw_decode(text, i)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
    return None


ASKED = {"describe": ["speak", "thought"], "vote": ["name", "speak", "thought"]}


def _move(player: str, kind: str, reply, heard: str, word: str) -> list:
    obj = reply if isinstance(reply, dict) else None
    extra: dict = {}
    if obj is None or sorted(obj) != ASKED[kind]:
        extra["keys"] = sorted(obj) if obj is not None else None
    if obj is None:
        obj = _inner(reply) if isinstance(reply, str) else None
        if obj is not None:
            extra["inner"] = sorted(obj)
    if kind == "describe" and word_pattern(word).search(heard):
        extra["own_word"] = True
    move = [player, kind] + ([obj.get("name") if obj is not None else None] if kind == "vote" else [])
    return move + ([extra] if extra else [])


def game(path: Path, results: list[dict]) -> dict:
    spy_word, common_word = path.parent.name.split("&")
    blocks, order, moves, stage = _blocks(path), None, [], "describe"
    for i, block in enumerate(blocks):
        if not (isinstance(block, dict) and block.get("role") == "user"):
            continue  # a reply: read with the speech before it
        content = block["content"]
        speech = _SPEECH.match(content)
        if not speech:  # the host
            living = _LIVING.search(content)
            if living and order is None:
                order = json.loads(living.group(1))
            stage = "vote" if "voting start" in content else "describe" if living or "continues" in content else stage
            continue
        moves.append([speech.group(1), stage, blocks[i + 1] if i + 1 < len(blocks) else None,
                      content[speech.end():]])
    matches = [r for r in results if r["players"] == order]
    if len(matches) > 1:
        matches = [r for r in matches if r["log"] == path.name]
    [result] = matches
    spy = result["players"][result["spy_index"] - 1]
    return {"log": f"{path.parent.name}/{path.name}", "pair": f"{spy_word},{common_word}", "order": order,
            "spy": spy, "end": [result["winer"], result["round"]],
            "moves": [_move(player, kind, reply, heard, spy_word if player == spy else common_word)
                      for player, kind, reply, heard in moves]}


def main(root: str) -> None:
    games = []
    for pair in sorted(Path(root).iterdir()):
        results = [json.loads(line) for line in (pair / "res.json").read_text().splitlines() if line.strip()]
        for log in sorted(pair.glob("*.log"), key=lambda p: int(p.stem)):
            games.append(game(log, results))
    OUT.write_text("".join(json.dumps(g, sort_keys=True, separators=(",", ":")) + "\n" for g in games),
                   encoding="utf-8")
    print(f"{len(games)} games → {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
