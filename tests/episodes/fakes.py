"""A recording backend and a scripted episode for the engine's tests."""

from __future__ import annotations

from dialogbench.backends.base import BatchStats, Completion
from dialogbench.episodes import Reply, Request


def words(messages) -> int:
    return sum(len(m["content"].split()) for m in messages)


class Recorder:
    """Counts words; replies ``"<name>:<n>"`` (n = calls so far), or fails the prompts whose last
    message is in ``fail``; ``explode`` makes ``generate`` raise."""

    def __init__(self, name: str = "m", *, fail: set[str] = frozenset(), explode: bool = False) -> None:
        self.name, self.fail, self.explode = name, set(fail), explode
        self.calls: list[dict] = []
        self.counts: list[int] = []  # size of each count_tokens_many call
        self.single_counts = 0
        self.stats, self.version = BatchStats(), "rec"

    def count_tokens(self, conversation) -> int:
        self.single_counts += 1
        return words(conversation)

    def count_tokens_many(self, conversations) -> list[int]:
        self.counts.append(len(conversations))
        return [words(c) for c in conversations]

    def generate(self, conversations, *, sampling, seeds=None, formats=None) -> list[Completion]:
        if self.explode:
            raise RuntimeError("server down")
        self.calls.append({"prompts": [list(c) for c in conversations], "seeds": seeds, "formats": formats})
        return [Completion(text=None, error="nope") if c[-1]["content"] in self.fail
                else Completion(text=f"{self.name}:{len(self.calls)}", completion_tokens=1) for c in conversations]


def user(text: str) -> dict:
    return {"role": "user", "content": text}


class Talk:
    """An episode asking ``models`` (one request each per step) for ``steps`` steps; the prompt is
    its history (one message per earlier reply) then ``"<name> step k"``."""

    def __init__(self, name: str, *, models=("m",), steps: int = 1, seed: int | None = None, history=()) -> None:
        self.name, self.models, self.left, self.seed = name, models, steps, seed
        self.history = list(history)
        self.replies: list[list[Reply]] = []

    @property
    def done(self) -> bool:
        return self.left == 0

    def pending(self) -> list[Request]:
        prompt = [*self.history, user(f"{self.name} step {len(self.replies)}")]
        return [Request(model=m, messages=prompt, seed=self.seed, tag=(self.name, m)) for m in self.models]

    def resolve(self, replies: list[Reply]) -> None:
        self.replies.append(replies)
        self.left -= 1
