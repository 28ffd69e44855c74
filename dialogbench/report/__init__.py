"""``dialogbench report``: the results as a self-contained HTML page and a Markdown file, a section (or several)
per family that registers a ``Family.report`` (``section.ReportSection``), in registry order."""

from dialogbench.report.build import render, write_report

__all__ = ["render", "write_report"]
