"""The report's sections as renderer-neutral pieces: formatted tables (headers + rows of strings), optional
SVG charts (HTML only), an intro, and blocks a family rendered itself. ``html`` and ``markdown`` render them."""

from __future__ import annotations

from dataclasses import dataclass, field

NO_DATA = "No data yet."


@dataclass
class Table:
    headers: list[str]
    rows: list[list[str]]
    caption: str = ""
    numeric_from: int = 1  # columns from this index are right-aligned
    collapsed: bool = False  # HTML: folded under its caption (long detail tables)
    # header rows above ``headers``, top first, each [(label, colspan)] covering every column once
    # (HTML: a multi-row <thead>; Markdown: a line naming each column's labels)
    groups: list[list[tuple[str, int]]] = field(default_factory=list)


@dataclass
class Block:
    """Content a family renders itself (e.g. BotChat's flagged dialogues), as HTML and as Markdown."""

    html: str
    markdown: str


@dataclass
class Section:
    id: str
    title: str
    intro: str = ""  # the text that explains the section: shown after its tables, charts and blocks
    tables: list[Table] = field(default_factory=list)
    charts: list[tuple[str, str]] = field(default_factory=list)  # (caption, svg)
    empty: str | None = None  # set when there is nothing to show
    blocks: list[Block] = field(default_factory=list)  # after the tables and charts
    tables_first: bool = False  # HTML: the (non-collapsed) tables before the charts
    lead: bool = False  # its first table is the family's lead table (HTML: class "lb"); the intro is a list of notes
    warnings: list[str] = field(default_factory=list)  # shown first, under the title (checks.py); cells marked ⚠


def pct(v) -> str:
    return "–" if v is None else f"{float(v) * 100:.1f}%"


def num(v, digits: int = 1) -> str:
    return "–" if v is None else f"{float(v):,.{digits}f}"
