"""The oracle the episode engine's fitting is checked against: the MT-Bench-101 answering's own rule, written out
plainly (drop the oldest (user, assistant) turns until the prompt fits)."""

from __future__ import annotations

from dialogbench.mtbench101.answer_cells import conversation


def fit_conversation(pairs: list[tuple[str, str]], user_message: str, *, count_tokens, budget: int
                     ) -> tuple[list[dict[str, str]], int]:
    """The conversation with the oldest (user, assistant) turns dropped until its prompt fits ``budget``
    tokens (the current user message always stays); returns it and how many turns were dropped."""
    dropped = 0
    messages = conversation(pairs, user_message)
    while dropped < len(pairs) and count_tokens(messages) > budget:
        dropped += 1
        messages = conversation(pairs[dropped:], user_message)
    return messages, dropped
