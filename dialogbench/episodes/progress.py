"""A progress line every so often while episodes run."""

from __future__ import annotations

import logging
import time

from dialogbench.episodes.stats import RunStats


class Progress:
    """Logs ``step N: D <noun> done, F in flight, M moves in C backend calls`` to ``log`` at most
    once per ``every_s`` seconds (None: never)."""

    def __init__(self, log: logging.Logger | None = None, *, every_s: float | None = 30.0,
                 noun: str = "episodes") -> None:
        self.log = log or logging.getLogger("dialogbench.episodes")
        self.every_s, self.noun = every_s, noun
        self._last = time.monotonic()

    def start(self) -> None:
        self._last = time.monotonic()

    def tick(self, stats: RunStats, *, in_flight: int) -> None:
        if self.every_s is None or time.monotonic() - self._last <= self.every_s:
            return
        self._last = time.monotonic()
        self.log.info("step %d: %d %s done, %d in flight, %d moves in %d backend calls",
                      stats.steps, stats.finished, self.noun, in_flight, stats.moves, stats.backend_calls)
