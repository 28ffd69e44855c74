"""The labels of a chart's runs along its x axis, for every chart drawn over a board's runs (the report's "Trends",
the judge checks' history): its own module so that a family's report section draws with it without importing
``trends``, which reads the run's families and builds on the report's other parts (``ahead``, the explorer's
links)."""

from __future__ import annotations


def run_labels(runs: list[tuple[int, object, str]]) -> list[str]:
    """Each run's label: its date (month-day), with the time where two runs share a date, the seconds where they
    share a minute too, and the run id where even those are the same (its id alone without a time)."""
    labels = [run if at is None else f"{at:%m-%d}" for _, at, run in runs]
    for finer in ("%m-%d %H:%M", "%m-%d %H:%M:%S"):
        labels = [f"{at:{finer}}" if at is not None and labels.count(label) > 1 else label
                  for (_, at, _), label in zip(runs, labels)]
    return [f"{label} {run}" if labels.count(label) > 1 else label for (_, _, run), label in zip(runs, labels)]
