"""The report as Markdown: the same sections and tables as the HTML page; charts are left out (their
numbers are in the tables beside them). Text is escaped so model output cannot break a table or inject HTML, and
the finished text has its control characters made visible (``textsafe``): printing report.md in a terminal runs no
escape sequence."""

from __future__ import annotations

from dialogbench.report.tables import Section, Table
from dialogbench.text.textsafe import visible


def esc(text: object) -> str:
    s = " ".join(str(text).split())
    for a, b in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("\\", "\\\\"), ("|", "\\|"), ("`", "\\`"),
                 ("*", "\\*"), ("_", "\\_"), ("](", "]\\(")):
        s = s.replace(a, b)
    return s


def table(t: Table) -> str:
    lines = [f"*{esc(t.caption)}*", ""] if t.caption else []
    if t.groups:  # each column's group labels, e.g. "CM: Perceptivity / Memory"
        spans = [[label for label, span in row for _ in range(span)] for row in t.groups]
        named = [f"{h}: {' / '.join(g[i] for g in spans if i < len(g) and g[i])}"
                 for i, h in enumerate(t.headers) if any(i < len(g) and g[i] for g in spans)]
        lines += ["Columns: " + esc("; ".join(named)) + ".", ""]
    lines.append("| " + " | ".join(esc(h) for h in t.headers) + " |")  # esc() folds a cell's lines into one
    lines.append("|" + "|".join("---:" if i >= t.numeric_from else ":---" for i in range(len(t.headers))) + "|")
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in t.rows]
    return "\n".join(lines)


def section(s: Section) -> str:
    """Title, Warnings, then the tables and blocks, then the text that explains them (as the HTML page)."""
    parts = [f"## {s.title}"]
    if s.empty:
        return "\n\n".join(parts + [f"_{esc(s.empty)}_"])
    if s.warnings:
        parts.append("**Warnings**\n\n" + "\n".join(f"- {esc(w)}" for w in s.warnings))
    parts += [table(t) for t in s.tables]
    if s.charts:
        parts.append("_Charts: " + "; ".join(esc(c) for c, _ in s.charts) + " (see report.html)._")
    parts += [b.markdown for b in s.blocks]
    if s.lead and s.intro:
        parts.append("\n".join(f"- {esc(line)}" for line in s.intro.split("\n")))
    elif s.intro and not s.lead:
        parts.append(esc(s.intro))
    return "\n\n".join(parts)


def render(sections: list[Section], *, title: str, subtitle: str, header: list[tuple[str, str]] = ()) -> str:
    meta = ["\n".join(f"- **{esc(k)}**: {esc(v)}" for k, v in header)] if header else []
    return visible("\n\n".join([f"# {esc(title)}", esc(subtitle), *meta, *map(section, sections)]) + "\n")
