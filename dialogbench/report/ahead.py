"""The report's "Who is really ahead": per family, a model × model matrix for each headline number the board's latest
run compared pairwise (``report_pairwise``, over the ``pairwise`` view): the cell (row A, column B) holds A − B on
the units both have with its 95% paired-bootstrap interval, ▲ where A is ahead, ▼ where B is, plain within noise,
greyed where the comparison cannot tell or the number is not measured (the reason in its tooltip and a footnote).
In the HTML page each cell, and the number under each row's name, links to the explorer showing the items behind it
(``explorer.links.metric_href``: both models' verdicts or games of the metric's protocol, judge and slice); the
Markdown shows the text alone.

One judge per metric (the report's, else the metric's most frequent) and, of a metric with many N (BotChat pass@N),
the largest; a metric with more than ``SLICES_OPEN`` slices left (MT-Bench-101's tasks, SpyFall's villagers) gets
one matrix that counts, per pair, the slices each model is ahead in (``report_pairwise_tally``) rather than a matrix
per slice. A model rated by the matrix's judge when that judge is the model itself (``judge_checks.self_judging``:
the same name, or the same weights and revision) is marked ``†`` in it, and the section's text has the legend. The
helpers that choose judges and order metrics serve ``trends`` too."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from html import escape

from dialogbench.explorer.links import metric_href
from dialogbench.judge_checks.self_judging import LEGEND, Identity, marked, same_model
from dialogbench.run.family_spec import Family, family_named
from dialogbench.report.markdown import esc
from dialogbench.report.tables import Block, Section

SQL = "select * from report_pairwise order by family, leaderboard, metric, slice, model_rank, col_model"
TALLY_SQL = "select * from report_pairwise_tally order by family, leaderboard, metric, judge, model_rank, col_model"
SLICES_OPEN = 3  # a metric with more slices (after the judge and N are chosen) gets one tally instead of a matrix each
TITLE = "Who is really ahead"
MARKS = {"ahead": "▲", "behind": "▼"}
GREY = ("cannot tell", "not measured")
# the matrices' look, once in the section (the page's CSS is html.py's): bold and tinted where a model is ahead,
# grey where no comparison could tell; small column heads that wrap anywhere, so 14 models fit a 1400 px window
CSS = ("<style>table.ahead{font-size:12px}table.ahead th.num{font-size:11px;overflow-wrap:anywhere}"
       "table.ahead td.model{font-weight:600}"
       "table.ahead td.ahead{font-weight:700;color:#116329;background:#dafbe1}"
       "table.ahead td.behind{font-weight:700;color:#a40e26;background:#ffebe9}"
       "table.ahead td.grey,table.ahead td.none{color:#8c959f}</style>")
SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")

Key = tuple[str, str, str]  # (family, leaderboard, metric)


def metric_order(*, families: Sequence[Family]) -> dict[Key, int]:
    """(family, leaderboard view, metric) -> its place: the order of ``families`` (the run's), then each family's
    ``metrics``."""
    keys = [(f.name, m.view, m.name) for f in families for m in f.metrics]
    return {k: i for i, k in enumerate(dict.fromkeys(keys))}


def family_title(name: str, *, families: Sequence[Family]) -> str:
    """The title of the family ``name`` of ``families``; a family the run does not know keeps its name."""
    try:
        return family_named(families, name).title
    except KeyError:
        return name


def sort_key(order: dict[Key, int]):
    """Rows in ``order``'s order of metrics (``metric_order``; unknown ones after, by name), then by slice."""
    return lambda k: (order.get(k[:3], len(order)), *k)


def choose_judges(rows: Iterable[dict], judge: str | None) -> dict[Key, str | None]:
    """Per (family, leaderboard, metric): the report's judge when it judged the metric, else the judge with the most
    rows (ties: alphabetical); None for a metric without a judge."""
    counts: dict[Key, Counter] = {}
    for r in rows:
        counts.setdefault((r["family"], r["leaderboard"], r["metric"]), Counter())[r["judge"]] += 1
    chosen = {}
    for key, found in counts.items():
        named = {j: c for j, c in found.items() if j is not None}
        chosen[key] = (judge if judge in named else min(named, key=lambda j: (-named[j], j))) if named else None
    return chosen


def shown(rows: list[dict], judge: str | None) -> tuple[list[dict], dict[Key, list[str]]]:
    """The rows of each metric's chosen judge at its largest N, and per metric what was left out (other judges)."""
    judges = choose_judges(rows, judge)
    others: dict[Key, set] = {}
    kept = []
    for r in rows:
        key = (r["family"], r["leaderboard"], r["metric"])
        if r["judge"] != judges[key]:
            others.setdefault(key, set()).add(r["judge"])
        elif r["largest_n"]:
            kept.append(r)
    return kept, {k: sorted(v) for k, v in others.items()}


def is_rate(metric: str, values: Iterable[float | None]) -> bool:
    """A rate (pass_rate, win_tie_rate, Ask-Guess's st, ...: named so, every value in [0, 1]) is shown in percent."""
    found = [v for v in values if v is not None and math.isfinite(v)]
    return (metric == "st" or metric.endswith("rate")) and all(0 <= v <= 1 for v in found)


def _rate(rows: list[dict]) -> bool:
    """A matrix of rates: differences in percentage points."""
    return is_rate(rows[0]["metric"], (v for r in rows for v in (r["row_value"], r["col_value"])))


def _signed(v: float | None, rate: bool) -> str:
    if v is None:
        return "–"
    text = f"{v * 100:+.1f}" if rate else f"{v:+.2f}"
    return text[1:] if float(text) == 0 else text.replace("-", "−")  # no sign on a zero (nor on −0.0)


def _plain(v: float | None, rate: bool) -> str:
    return "–" if v is None else (f"{v * 100:.1f}%" if rate else f"{v:.2f}")


def _interval(r: dict, rate: bool) -> str:
    return "" if r["ci_low"] is None or r["ci_high"] is None else \
        f"[{_signed(r['ci_low'], rate)}, {_signed(r['ci_high'], rate)}]"


def _p(v: float | None) -> str:
    return "–" if v is None else (f"{v:.3f}" if v >= 0.001 else "< 0.001")


class Grid:
    """A model × model matrix: ``models`` (rows and columns, in order), ``label(model)`` the number under a row's
    name, ``cell(row, col)`` -> (kind, first line, second line, tooltip) with kind ahead, behind, plain, grey or none,
    and the footnotes (the reasons of the grey cells, numbered in reading order). ``selves``: the models its judge
    is (self-judged), whose names it marks."""

    models: list[str]
    notes: dict[tuple[str, str], int]
    selves: frozenset[str] | set[str] = frozenset()

    def name(self, model: str) -> str:
        """A row's or column's name: the model, marked when the grid's judge is the model itself."""
        return marked(model, model in self.selves)

    def label(self, model: str) -> str:
        raise NotImplementedError

    def cell(self, row: str, col: str) -> tuple[str, str, str, str]:
        raise NotImplementedError

    def href(self, row: str, col: str) -> str | None:
        """The explorer showing the items behind the cell (each model's side of the comparison); None: no link."""
        return None

    def label_href(self, model: str) -> str | None:
        """The explorer showing the items behind the number under a row's name; None: no link."""
        return None

    def footnotes(self) -> list[str]:
        return [f"{str(i).translate(SUPERSCRIPT)} {mark}: {reason or 'no reason recorded'}"
                for (mark, reason), i in self.notes.items()]

    def html(self, caption: str) -> str:
        head = "".join(f"<th class=\"num\">{escape(self.name(m))}</th>" for m in self.models)
        body = []
        for m in self.models:
            label = self.label(m)
            below = f'<br><span class="more">{_a(escape(label), self.label_href(m))}</span>' if label else ""
            tds = [f'<td class="model">{escape(self.name(m))}{below}</td>']
            for c in self.models:
                kind, text, more, tip = self.cell(m, c)
                title = f' title="{escape(tip)}"' if tip else ""
                below = f'<br><span class="more">{escape(more)}</span>' if more else ""
                tds.append(f'<td class="num {kind}"{title}>{_a(escape(text) + below, self.href(m, c))}</td>')
            body.append("<tr>" + "".join(tds) + "</tr>")
        notes = "".join(f'<div class="more">{escape(n)}</div>' for n in self.footnotes())
        return (f'<div class="scroll"><table class="ahead"><caption>{escape(caption)}</caption>'
                f"<thead><tr><th>row − column</th>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
                + notes)

    def markdown(self, caption: str) -> str:
        lines = [f"*{esc(caption)}*", "",
                 "| row − column | " + " | ".join(esc(self.name(m)) for m in self.models) + " |",
                 "|:---|" + "---:|" * len(self.models)]
        for m in self.models:
            label = self.label(m)
            cells = [esc(self.name(m)) + (f" ({esc(label)})" if label else "")]
            for c in self.models:
                kind, text, more, _ = self.cell(m, c)
                shown_ = f"**{esc(text)}**" if kind in MARKS else (f"*{esc(text)}*" if kind == "grey" else esc(text))
                cells.append(f"{shown_} {esc(more)}".strip())
            lines.append("| " + " | ".join(cells) + " |")
        notes = self.footnotes()
        return "\n".join(lines) + (f"\n\n*{esc('; '.join(notes))}*" if notes else "")


def _a(inner: str, href: str | None) -> str:
    """``inner`` (HTML) as a link to ``href`` (percent-encoded by ``explorer.links``, escaped here), or as it is."""
    return f'<a class="ex" href="{escape(href)}">{inner}</a>' if href else inner


def _selves(models: Iterable[str], judge: str | None, known: Mapping[str, Identity] | None) -> set[str]:
    """Those of ``models`` that ``judge`` is (``self_judging.same_model``; ``known``: identities by name)."""
    return {m for m in models if same_model(m, judge, known)}


def _order(rows: list[dict]) -> list[str]:
    """The models of ``rows`` by their model_rank (then name); a model only ever in a column last."""
    ranks: dict[str, tuple] = {}
    for r in rows:
        ranks[r["row_model"]] = (r["model_rank"], r["row_model"])
    for r in rows:
        ranks.setdefault(r["col_model"], (len(rows) + 1, r["col_model"]))
    return sorted(ranks, key=lambda m: ranks[m])


class Matrix(Grid):
    """One (family, leaderboard, metric, slice)'s comparisons (report_pairwise): the cell (A, B) is A − B with its
    interval, marked by the verdict. ``families``: the run's (their titles, and their metrics' roles in the links);
    ``known``: the identities of the run's models and judges by name (``self_judging.identities``)."""

    def __init__(self, rows: list[dict], *, families: Sequence[Family],
                 known: Mapping[str, Identity] | None = None) -> None:
        self.families = families
        first = rows[0]
        self.family, self.leaderboard, self.metric, self.slice = (first["family"], first["leaderboard"],
                                                                   first["metric"], first["slice"])
        self.higher_is_better = first["higher_is_better"] is not False
        self.models = _order(rows)
        self.selves = _selves(self.models, first.get("judge"), known)
        self.values = {r["row_model"]: r["model_value"] for r in rows}
        self.cells = {(r["row_model"], r["col_model"]): r for r in rows}
        self.rate = _rate(rows)
        self.notes = {}  # (mark, reason) -> footnote number
        for m in self.models:
            for c in self.models:
                r = self.cells.get((m, c))
                if r is not None and r["mark"] in GREY:
                    self.notes.setdefault((r["mark"], r["reason"] or ""), len(self.notes) + 1)

    def caption(self, note: str = "") -> str:
        unit = " in percentage points" if self.rate else ""
        lower = "; lower is better, ▲ marks the lower" if not self.higher_is_better else ""
        return (f"{family_title(self.family, families=self.families)}: {self.leaderboard}.{self.metric}"
                + (f" ({self.slice})" if self.slice else "") + note
                + f". Cell: row − column{unit}, 95% interval below; paired bootstrap on the items both have. "
                f"▲ row ahead, ▼ column ahead: Holm-adjusted p < 0.05 and the interval excluding 0{lower}; plain: "
                "within noise; grey: cannot tell or not measured.")

    def label(self, model: str) -> str:
        return _plain(self.values.get(model), self.rate)

    def label_href(self, model: str) -> str | None:
        return metric_href(self.family, self.leaderboard, self.metric, self.slice, [model], families=self.families)

    def href(self, row: str, col: str) -> str | None:
        if row == col or (row, col) not in self.cells:
            return None
        return metric_href(self.family, self.leaderboard, self.metric, self.slice, [row, col],
                           families=self.families)

    def cell(self, row: str, col: str) -> tuple[str, str, str, str]:
        if row == col:
            return "none", "·", "", ""
        r = self.cells.get((row, col))
        if r is None:
            return "none", "–", "", f"{row} and {col} were not compared"
        if r["mark"] in GREY:
            number = str(self.notes[(r["mark"], r["reason"] or "")]).translate(SUPERSCRIPT)
            return "grey", f"{r['mark']}{number}", "", f"{r['mark']}: {r['reason'] or 'no reason recorded'}"
        values = (f"{row} {_plain(r['row_value'], self.rate)} vs {col} {_plain(r['col_value'], self.rate)} on "
                  f"{r['shared'] or 0:,} shared units; Holm-adjusted p {_p(r['p_holm'])}")
        diff, band = _signed(r["difference"], self.rate), _interval(r, self.rate)
        if r["mark"] in MARKS:
            leader = row if r["mark"] == "ahead" else col
            return r["mark"], f"{MARKS[r['mark']]} {diff}", band, f"{leader} ahead: {values}"
        return "plain", diff, band, f"{r['mark']}: {values}"


class Tally(Grid):
    """A metric with many slices (report_pairwise_tally): the cell (A, B) counts the slices where A is ahead (▲) and
    where B is (▼), of those both were compared in; the tooltip names them. ``families``, ``known``: as
    ``Matrix``'s."""

    def __init__(self, rows: list[dict], *, families: Sequence[Family],
                 known: Mapping[str, Identity] | None = None) -> None:
        self.families = families
        first = rows[0]
        self.family, self.leaderboard, self.metric = first["family"], first["leaderboard"], first["metric"]
        self.judge, self.key, self.parts = first["judge"], first["slice_key"] or "slice", first["parts"]
        self.higher_is_better = first["higher_is_better"] is not False
        self.models = _order(rows)
        self.selves = _selves(self.models, self.judge, known)
        self.net = {r["row_model"]: r["net"] for r in rows}
        self.cells = {(r["row_model"], r["col_model"]): r for r in rows}
        self.notes = {}

    def caption(self, note: str = "") -> str:
        lower = "; lower is better, ▲ counts the lower" if not self.higher_is_better else ""
        judge = f", judge={self.judge}" if self.judge else ""
        return (f"{family_title(self.family, families=self.families)}: {self.leaderboard}.{self.metric}{judge}{note}, "
                f"over its {self.parts} "
                f"slices ({self.key}). Cell: ▲ the slices where the row is ahead, ▼ those where the column is, of "
                "those both were compared in; paired bootstrap on the items both have, ahead: Holm-adjusted p < 0.05 "
                f"and the interval excluding 0{lower}; grey: no slice could tell. Rows by slices ahead minus behind.")

    def label(self, model: str) -> str:
        net = self.net.get(model)
        return "" if net is None else f"net {net:+d}".replace("-", "−")

    def _href(self, models: list[str]) -> str | None:
        """Every slice of the metric (each task, each villager) of the tally's judge."""
        return metric_href(self.family, self.leaderboard, self.metric, f"judge={self.judge}" if self.judge else "",
                           models, families=self.families)

    def label_href(self, model: str) -> str | None:
        return self._href([model])

    def href(self, row: str, col: str) -> str | None:
        return None if row == col or (row, col) not in self.cells else self._href([row, col])

    def cell(self, row: str, col: str) -> tuple[str, str, str, str]:
        if row == col:
            return "none", "·", "", ""
        r = self.cells.get((row, col))
        if r is None:
            return "none", "–", "", f"{row} and {col} were not compared"
        ahead, behind = r["ahead"] or 0, r["behind"] or 0
        said = [f"{row} ahead in {r['ahead_in']}" if ahead else "", f"{col} ahead in {r['behind_in']}" if behind
                else ""] + [f"{r[key]} {label}" for key, label in
                            (("within_noise", "within noise"), ("cannot_tell", "cannot tell"),
                             ("not_measured", "not measured")) if r[key]]
        tip = f"{r['slices']} {self.key} slices: " + "; ".join(s for s in said if s)
        text = " ".join(t for t in (f"▲{ahead}" if ahead else "", f"▼{behind}" if behind else "") if t)
        of = f"of {r['slices']}"
        if ahead and not behind:
            return "ahead", text, of, tip
        if behind and not ahead:
            return "behind", text, of, tip
        if ahead:  # both ways in different slices
            return "plain", text, of, tip
        if r["within_noise"]:
            return "plain", "0", of, tip
        return "grey", "no test", of, tip


def section(rows: list[dict] | None, tally: list[dict] | None = None, *, judge: str | None,
            families: Sequence[Family], identities: Mapping[str, Identity] | None = None) -> Section:
    """The section from ``report_pairwise``'s rows (None: the view is missing), ``report_pairwise_tally``'s (for the
    metrics with more than ``SLICES_OPEN`` slices) and the report's judge; ``families`` (the run's) order the metrics
    and title them; ``identities`` (the board's latest run's models and judges by name, ``self_judging.identities``;
    none: names alone) find a model that is its matrix's judge under another name, to mark it."""
    if not rows:
        return Section("ahead", TITLE, empty="No run on this board has compared models yet (each run's snapshot "
                                             "writes its paired comparisons: the `pairwise` view).")
    kept, others = shown(rows, judge)
    judges = choose_judges(rows, judge)
    order = metric_order(families=families)
    by_matrix: dict[tuple, list[dict]] = {}
    for r in kept:
        by_matrix.setdefault((r["family"], r["leaderboard"], r["metric"], r["slice"]), []).append(r)
    by_metric: dict[Key, list[tuple]] = {}
    for key in sorted(by_matrix, key=sort_key(order)):
        by_metric.setdefault(key[:3], []).append(key)
    tallies: dict[Key, list[dict]] = {}
    for r in tally or []:
        key = (r["family"], r["leaderboard"], r["metric"])
        if r["judge"] == judges.get(key):
            tallies.setdefault(key, []).append(r)
    blocks, tallied, n_notes, selves = [], [], [], set()
    for family in dict.fromkeys(k[0] for k in by_metric):
        html_parts, md_parts = [f"<h3>{escape(family_title(family, families=families))}</h3>"], []
        for key, matrices in ((k, v) for k, v in by_metric.items() if k[0] == family):
            first = by_matrix[matrices[0]][0]
            ns = first["ns"] or 0
            note = f", the largest of {ns} N" if ns > 1 else ""
            if ns > 1:
                n_notes.append(f"{key[1]}.{key[2]} at N = {first['slice_n']} of {ns} N")
            grids = [Matrix(by_matrix[m], families=families, known=identities) for m in matrices]
            if len(matrices) > SLICES_OPEN and tallies.get(key):
                tallied.append(f"{key[1]}.{key[2]} ({len(matrices)} slices)")
                grids = [Tally(tallies[key], families=families, known=identities)]
            for grid in grids:
                selves |= grid.selves
                caption = grid.caption(note)
                html_parts.append(grid.html(caption))
                md_parts.append(grid.markdown(caption))
        blocks.append(Block("".join(html_parts), "\n\n".join(md_parts)))
    blocks[0] = Block(CSS + blocks[0].html, blocks[0].markdown)
    run = rows[0]["run_id"]
    shown_judges = sorted({j for k, j in judges.items() if j is not None and k in by_metric})
    other = sorted({j for found in others.values() for j in found if j is not None})
    intro = (f"Is a model really ahead of another? Each matrix compares every pair of models on one headline number, "
             f"as the board's latest run that compared them ({run}) did: the difference on the units both have "
             "(seeds, dialogues, words, word pairs, games), its 95% paired-bootstrap interval (the same resamples for "
             "both, so a hard item is hard for both), and a verdict: ahead when the p of no difference, "
             "Holm-adjusted over the metric's pairs, is under 0.05 and the interval excludes 0; within noise "
             "otherwise; cannot tell with too few shared units; not measured when the judge failed its judge checks. "
             "Rows and columns are in the order of the models' numbers, best first (the number under each name).")
    if shown_judges:
        intro += f" Judge: {', '.join(shown_judges)}" + (f" (other judges' comparisons left out: {', '.join(other)})"
                                                         if other else "") + "."
    if n_notes:
        intro += " Of a metric with many N, the largest: " + "; ".join(n_notes) + "."
    if tallied:
        intro += (f" A metric with more than {SLICES_OPEN} slices has one matrix counting its slices by verdict "
                  "instead of one per slice: " + "; ".join(tallied) + ".")
    if selves:
        intro += f" {LEGEND}: a matrix whose judge is the model itself marks it."
    intro += " Every pair and its p: `dialogbench query \"select * from pairwise\"`."
    return Section("ahead", TITLE, intro, blocks=blocks)
