"""What the commands print: a line made safe for a terminal, and a counted noun."""

from __future__ import annotations

import sys


def say(text: str = "", *, file=None) -> None:
    """Print a line for a terminal: its control characters made visible (``textsafe``), so model output in a
    leaderboard, or a name in a path, runs no escape sequence."""
    from dialogbench.text.textsafe import visible

    print(visible(text), file=file or sys.stdout)


def count(n: int, word: str, plural: str | None = None) -> str:
    """``1 model``, ``2 models``."""
    return f"{n} {word if n == 1 else plural or word + 's'}"
