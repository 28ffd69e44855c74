"""MuTual's dev split (``data_lake/raw/botchat/mutual_dev.jsonl``), the source of BotChat's hard probes
(``botchat/probes.py``). BotChat's seeds come from MuTual's *test* split, so no model is ever asked to continue a dev
dialogue: the probes are held out by construction. Where the two splits share a conversation (11 of the 886 dev items
repeat a test dialogue's lines), ``held_out`` leaves it out.

A row is one MuTual item: ``article``, the context, its turns marked ``m :`` / ``f :``, in MuTual's tokenised lower
case ("i do n't know ."); ``options``, four candidate next turns, one of them right (``answers``: A-D). ``read_dev``
splits the article on the speaker marks and writes every turn as BotChat's seeds are written ("I don't know."):
tokens joined, sentences capitalised, ``i`` as ``I``, and (``dev_items``) words the seeds spell capitalised (names,
"OK") spelled so too, so a dev dialogue and a seed dialogue look alike to a judge."""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import dialogbench
from dialogbench.botchat.seeds import read_seeds
from dialogbench.text.jsonl import DatasetError, file_version, once_per_version, raise_if_any, records

__all__ = ["DEV_FILE", "DatasetError", "DevItem", "conversations", "dev_items", "held_out", "read_dev"]

DEV_FILE = Path(dialogbench.__file__).resolve().parents[1] / "data_lake/raw/botchat/mutual_dev.jsonl"
LETTERS = "ABCD"
_MARK = re.compile(r"(?:^|(?<=\s))([mf]) : ")  # a speaker mark: "m : " / "f : " at the start or after a space


@dataclass(frozen=True)
class DevItem:
    """One dev item: the context ``utterances`` (speakers alternating), the ``right`` next turn and the three
    ``wrong`` ones (in the row's option order), ``line`` in the file; ``alternates``: every turn, the right one
    included, changes speaker (false for 3 of the 886 items, whose rendering as A / B would misattribute a turn)."""

    id: str
    utterances: tuple[str, ...]
    right: str
    wrong: tuple[str, ...]
    line: int
    alternates: bool = True

    @property
    def dialogue(self) -> tuple[str, ...]:
        """The human conversation: the context and its right continuation."""
        return (*self.utterances, self.right)


@once_per_version
def read_dev(path: str | Path) -> tuple[DevItem, ...]:
    """Every row must have a unique string ``id``, an ``article`` that starts with a speaker mark, four string
    ``options`` each starting with one, and ``answers`` one of A-D. All bad rows are reported together (each as
    ``<file>:<line>: row '<id>': what``); nothing is returned unless all are good. Rows in file order."""
    items, problems, seen = [], [], set()
    for line_no, record in records(path, problems):
        row_id, article, options, answer = (record.get(k) for k in ("id", "article", "options", "answers"))
        where = f"{path}:{line_no}: row {row_id!r}"
        if not isinstance(row_id, str) or not row_id:
            problems.append(f"{path}:{line_no}: missing 'id' (the row id)")
        elif row_id in seen:
            problems.append(f"{where}: duplicate row id")
        elif not isinstance(article, str) or not _MARK.match(article):
            problems.append(f"{where}: 'article' must be a string starting with a speaker mark ('m : ' or 'f : ')")
        elif not (isinstance(options, list) and len(options) == 4
                  and all(isinstance(o, str) and _MARK.match(o) for o in options)):
            problems.append(f"{where}: 'options' must be a list of 4 strings, each starting with a speaker mark")
        elif not isinstance(answer, str) or answer not in LETTERS or len(answer) != 1:
            problems.append(f"{where}: 'answers' must be one of A, B, C, D, got {answer!r}")
        else:
            speakers, turns = _turns(article)
            if not turns or not all(turns):
                problems.append(f"{where}: 'article' has an empty turn")
                continue
            said = [_turns(o) for o in options]
            if not all(t and t[0] for _, t in said):
                problems.append(f"{where}: an option has no text after its speaker mark")
                continue
            seen.add(row_id)
            right = LETTERS.index(answer)
            next_speaker = said[right][0][0]
            alternates = (all(a != b for a, b in zip(speakers, speakers[1:])) and next_speaker != speakers[-1]
                          and all(s[0] == next_speaker for s, _ in said))
            texts = [" ".join(t) for _, t in said]
            items.append(DevItem(row_id, tuple(turns), texts[right],
                                 tuple(t for i, t in enumerate(texts) if i != right), line_no, alternates))
    raise_if_any(problems, path=path, what="row(s)")
    return tuple(items)


def _turns(text: str) -> tuple[list[str], list[str]]:
    """(speakers, turns written as the seeds are) of a marked text."""
    parts = _MARK.split(text)
    return parts[1::2], [detokenize(t) for t in parts[2::2]]


def _fix_mojibake(token: str) -> str:
    """A token of UTF-8 text read as Latin-1 and written again (3 rows: "but" and an ellipsis's three bytes, a pound
    sign in "ï¿¡1.50") as it was; "…", "’", "￡" as the seeds write them."""
    try:
        token = token.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        pass
    return token.replace("…", " ...").replace("’", "'").replace("￡", "£ ")


_ATTACHED = {"n't", "'s", "'m", "'re", "'ve", "'ll", "'d", ",", ".", "?", "!", ";", ":", "%", ")", "...", "''"}
_OPENING = {"$", "£", "(", "``"}  # the next token goes on these
_STUCK_I = re.compile(r"(?<=[a-z]\.)i(?='|\s|$)")
_I_ENDS = {".", "?", "!", ",", ";", ":", "'"}
_ABBREVIATIONS = {"mr.", "mrs.", "ms.", "dr.", "st.", "a.m.", "p.m.", "vs."}  # their full stop ends no sentence


def detokenize(text: str) -> str:
    """One MuTual turn as BotChat's seeds write one: ``i 'm sorry , i ca n't .`` -> ``I'm sorry, I can't.``: the
    tokens joined, ``i`` as ``I``, each sentence's first letter capitalised."""
    out: list[str] = []
    glue, starts = False, True
    for token in (text if text.isascii() else " ".join(map(_fix_mojibake, text.split()))).split():
        attach = bool(out) and (glue or token in _ATTACHED or (token == "'" and out[-1].endswith("s")))
        glue = token in _OPENING
        if token == "i" or token[:1] == "i" and token[1:2] in _I_ENDS:  # i, i., i'm
            token = "I" + token[1:]
        elif starts and token[:1].islower():
            token = token[:1].upper() + token[1:]
        token = {"``": '"', "''": '"'}.get(token, token)
        if attach:
            out[-1] += token
        else:
            out.append(token)
        if token[-1] in ".?!" and token.lower() not in _ABBREVIATIONS:
            starts = True
        elif token.strip("\"'()$£,;:-"):
            starts = False
    text = " ".join(out)
    return _STUCK_I.sub("I", text) if ".i" in text else text  # "thanks.i 'll" (sic): "Thanks.I'll"


# words the seeds capitalise only in names ("Main Street", "Bill"), which MuTual's dev turns also use as words
COMMON_WORDS = frozenset({"ace", "beast", "bill", "coast", "grace", "hall", "main", "moonlight", "prince", "sue",
                          "turkey", "united"})
_TOKEN = re.compile(r"([^A-Za-z]*)([A-Za-z]+)(.*)", re.DOTALL)  # punctuation, the word, the rest ("'s,")


def casing(dialogues) -> dict[str, str]:
    """lower-case word -> its spelling in ``dialogues`` (the seeds) where they spell it so at least twice and at
    least four times as often as in lower case, away from a sentence start ("John", "OK", "Mr"; not COMMON_WORDS):
    ``truecase`` spells dev turns so."""
    forms: dict[str, Counter] = {}
    for dialogue in dialogues:
        for text in dialogue:
            tokens = text.split()
            for before, token in zip(tokens, tokens[1:]):
                match = _TOKEN.match(token)
                if match and not match.group(1) and before[-1] not in ".?!\"":  # not a sentence's first word
                    forms.setdefault(match.group(2).lower(), Counter())[match.group(2)] += 1
    found = {}
    for word, counts in forms.items():
        form, n = counts.most_common(1)[0]
        if form != word and n >= 2 and n >= 4 * counts.get(word, 0) and len(word) > 1 and word not in COMMON_WORDS:
            found[word] = form
    return found


def truecase(text: str, spelled: dict[str, str]) -> str:
    """``text`` with each word ``spelled`` knows spelled so ("ok" and a sentence's "Ok": "OK")."""
    out = []
    for token in text.split(" "):
        match = _TOKEN.match(token)
        if match:
            word = match.group(2)
            form = spelled.get(word.lower())
            if form and (word.islower() or word == word.capitalize()):
                token = match.group(1) + form + match.group(3)
        out.append(token)
    return " ".join(out)


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


SHARED_CHARS = 20  # a turn this long (letters and digits) that two items share makes them one conversation


def _lines(dialogue) -> set[str]:
    return {n for n in map(_norm, dialogue) if len(n) >= SHARED_CHARS}


def held_out(items, seeds) -> list[DevItem]:
    """The items that share no conversation with a seed dialogue: no turn of SHARED_CHARS letters or more in
    common, and not the same two opening turns."""
    seen = set().union(*(_lines(s) for s in seeds)) if seeds else set()
    openings = {tuple(map(_norm, s[:2])) for s in seeds}
    return [item for item in items
            if not (_lines(item.dialogue) & seen) and tuple(map(_norm, item.dialogue[:2])) not in openings]


def conversations(items) -> list[list[DevItem]]:
    """The items grouped by conversation (MuTual cuts one conversation into several items, each with a longer
    context): items sharing their two opening turns or any turn of SHARED_CHARS letters or more are one; groups in
    the order of their first item."""
    parent = list(range(len(items)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict = {}
    for i, item in enumerate(items):
        for key in [("open", *map(_norm, item.dialogue[:2])), *_lines(item.dialogue)]:
            if key in owner:
                parent[root(i)] = root(owner[key])
            else:
                owner[key] = i
    groups: dict[int, list[DevItem]] = {}
    for i, item in enumerate(items):
        groups.setdefault(root(i), []).append(item)  # a group's first item comes first: groups in that order
    return list(groups.values())


def dev_items(path: str | Path, seeds_path: str | Path) -> tuple[tuple[DevItem, ...], ...]:
    """The dev conversations (``conversations``) held out from the seed dialogues of ``seeds_path``
    (``seeds.read_seeds``), their turns spelled as the seeds spell words; only items whose speakers alternate. Built
    once per version of both files."""
    return _dev_items(str(path), file_version(path), str(seeds_path), file_version(seeds_path))


@functools.lru_cache(maxsize=4)
def _dev_items(path: str, _version, seeds_path: str, _seeds_version) -> tuple[tuple[DevItem, ...], ...]:
    seeds = [r["dialogue"] for r in read_seeds(seeds_path).to_pylist()]
    spelled = casing(seeds)

    def spell(text: str) -> str:
        return truecase(text, spelled)

    kept = [DevItem(i.id, tuple(map(spell, i.utterances)), spell(i.right), tuple(map(spell, i.wrong)), i.line,
                    i.alternates) for i in held_out(read_dev(path), seeds) if i.alternates]
    return tuple(tuple(group) for group in conversations(kept))
