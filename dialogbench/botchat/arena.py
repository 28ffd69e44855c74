"""BotChat Arena and GTEval: two conversations side by side, the judge says which one is AI involved.

The Arena prompt is the BotChat README's, verbatim. GTEval uses the same prompt with one sentence
changed: exactly one of the two conversations contains AI-generated utterances (the README states this
difference but does not publish the text). Both keep the Both / Neither options, so ties exist.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Sequence

from dialogbench.backends.base import Conversation
from dialogbench.backends.formats import OutputFormat, text_budget
from dialogbench.botchat.unieval import render_dialogue
from dialogbench.cells.keys import fingerprint
from dialogbench.text.reply_numbers import NUMBER, bounded_int

Kind = Literal["arena", "gteval"]
PARSER_VERSION = "arena-parser-v1"
VERDICTS = ("conversation_1", "conversation_2", "both", "neither")

ARENA_PROMPT = """
You are an AI assistant who helps human do the Turing test more easily. 
You will be provided with two conversations, and there can be AI-generated utterance in each conversation. 
You need to read both conversations and judge if two conversations are AI involved. \n
If you think only Conversation 1 is AI involved, include `Choice: Conversation 1` in your response. \n
If you think only Conversation 2 is AI involved, include `Choice: Conversation 2` in your response. \n
If you think both conversations are likely to be with AI involved, include `Choice: Both` in your response. \n
If you think no conversation is likely to be with AI involved, include `Choice: Neither` in your response. \n
You also need to provide your reason for your choice.\n
Your response should use the following format:\n
Choice: Conversation 1\nReason: BlahBlah\nor\n
Choice: Conversation 2\nReason: BlahBlah\nor\n
Choice: Both\nReason: BlahBlah\nor\n
Choice: Neither\nReason: BlahBlah\n\n
"""

GT_PROMPT = ARENA_PROMPT.replace(
    "and there can be AI-generated utterance in each conversation.",
    "and exactly one of them contains AI-generated utterances (the other one is a real human conversation).")

# Without a closing request small judges continue the second conversation instead of judging.
# (The same shape as UniEval's request, which SmolLM2-135M follows.) An echo of the request names
# several options ("Choice: Conversation 1, Conversation 2, Both or Neither") and is left unparsed.
ANSWER_REQUEST = ("Now give your judgment of these two conversations. Answer in the format:\n"
                  "Choice: Conversation 1, Conversation 2, Both or Neither\nReason: your reason")
_PROMPTS = {"arena": ARENA_PROMPT, "gteval": GT_PROMPT}


def render_pair(conv1: Sequence[str], conv2: Sequence[str]) -> str:
    """Both conversations in the UniEval rendering (``A: …<chat_end>``), headed as the prompt names them."""
    return f"Conversation 1:{render_dialogue(conv1)}\nConversation 2:{render_dialogue(conv2)}"


def build_prompt(conv1: Sequence[str], conv2: Sequence[str], *, kind: Kind = "arena") -> Conversation:
    """The meta prompt, the two conversations appended (as the README does), the answer request; one user message."""
    content = "\n".join([_PROMPTS[kind].strip(), "", render_pair(conv1, conv2).rstrip(), "", ANSWER_REQUEST])
    return [{"role": "user", "content": content}]


def output_format(*, max_tokens: int) -> OutputFormat:
    """The answer the prompt asks for, as a regex: one of the four options, then a one-line reason
    short enough that the reply ends within ``max_tokens``."""
    reason = text_budget(max_tokens, reserved=12)
    return OutputFormat(name="arena", regex=rf"Choice: (?:Conversation 1|Conversation 2|Both|Neither)\nReason: [^\n]{{1,{reason}}}")


def protocol_version(kind: Kind) -> str:
    """Changes whenever the prompt text, the answer request or the parser change."""
    return fingerprint(f"botchat_{kind}", _PROMPTS[kind], ANSWER_REQUEST, PARSER_VERSION)


@dataclass(frozen=True)
class ArenaVerdict:
    parsed: bool
    verdict: str | None = None  # one of VERDICTS: the conversation(s) the judge found AI involved
    reason: str | None = None
    error: str | None = None


_LABEL = re.compile(r"\b(?:choice|answer|verdict)\b", re.IGNORECASE)
_END = re.compile(r"[\n;]|\breason\b", re.IGNORECASE)  # where a Choice value ends
_CUT = re.compile(r"\.(?!\d)|\(|\b(?:because|since|as|while|whereas)\b", re.IGNORECASE)  # prose after the value
# A number where an option's number goes (leading, after "Conversation", after "or" / "and"), read whole
# (reply_numbers.NUMBER): "1.5", "-1", "1e30", 10**40 are no conversation, never conversation 1.
_OPTION_NUMBER = re.compile(r"(?:^(?:-\s+)?|(?:conversation|conv|dialogue)\s*#?\s*|\b(?:or|and)\s+)(" + NUMBER + ")",
                            re.IGNORECASE)
_SIGNLESS_NOISE = "*_`\"'“”‘’[]{}<>:：=# \t"  # _NOISE without what may start a number (a sign, a decimal point)
_LEADING = re.compile(r"([12])\b|(none)\b", re.IGNORECASE)  # "Choice: 2", "Choice: None"
_NAMED = re.compile(r"(?:conversation|conv|dialogue)\s*#?\s*([12])\b|\b(both|neither)\b|\b(?:or|and)\s+([12])\b",
                    re.IGNORECASE)
_REASON = re.compile(r"reason\W{0,4}\s*[:：\-]\s*(?:\*{1,2}\s*)?(.*)", re.IGNORECASE | re.DOTALL)
_NOISE = "*_`\"'“”‘’[]{}<>:：-=#. \t"


def _option(value: str) -> tuple[str | None, str | None]:
    """The verdict a ``Choice`` value names, or an error when it names two different ones
    ("Conversation 1 or Conversation 2", an echo of the answer request) or a number that is no conversation."""
    for number in _OPTION_NUMBER.finditer(_CUT.split(value.lstrip(_SIGNLESS_NOISE), maxsplit=1)[0]):
        error = bounded_int(number.group(1), low=1, high=2, name="Choice: conversation").error
        if error:
            return None, error
    value = _CUT.split(value.lstrip(_NOISE), maxsplit=1)[0]
    found = []
    leading = _LEADING.match(value)
    if leading:
        found.append(f"conversation_{leading.group(1)}" if leading.group(1) else "neither")
    for match in _NAMED.finditer(value):
        digit = match.group(1) or match.group(3)
        found.append(f"conversation_{digit}" if digit else match.group(2).lower())
    distinct = list(dict.fromkeys(found))
    if not distinct:
        return None, None
    if distinct[0] == "both" and set(distinct[1:]) <= {"conversation_1", "conversation_2"}:
        return "both", None  # "Both (Conversation 1 and Conversation 2)"
    if len(distinct) > 1:
        return None, f"ambiguous choice {value.strip()[:60]!r}"
    return distinct[0], None


def _reason(text: str, start: int) -> str | None:
    match = _REASON.search(text, start)
    return match.group(1).strip().strip("\"'`").strip() if match else None


def parse_arena_verdict(text: str | None) -> ArenaVerdict:
    """Tolerant of markdown, quotes, case, ``Choice: 1`` and the paper's ``Choice: …; Reason: …``;
    also a first line that is only the option ("Conversation 2", "**Both**"). Strict about meaning:
    nothing found, or two different options named, is unparsed (never a guessed tie)."""
    if not text or not text.strip():
        return ArenaVerdict(parsed=False, error="empty judge output")
    for label in _LABEL.finditer(text):
        verdict, error = _option(_END.split(text[label.end():], maxsplit=1)[0])
        if error:
            return ArenaVerdict(parsed=False, error=error)
        if verdict:
            return ArenaVerdict(parsed=True, verdict=verdict, reason=_reason(text, label.end()))
    first = text.strip().splitlines()[0].strip(_NOISE + "!,;")
    if re.fullmatch(r"(?:conversation\s*[12]|both|neither)", first, re.IGNORECASE):
        return ArenaVerdict(parsed=True, verdict=_option(first)[0], reason=_reason(text, 0))
    return ArenaVerdict(parsed=False, error="no 'Choice: Conversation 1/Conversation 2/Both/Neither' found")


def winner_for(verdict: str | None) -> str | None:
    """The judge names the AI-involved conversation, so the *other* side wins: ``conversation_2`` →
    ``model_a`` (shown first) wins; both / neither → ``tie``; no verdict → None (never a tie)."""
    return {"conversation_1": "model_b", "conversation_2": "model_a", "both": "tie", "neither": "tie"}.get(verdict or "")
