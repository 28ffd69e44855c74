"""The explorer as one self-contained HTML page: the report's CSS plus its own, the board's trend charts as inline SVG
in a folded panel (``trends.panel``: the report's charts), the script (``script.SCRIPT``), the data as JSON in a
``<script type="application/json">`` element (``embed.script_json``). Nothing is requested from outside the page.
The script renders the records, filtered, ``PAGE_SIZE`` at a time. Every string of the data, and the page, has its
control characters made visible (``textsafe``): JSON would carry an ESC or a bidi override into the page's text
intact."""

from __future__ import annotations

from html import escape

from dialogbench.explorer.embed import script_json
from dialogbench.explorer.script import SCRIPT
from dialogbench.explorer.trends import panel
from dialogbench.report.html import CSS as REPORT_CSS
from dialogbench.report.tables import Section
from dialogbench.text.textsafe import visible, visible_tree

PAGE_SIZE = 50

CSS = """
form.filters { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: end; margin: 14px 0 6px;
  padding: 10px 12px; background: var(--bg); border: 1px solid var(--line); border-radius: 6px; }
form.filters label { display: flex; flex-direction: column; font-size: 12.5px; color: var(--muted); gap: 2px; }
form.filters label.check { flex-direction: row; align-items: center; gap: 6px; font-size: 14px; color: var(--ink); }
form.filters select, form.filters input[type=search] { font: inherit; font-size: 14px; padding: 3px 6px;
  min-width: 12em; max-width: 22em; }
form.filters input[type=search] { min-width: 18em; }
form.filters button { font: inherit; font-size: 13px; padding: 3px 10px; }
.counts { font-size: 14px; margin: 6px 0; }
p.pinned { font-size: 13.5px; margin: 4px 0; padding: 4px 10px; background: #ddf4ff; border-radius: 6px; }
p.pinned button { font: inherit; font-size: 12.5px; padding: 1px 8px; margin-left: 6px; }
.pager { display: flex; gap: 10px; align-items: center; font-size: 14px; margin: 8px 0; }
.pager button { font: inherit; font-size: 13px; padding: 2px 10px; }
table.caps td, table.caps th { white-space: normal; }
article.rec { border: 1px solid var(--line); border-radius: 8px; margin: 14px 0; padding: 10px 14px; }
article.rec.unparsed { border-left: 4px solid #cf222e; }
article.rec > header { display: flex; flex-wrap: wrap; gap: 6px 10px; align-items: baseline; }
article.rec h3 { font-size: 15.5px; margin: 0; }
.tag { font-size: 12px; padding: 1px 7px; border-radius: 10px; background: var(--bg); border: 1px solid var(--line);
  white-space: nowrap; }
.tag.verdict { background: #ddf4ff; border-color: #54aeff; }
.tag.verdict.bad { background: #ffebe9; border-color: #ff8182; }
article.rec h4 { font-size: 13.5px; margin: 10px 0 4px; color: var(--muted); }
pre.raw, div.passage { white-space: pre-wrap; word-break: break-word; font-size: 13px; background: var(--bg);
  border-radius: 6px; padding: 6px 10px; margin: 4px 0; max-height: 28em; overflow: auto; }
pre.raw { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
table.kv td { white-space: normal; max-width: 80ch; }
table.kv td:first-child { color: var(--muted); font-weight: 600; white-space: nowrap; }
.pair { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 0 16px; }
table.dlg { width: 100%; }
table.dlg td.who { width: auto; white-space: nowrap; }
table.dlg tr.seed td { color: var(--muted); }
table.dlg tr.bad { background: #ffebe9; }
table.dlg td.text { max-width: none; word-break: break-word; }
table.dlg .thought { color: var(--muted); font-style: italic; font-size: 12.5px; }
table.dlg details { border: none; padding: 0; margin: 2px 0; }
table.dlg summary { font-weight: 400; font-size: 12px; color: var(--muted); }
button.link { background: none; border: none; color: #0969da; cursor: pointer; padding: 0; font: inherit;
  font-size: 12.5px; }
"""

PAGER = ('<div class="pager"><button type="button" class="prev">← previous</button><span class="where"></span>'
         '<button type="button" class="next">next →</button></div>')


def render(data: dict, *, title: str, report_link: str | None = None, trends: Section | None = None,
           agreement: str = "") -> str:
    """The page for ``collect``'s data; ``report_link`` (a relative address) links the report when it is there;
    ``trends`` (the board's "Trends" section: ``collect_page``) is a folded panel above the filters, and so is
    ``agreement`` (the judges' agreement and the items they answer differently: ``disagreements.panel``)."""
    board = f"board {data['board']}" if data.get("board") else "the lake"
    run = f" Latest run of {board}: {data['run']}." if data.get("run") else ""
    report = f' <a href="{escape(report_link)}">The report</a> shows the scores.' if report_link else ""
    lead = ("Every judged BotChat dialogue, MT-Bench-101 turn and GameEval game of the lake's current plans (the "
            "cells the report counts), with the judge's raw output and what was parsed from it. A record is one "
            "verdict (a game: its outcome); a dialogue judged by several protocols is shown in each.")
    page = (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<link rel="icon" href="data:,"><title>{escape(title)}</title><style>{REPORT_CSS}{CSS}</style></head>'
            f'<body><main><h1>{escape(title)}</h1><p class="sub">{escape(lead + run)}{report}</p>'
            f'<noscript><p class="empty">This page needs JavaScript to show its records.</p></noscript>'
            f'<details open><summary>Records per protocol</summary><div class="scroll"><table class="caps"><thead><tr>'
            f'<th>Family</th><th>Protocol</th><th class="num">in the lake</th><th class="num">unparseable</th>'
            f'<th class="num">on this page</th><th class="num">unparseable on this page</th><th>shown</th></tr>'
            f'</thead><tbody id="caps-body"></tbody></table></div><ul class="notes" id="notes"></ul></details>'
            f'{panel(trends, report_link=report_link)}{agreement}'
            f'<form class="filters" id="filters" role="search">'
            f'<label>Family / protocol<select id="f-protocol"></select></label>'
            f'<label>Model<select id="f-model"></select></label>'
            f'<label>or model<select id="f-model2"></select></label>'
            f'<label>Judge<select id="f-judge"></select></label>'
            f'<label>Verdict / outcome<select id="f-verdict"></select></label>'
            f'<label class="check"><input type="checkbox" id="f-unparsed"> unparseable only '
            f'<span id="unparsed-count"></span></label>'
            f'<label>Search<input type="search" id="f-q" placeholder="words in the text, a seed, a key…"></label>'
            f'<button type="button" id="f-reset">clear</button></form>'
            f'<p class="pinned" id="pinned" hidden>Also, from the link: <span id="pinned-what"></span> '
            f'<button type="button" id="pinned-drop">drop these</button></p>'
            f'<p class="counts" id="count" role="status"></p>{PAGER}<div id="records"></div>{PAGER}</main>'
            f'<script type="application/json" id="explorer-data">{script_json(visible_tree(data))}</script>'
            f"<script>{SCRIPT.replace('__PAGE_SIZE__', str(PAGE_SIZE))}</script></body></html>\n")
    return visible(page)
