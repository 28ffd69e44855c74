"""The report as one self-contained HTML page: inline CSS and SVG, no scripts, no external resources. Text is
HTML-escaped where it is put in; the finished page then has its control characters made visible (``textsafe``), so
model output cannot act on a terminal that prints the file or reorder what a browser shows. A number links to the
explorer filtered to the items behind it (a ``tables.Linked`` cell: dialogbench/explorer/links.py), a relative
address, since the explorer is written beside the report."""

from __future__ import annotations

import re
from html import escape

from dialogbench.report.checks import FLAG
from dialogbench.report.tables import Section, Table
from dialogbench.text.textsafe import visible

CSS = """
:root { color-scheme: light; --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg: #f6f8fa; --hi: #fff4c2; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); }
main { max-width: 1260px; margin: 0 auto; padding: 28px 32px 48px; overflow-wrap: break-word; }
h1 { font-size: 28px; margin: 0 0 4px; }
h2 { font-size: 21px; margin: 40px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
p, .note { max-width: 80ch; }
.sub, .note, caption, figcaption { color: var(--muted); font-size: 13.5px; }
nav a { margin-right: 14px; color: #0969da; text-decoration: none; font-size: 14px; }
.scroll { overflow-x: auto; max-width: 100%; margin: 10px 0 16px; }
table { border-collapse: collapse; font-size: 13.5px; font-variant-numeric: tabular-nums; }
caption { text-align: left; padding: 4px 0; caption-side: top; }
th, td { padding: 5px 5px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th, td { overflow-wrap: break-word; }
.nw { white-space: nowrap; }
th { background: var(--bg); font-weight: 600; position: sticky; top: 0; }
tr.grp th { position: static; text-align: center; border-bottom: none; padding-bottom: 0; }
tr.grp th.lab { border-bottom: 2px solid var(--line); }
tr.grp + tr.grp th { font-weight: 500; color: var(--muted); }
td.num, th.num { text-align: right; }
.more { color: var(--muted); font-size: 12px; }
ul.notes { color: var(--muted); font-size: 13.5px; max-width: 100ch; padding-left: 20px; margin: 4px 0; }
tbody tr:nth-child(even) { background: #fbfcfd; }
table.lb td:nth-child(2) { font-weight: 600; }
.empty { padding: 10px 14px; background: var(--bg); border-radius: 6px; color: var(--muted); }
figure { margin: 12px 0 20px; }
figure svg { max-width: 100%; height: auto; }
details { margin: 8px 0; border: 1px solid var(--line); border-radius: 6px; padding: 6px 12px; }
summary { cursor: pointer; font-weight: 600; }
table.dlg td { white-space: normal; }
table.dlg td.who { width: 2em; font-weight: 600; color: var(--muted); }
table.dlg td.text { max-width: 62ch; }
table.dlg tr.flag { background: var(--hi); }
table.dlg td.why { color: #8a4b00; font-size: 13px; max-width: 36ch; }
footer { margin-top: 48px; color: var(--muted); font-size: 13px; }
dl.meta { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 2px 14px; font-size: 13.5px; margin: 8px 0 14px; }
dl.meta dt { font-weight: 600; color: var(--muted); }
dl.meta dd { margin: 0; overflow-wrap: anywhere; }
.warnings { background: #fff1e6; border-left: 4px solid #d9822b; border-radius: 4px; padding: 6px 12px; margin: 8px 0 12px; }
.warnings ul { margin: 4px 0; padding-left: 20px; font-size: 13.5px; max-width: 110ch; }
td.warn { background: #fff1e6; }
a.ex { color: inherit; text-decoration: underline dotted #8c959f; text-underline-offset: 3px; }
a.ex:hover, a.ex:focus { color: #0969da; text-decoration: underline solid; }
"""


# What a cell keeps on one line when its column wraps: an interval, "x ± y", "k / n"
UNBROKEN = re.compile(r"\[[-−0-9.,%]+, [-−0-9.,%]+\]|[-−0-9.,]+ ± [0-9.,]+|[0-9,]+ / [0-9,]+")


def unbroken(text: str) -> str:
    """``text`` escaped, its intervals, "x ± y" and "k / n" held on one line (columns wrap at spaces)."""
    out, at = [], 0
    for m in UNBROKEN.finditer(text):
        out += [escape(text[at:m.start()]), f'<span class="nw">{escape(m.group(0))}</span>']
        at = m.end()
    return "".join(out) + escape(text[at:])


def cell(text: str) -> str:
    """A cell's first line as is, further lines (details such as an interval) smaller below it."""
    first, *rest = text.split("\n")
    return unbroken(first) + "".join(f'<br><span class="more">{unbroken(line)}</span>' for line in rest)


def linked(text: str, inner: str) -> str:
    """``inner`` (the cell's HTML) as a link to ``text.href`` when ``text`` is ``tables.Linked``: the explorer
    filtered to the items behind the number (the address is escaped here, its values were percent-encoded)."""
    href = getattr(text, "href", None)
    return f'<a class="ex" href="{escape(href)}">{inner}</a>' if href else inner


def td(text: str, numeric: bool, unbroken: bool = False) -> str:
    """A body cell: right-aligned from ``numeric_from``, tinted when marked (checks.FLAG), on one line if asked, a
    link when its text is ``Linked``, its ``tip`` as its title when it is ``Tipped``."""
    classes = " ".join(c for c, on in (("num", numeric), ("warn", FLAG in text), ("nw", unbroken)) if on)
    tip = getattr(text, "tip", None)
    attrs = (f' class="{classes}"' if classes else "") + (f' title="{escape(tip)}"' if tip else "")
    return f"<td{attrs}>{linked(text, cell(text))}</td>"


def warnings(items: list[str]) -> str:
    if not items:
        return ""
    return ('<div class="warnings" role="note"><strong>Warnings</strong><ul>'
            + "".join(f"<li>{escape(w)}</li>" for w in items) + "</ul></div>")


def table(t: Table, cls: str = "") -> str:
    head = "".join(f'<th class="num">{cell(h)}</th>' if i >= t.numeric_from else f"<th>{cell(h)}</th>"
                   for i, h in enumerate(t.headers))
    body = "".join("<tr>" + "".join(td(c, i >= t.numeric_from, i in t.unbroken) for i, c in enumerate(row)) + "</tr>"
                   for row in t.rows)
    caption = f"<caption>{escape(t.caption)}</caption>" if t.caption and not t.collapsed else ""
    if t.collapsed:
        inner = Table(t.headers, t.rows, '', t.numeric_from, groups=t.groups, unbroken=t.unbroken)
        return f"<details><summary>{escape(t.caption)}</summary>{table(inner, cls)}</details>"
    groups = "".join('<tr class="grp">' + "".join(
        f'<th colspan="{span}"{" class=" + chr(34) + "lab" + chr(34) if label else ""}>{cell(label)}</th>'
        for label, span in row) + "</tr>" for row in t.groups)
    return (f'<div class="scroll"><table{f" class={chr(34)}{cls}{chr(34)}" if cls else ""}>{caption}'
            f"<thead>{groups}<tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")


def section(s: Section) -> str:
    """Title, Warnings, then what the section shows (tables, charts, blocks), then the text that explains it."""
    parts = [f'<section id="{escape(s.id)}"><h2>{escape(s.title)}</h2>']
    if s.empty:
        return parts[0] + f'<p class="empty">{escape(s.empty)}</p></section>'
    parts.append(warnings(s.warnings))
    first = [t for t in s.tables if (s.tables_first or s.lead) and not t.collapsed]
    parts += [table(t, "lb" if s.lead and i == 0 else "") for i, t in enumerate(first)]
    parts += [f"<figure>{chart}<figcaption>{escape(cap)}</figcaption></figure>" for cap, chart in s.charts]
    parts += [table(t) for t in s.tables if t not in first]
    parts += [b.html for b in s.blocks]
    if s.lead and s.intro:
        parts.append('<ul class="notes">' + "".join(f"<li>{escape(line)}</li>" for line in s.intro.split("\n"))
                     + "</ul>")
    elif s.intro and not s.lead:
        parts.append(f'<p class="about">{escape(s.intro)}</p>')
    return "".join(parts) + "</section>"


def meta(header: list[tuple[str, str]]) -> str:
    return ('<dl class="meta">' + "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in header)
            + "</dl>") if header else ""


def render(sections: list[Section], *, title: str, subtitle: str, header: list[tuple[str, str]] = ()) -> str:
    nav = "".join(f'<a href="#{escape(s.id)}">{escape(s.title)}</a>' for s in sections)
    runs = [s for s in sections if s.id == "runs"]
    body = "".join(section(s) for s in sections if s.id != "runs")
    footer = f"<footer>{''.join(section(s) for s in runs)}</footer>"
    page = (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<link rel="icon" href="data:,">'
            f"<title>{escape(title)}</title><style>{CSS}</style></head>"
            f'<body><main><h1>{escape(title)}</h1><p class="sub">{escape(subtitle)}</p>{meta(list(header))}<nav>{nav}</nav>'
            f"{body}{footer}</main></body></html>\n")
    return visible(page)
