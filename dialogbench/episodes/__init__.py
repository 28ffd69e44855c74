"""One episode engine and one context fitter for everything that talks to models turn by turn:
BotChat dialogues, GameEval games, MT-Bench-101 answers.

* ``protocol``: ``Episode`` (pending → requests, resolve ← replies, done), ``Request``, ``Reply``, ``Seat``.
* ``fit``: ``Fit`` (what a prompt may lose) and ``fit_prompt`` (the one fitter).
* ``batch``: ``send``, one backend call for one model's requests.
* ``stepper``: ``run_episodes``, the stepping loop.
* ``stats``: ``RunStats``, what a run has done (counted by the stepper, reported by the progress line).
* ``progress``: the periodic progress line.
"""

from dialogbench.episodes.batch import send
from dialogbench.episodes.fit import Fit, fit_prompt
from dialogbench.episodes.progress import Progress
from dialogbench.episodes.protocol import Episode, Reply, Request, Seat
from dialogbench.episodes.stats import RunStats
from dialogbench.episodes.stepper import run_episodes, step

__all__ = ["Episode", "Fit", "Progress", "Reply", "Request", "RunStats", "Seat", "fit_prompt", "run_episodes",
           "send", "step"]
