"""``dialogbench report``: the BotChat results as a self-contained HTML page and a Markdown file."""

from dialogbench.report.build import render, write_report

__all__ = ["render", "write_report"]
