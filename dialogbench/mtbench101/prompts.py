"""The MT-Bench-101 judge prompts (appendix C, Figures 21–34) and the judge conversation.

Appendix C: "For each task, we concatenate a uniform initial instruction [Fig. 21], unique
evaluation prompts tailored to the specific task [Figs. 23–34], and a consistent scoring format
[Fig. 22]". Content rephrasing and format rephrasing share one prompt (Fig. 28, "rephrasing
task"), so 12 figures cover the 13 tasks.

The text is the paper's, transcribed from a PDF text extraction; ``TRANSCRIPTION_NOTES`` lists
every place the extraction was garbled and how it was resolved. Line structure (one criterion or
guideline a line, blank lines between paragraphs) is restored from the figure layout; the
typographic quotes (‘Human’) are the paper's.

The judge's user message is the authors' code's (OpenCompass, ``datasets/subjective/mtbench101.py``,
``eval_prompt_construct``) in layout: ``DIALOGUE_FRAMING`` (their line, kept word for word), the dialogue
inside ``***`` marks, then for MR and GR the reference solution inside ``###`` marks. Their code passes
as that reference the golden dialogue so far (every golden turn through the judged one, its golden reply
included); ``reference_text`` gives it (``dialogue``) or the judged turn's golden reply alone (``turn``).
"""

from __future__ import annotations

from typing import Sequence

from dialogbench.mtbench101._prompt_text import INITIAL_INSTRUCTION, SCORING_FORMAT, TASK_PROMPTS, TRANSCRIPTION_NOTES
from dialogbench.mtbench101.dataset import Turn
from dialogbench.mtbench101.taxonomy import task as _task

__all__ = ["INITIAL_INSTRUCTION", "SCORING_FORMAT", "TASK_PROMPTS", "TRANSCRIPTION_NOTES", "REFERENCE_TASKS",
           "DIALOGUE_FRAMING", "REFERENCE_FORMS", "system_prompt", "render_dialogue", "reference_text",
           "judge_messages"]

#: Tasks whose criteria check the answer "against the provided reference solution in the format
#: ‘### reference solution ###’" (Figs. 31, 32); ``reference_text`` gives that reference.
REFERENCE_TASKS: frozenset[str] = frozenset({"MR", "GR"})

#: The line before the judged dialogue in the authors' code (grammar theirs); the paper shows none.
DIALOGUE_FRAMING = "The dialogue need to be judged is:"

#: The forms of the MR / GR reference (``mtbench101.reference``): the golden dialogue through the judged
#: turn (the authors' code), or the judged turn's golden reply alone.
REFERENCE_FORMS = ("dialogue", "turn")


def system_prompt(task: str) -> str:
    """Fig. 21 + the task's figure + Fig. 22, as appendix C concatenates them."""
    _task(task)  # a KeyError naming the valid codes
    return "\n\n".join((INITIAL_INSTRUCTION, TASK_PROMPTS[task], SCORING_FORMAT))


def render_dialogue(*, history_turns: Sequence[tuple[str, str]], user_message: str, answer: str) -> str:
    """The dialogue inside ``***`` marks, each turn as ``Human:`` / ``Assistant:`` (the speaker tags of
    the paper's data and case figures). The golden ``history_turns`` come first; the evaluated
    ``answer`` is the only reply of the last round, which the instructions tell the judge to score."""
    return "***\n" + _rounds([*history_turns, (user_message, answer)]) + "\n***"


def _rounds(pairs: Sequence[tuple[str, str]]) -> str:
    return "\n\n".join(f"Human: {user}\n\nAssistant: {bot}" for user, bot in pairs)


def _pair(turn: Turn | tuple[str, str]) -> tuple[str, str]:
    """A golden turn as (user, bot), from a ``dataset.Turn`` or a 2-tuple."""
    if isinstance(turn, Turn):
        return (turn.user, turn.bot)
    user, bot = turn
    return (user, bot)


def reference_text(form: str, golden_turns: Sequence[Turn | tuple[str, str]]) -> str:
    """The MR / GR reference solution of the last of ``golden_turns`` (the dataset's turns through the
    judged one): ``dialogue``, all of them as ``Human:`` / ``Assistant:`` rounds (the authors' code passes
    this golden dialogue so far, as a list of role/content messages); ``turn``, the judged turn's golden
    reply alone."""
    pairs = [_pair(t) for t in golden_turns]
    if not pairs:
        raise ValueError("reference_text: no golden turn (the judged turn is the last one)")
    if form == "dialogue":
        return _rounds(pairs)
    if form == "turn":
        return pairs[-1][1]
    raise ValueError(f"unknown reference form {form!r} (expected one of: {', '.join(REFERENCE_FORMS)})")


def judge_messages(*, task: str, history_turns: Sequence[Turn | tuple[str, str]], user_message: str,
                   answer: str, reference: str | None = None) -> list[dict[str, str]]:
    """The judge conversation: the concatenated rubric as the system message, the user message
    ``DIALOGUE_FRAMING`` then the rendered dialogue. ``history_turns`` are ``dataset.Turn``s or (user,
    bot) pairs. MR and GR need ``reference`` (``reference_text``); it is appended as ``###``-delimited
    text, which is how we read "in the format ‘### reference solution ###’" (the paper shows no
    rendered example; the authors' code appends it so, after "The reference solution is:")."""
    system = system_prompt(task)
    pairs = [_pair(t) for t in history_turns]
    content = DIALOGUE_FRAMING + "\n" + render_dialogue(history_turns=pairs, user_message=user_message, answer=answer)
    if task in REFERENCE_TASKS:
        if not reference or not reference.strip():
            raise ValueError(f"task {task} is judged against a reference solution; pass reference=")
        content += f"\n\nThe reference solution is:\n###\n{reference}\n###"
    return [{"role": "system", "content": system}, {"role": "user", "content": content}]
