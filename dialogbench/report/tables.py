"""The report's sections as renderer-neutral pieces: formatted tables (headers + rows of strings), optional
SVG charts (HTML only), an intro, and blocks a family rendered itself. ``html`` and ``markdown`` render them."""

from __future__ import annotations

from dataclasses import dataclass, field

NO_DATA = "No data yet."


class Tipped(str):
    """A cell's text with a ``tip`` (plain text): the HTML page puts it in the cell's ``title`` (shown on hover),
    Markdown shows the text alone. A ``str`` in every other way; text made from it is a plain ``str`` again."""

    tip: str | None

    def __new__(cls, text: str, tip: str | None = None) -> "Tipped":
        made = super().__new__(cls, text)
        made.tip = tip
        return made

    def __reduce__(self):
        return Tipped, (str(self), self.tip)


class Linked(Tipped):
    """A cell's text that links somewhere (``href``, unescaped): the HTML page wraps the cell in a link, Markdown shows
    the text alone. A ``str`` in every other way, so rows compare and format as before; text made from it (joined,
    flagged) is a plain ``str`` again, so ``link`` what is finished."""

    href: str

    def __new__(cls, text: str, href: str, tip: str | None = None) -> "Linked":
        made = super().__new__(cls, text, tip)
        made.href = href
        return made

    def __reduce__(self):
        return Linked, (str(self), self.href, self.tip)


def link(text: str, href: str | None) -> str:
    """``text`` linking to ``href`` (its ``tip`` kept); as it is without one, or when it is no number ("–")."""
    return Linked(text, href, getattr(text, "tip", None)) if href and text != "–" else text


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
    unbroken: tuple[int, ...] = ()  # columns whose cells never wrap (HTML): a lead table's model names


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


def column_chunks(t: Table, keep: int, size: int) -> list[Table]:
    """``t`` cut into tables of at most ``size`` columns after its first ``keep`` (repeated in each), so that a table
    with many like columns (a rate per N) fits the page's width; each caption says which columns it holds."""
    rest = range(keep, len(t.headers))
    parts = [list(rest[i:i + size]) for i in range(0, len(rest), size)] or [[]]
    if len(parts) == 1:
        return [t]
    out = []
    for part in parts:
        columns = [*range(keep), *part]
        span = t.headers[part[0]].split("\n")[0] + (f" to {t.headers[part[-1]].split(chr(10))[0]}"
                                                     if len(part) > 1 else "")
        out.append(Table([t.headers[i] for i in columns], [[row[i] for i in columns] for row in t.rows],
                         f"{t.caption} ({span})" if t.caption else span, min(t.numeric_from, keep),
                         t.collapsed))
    return out
