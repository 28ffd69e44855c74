"""The dialogue explorer: one self-contained page where every judged dialogue, MT-Bench-101 turn and GameEval
game can be read with the judge's raw output and what was parsed from it, filtered by family, model, judge,
verdict, unparseable only and free text; folded above them, the board's trend charts (the report's: ``trends``).
Each family contributes its records through ``Family.explorer`` (``records``); ``collect`` asks them, ``page``
renders, ``embed`` escapes the data, ``build`` writes the file. ``hrefs`` writes the addresses of filtered views (the
report links each number to the items behind it), ``links`` those of a headline metric's slice."""

__all__ = ["write_explorer"]


def __getattr__(name: str):
    """``write_explorer`` on first use: the report imports ``explorer.links``, and ``build`` imports the report."""
    if name == "write_explorer":
        from dialogbench.explorer.build import write_explorer

        return write_explorer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
