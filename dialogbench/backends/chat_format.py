"""Fit a conversation to what a chat template accepts (system role, leading assistant message)."""

from __future__ import annotations

from dialogbench.backends.base import Conversation


def adapt_conversation(
    conversation: Conversation, *, system_native: bool, leading_assistant_native: bool, filler: str
) -> Conversation:
    """Return a copy of ``conversation`` that a template with these abilities will render.

    - Without a native system role, the system text becomes (the start of) the first user message.
    - Without leading-assistant support, a user message goes first: the system text if it has to
      move anyway, else ``filler``.
    """
    messages = [dict(m) for m in conversation]
    system = messages.pop(0)["content"] if messages and messages[0]["role"] == "system" else None
    starts_with_assistant = bool(messages) and messages[0]["role"] == "assistant"

    if system is not None and not system_native:
        if starts_with_assistant or not messages:
            # The system text itself is the user turn that precedes the assistant's first line.
            messages.insert(0, {"role": "user", "content": system})
        else:
            messages[0]["content"] = f"{system}\n\n{messages[0]['content']}"
        system = None
    elif starts_with_assistant and not leading_assistant_native:
        messages.insert(0, {"role": "user", "content": filler})

    return ([{"role": "system", "content": system}] if system is not None else []) + messages


def probe_template(render) -> tuple[bool, bool]:
    """Ask a renderer (a callable taking a conversation, raising if the template rejects it)
    whether it accepts a system message and a leading assistant message."""

    def accepts(conversation: Conversation) -> bool:
        try:
            render(conversation)
            return True
        except Exception:  # templates raise their own error types (jinja, TemplateError, ValueError)
            return False

    system = accepts([{"role": "system", "content": "s"}, {"role": "user", "content": "u"}])
    leading = accepts([{"role": "assistant", "content": "a"}, {"role": "user", "content": "u"}])
    return system, leading


class TemplatedChat:
    """What a backend that fits conversations to a chat template shares: ``system_native`` /
    ``leading_native`` (what the template accepts, set by the backend), ``_adapt`` to fit a conversation,
    and, for a backend with a local tokenizer, ``_render`` (the prompt text) and ``count_tokens``."""

    system_native: bool = True
    leading_native: bool = True

    def _adapt(self, conversation: Conversation) -> Conversation:
        return adapt_conversation(conversation, system_native=self.system_native,
                                  leading_assistant_native=self.leading_native,
                                  filler=self.model.chat_template.filler)

    def _render(self, conversation: Conversation) -> str:
        return self.tokenizer.apply_chat_template(conversation, tokenize=False, add_generation_prompt=True)

    def count_tokens(self, conversation: Conversation) -> int:
        return self.count_tokens_many([conversation])[0]
