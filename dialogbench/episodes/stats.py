"""What a run of episodes has done so far: its own module so that the stepping loop (``stepper``), which counts it,
and the progress line (``progress``), which reports it, both import it and neither imports the other."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RunStats:
    steps: int = 0
    backend_calls: int = 0
    moves: int = 0  # requests sent
    trimmed_prompts: int = 0  # requests whose prompt was cut to fit
    finished: int = 0  # episodes done
    batch_sizes: list[int] = field(default_factory=list)
