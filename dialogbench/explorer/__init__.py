"""The dialogue explorer: one self-contained page where every judged dialogue, MT-Bench-101 turn and GameEval
game can be read with the judge's raw output and what was parsed from it, filtered by family, model, judge,
verdict, unparseable only and free text. Each family contributes its records through ``Family.explorer``
(``records``); ``collect`` asks them, ``page`` renders, ``embed`` escapes the data, ``build`` writes the file."""

from dialogbench.explorer.build import write_explorer

__all__ = ["write_explorer"]
