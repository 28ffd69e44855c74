"""UniEval: one judge call per dialogue; parse Choice / Index / Reason; pass@N from the first AI index."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from dialogbench.backends.base import Conversation
from dialogbench.backends.formats import OutputFormat, text_budget
from dialogbench.botchat.prompts import UNIEVAL_PROMPT
from dialogbench.text.jsonl import DatasetError, read_json
from dialogbench.cells.keys import fingerprint
from dialogbench.text.reply_numbers import NUMBER, bounded_int

PARSER_VERSION = "unieval-parser-v3"
ANSWER_REQUEST = ("Now give your judgment of this conversation. Answer in the format:\n"
                  "Choice: Yes or No\nIndex: n or None\nReason: your reason")
SPEAKERS = ("A", "B")


def render_dialogue(utterances: Sequence[str]) -> str:
    """``A: …<chat_end>`` lines, speakers alternating from A, as in the in-context examples."""
    chats = [f"{SPEAKERS[i % 2]}: {text}<chat_end>" for i, text in enumerate(utterances)]
    return "\n" + "\n\n".join(chats) + "\n"


def load_examples(path: str | Path) -> list[dict]:
    """The in-context examples: a JSON list of objects with ``conv``, ``choice``, ``index``, ``reason`` (read within
    ``jsonl.LIMITS``); a DatasetError naming the file and example otherwise."""
    examples = read_json(path)
    if not isinstance(examples, list):
        raise DatasetError(f"{path}: expected a JSON list of examples, got {type(examples).__name__}")
    for i, example in enumerate(examples):
        if not isinstance(example, dict):
            raise DatasetError(f"{path}: example {i}: expected an object, got {type(example).__name__}")
        missing = {"conv", "choice", "index", "reason"} - set(example)
        if missing:
            raise DatasetError(f"{path}: example {i}: missing fields {sorted(missing)}")
    return examples


def build_prompt(utterances: Sequence[str], examples: Sequence[dict]) -> Conversation:
    """The UniEval prompt, the in-context examples (each a conversation and the expected answer),
    the conversation to judge, and a closing line that asks for the answer (without it, small judges
    continue the conversation instead of judging it); one user message."""
    parts = [UNIEVAL_PROMPT.strip(), "", "Here are some examples:"]
    for i, ex in enumerate(examples, 1):
        parts += [f"Example {i}:", f"Conversation:{ex['conv'].rstrip()}", "",
                  f"Choice: {ex['choice']}\nIndex: {ex['index']}\nReason: {ex['reason'].strip()}", ""]
    parts += ["Now judge this conversation:", f"Conversation:{render_dialogue(utterances).rstrip()}", "",
              ANSWER_REQUEST]
    return [{"role": "user", "content": "\n".join(parts)}]


def output_format(*, n_utterances: int, max_tokens: int) -> OutputFormat:
    """The answer the prompt asks for, as a regex: ``Choice: Yes`` with an ``Index`` in
    1..n_utterances, or ``Choice: No`` with ``Index: None``; then a one-line reason short enough
    that the reply ends within ``max_tokens``."""
    indices = "|".join(str(i) for i in range(n_utterances, 0, -1))
    reason = text_budget(max_tokens, reserved=16)
    return OutputFormat(name="unieval", regex=rf"Choice: (?:Yes\nIndex: (?:{indices})|No\nIndex: None)\nReason: [^\n]{{1,{reason}}}")


def protocol_version(examples: Sequence[dict]) -> str:
    """Changes whenever the prompt text, the examples or the parser change."""
    return fingerprint("botchat_unieval", UNIEVAL_PROMPT, list(examples), PARSER_VERSION, ANSWER_REQUEST)


@dataclass(frozen=True)
class Verdict:
    parsed: bool
    choice: str | None = None  # "Yes" (AI involved) or "No"
    index: int | None = None  # first AI utterance, 1-based, when choice is Yes
    reason: str | None = None
    error: str | None = None


_CHOICE = re.compile(r"choice\W{0,4}\s*[:：\-]?\s*\W{0,2}\s*(yes|no)\b", re.IGNORECASE)
# An Index's value is read whole (reply_numbers.NUMBER: "-1", "1e3", "3.5", 10**40 are numbers, not a 1 or a 3); the
# markup before it may not eat a sign, and a dash separates only when a space follows ("Index - 3", not "Index -3").
_INDEX = re.compile(r"index[^\w+\-.]{0,4}\s*(?:[:：]|-(?=\s))?\s*[^\w+\-.]{0,2}\s*(none|n/a|null|" + NUMBER + ")",
                    re.IGNORECASE)
_BARE = re.compile(r"^\W{0,3}(yes|no)\W{0,3}$", re.IGNORECASE)  # a first line that is only "No." / "**Yes**"
_REASON = re.compile(r"reason\W{0,4}\s*[:：\-]\s*(?:\*{1,2}\s*)?(.*)", re.IGNORECASE | re.DOTALL)


def parse_verdict(text: str | None, *, n_utterances: int) -> Verdict:
    """Tolerant of markdown (``**Choice:** Yes``), case, extra prose; strict about meaning: a
    ``Yes`` needs an integer index in 1..n_utterances, else the verdict is recorded as unparseable (and its
    index is not kept: a stored ``ai_index`` is always an utterance of the judged dialogue)."""
    if not text or not text.strip():
        return Verdict(parsed=False, error="empty judge output")
    choice_match = _CHOICE.search(text) or _BARE.match(text.strip().splitlines()[0].strip())
    if not choice_match:
        return Verdict(parsed=False, error="no 'Choice: Yes/No' found")
    choice = choice_match.group(1).capitalize()
    reason_match = _REASON.search(text, choice_match.end())
    reason = reason_match.group(1).strip() if reason_match else None
    if choice == "No":
        return Verdict(parsed=True, choice="No", reason=reason)
    index_match = _INDEX.search(text, choice_match.end())
    if not index_match or index_match.group(1).lower() in ("none", "n/a", "null"):
        return Verdict(parsed=False, choice="Yes", reason=reason, error="'Choice: Yes' without a numeric Index")
    # an utterance of the judged dialogue (the authors' meaning of Index), else unparsed with no index stored
    index = bounded_int(index_match.group(1), low=1, high=n_utterances, name="Index")
    if index.error:
        return Verdict(parsed=False, choice="Yes", reason=reason, error=index.error)
    return Verdict(parsed=True, choice="Yes", index=index.value, reason=reason)


def passes_at(verdict: Verdict, n: int) -> bool | None:
    """pass@N (BotChat README): no AI found, or the first AI utterance comes after the N-th."""
    if not verdict.parsed:
        return None
    return verdict.choice == "No" or (verdict.index is not None and verdict.index > n)


def typical_verdict_tokens(path, *, cap: int, choice: bool = True) -> float | None:
    """The tokens a BotChat verdict takes by the authors' in-context examples (``path``): ``Choice: …``, ``Index: …``
    and ``Reason: …`` as they write them, each capped at ``cap``; with ``choice`` False only the choice and the reason
    (Arena's and GTEval's verdicts name a conversation and give a reason, in the same style). What ``dialogbench
    plan`` expects a judge's verdict to take before the lake has a history of it."""
    from dialogbench.text.lengths import typical_reply_tokens

    return typical_reply_tokens(
        (f"Choice: {ex['choice']}\n" + (f"Index: {ex['index']}\n" if choice else "") + f"Reason: {ex['reason'].strip()}"
         for ex in load_examples(path)), cap=cap)
