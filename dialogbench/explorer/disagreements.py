"""The explorer's "Judge agreement": where two judges (or a judge and imported human labels) answered the same items
of a protocol on the board, how much they agree (Cohen's kappa, Spearman's rho of their model rankings, with 95%
intervals: judge_checks/agreement.py) and the items they answered differently, each linking the page's filter to the
item's records (both judges' verdicts, side by side in the list). A folded panel above the filters (``panel``), like
the trend charts: markup, not embedded data, every name escaped. A board judged by one judge has no panel."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

from dialogbench.explorer.records import Source
from dialogbench.judge_checks import agreement
from dialogbench.text.textsafe import visible

ID = "disagreements"
TITLE = "Judge agreement"
SHOWN = 100  # disagreements listed per (protocol, pair of judges); the rest are counted


@dataclass(frozen=True)
class Found:
    """What the panel shows: per (protocol, judge_a, judge_b) its kappa and ranking agreement, its disagreements
    (the first ``SHOWN``) and how many there are."""

    kappas: list[agreement.Kappa] = field(default_factory=list)
    rankings: list[agreement.Ranking] = field(default_factory=list)
    disagreements: dict[tuple[str, str, str], list[agreement.Disagreement]] = field(default_factory=dict)
    counts: dict[tuple[str, str, str], int] = field(default_factory=dict)


def read(source: Source, *, lake=None, shown: int = SHOWN) -> Found:
    """The agreement of every pair of judges on the board ``source`` reads (its connection's ``current_board``),
    with ``lake`` (opened with its layout) the stored human labels too. An empty ``Found`` on a lake from before the
    judge_pairs view."""
    if source.read("select 1 from judge_pairs limit 0") is None:
        return Found()
    pairs = agreement.read_pairs(con=source.con, lake=lake)
    found = Found(kappas=agreement.kappa(pairs=pairs), rankings=agreement.ranking_agreement(pairs=pairs))
    for d in agreement.disagreements(pairs=pairs):
        key = (d.protocol, d.judge_a, d.judge_b)
        found.counts[key] = found.counts.get(key, 0) + 1
        if found.counts[key] <= shown:
            found.disagreements.setdefault(key, []).append(d)
    return found


def _num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _band(value: float | None, low: float | None, high: float | None, reason: str | None) -> str:
    if value is None:
        return f'— <span class="note">({escape(visible(reason or ""))})</span>'
    band = f" [{_num(low)}, {_num(high)}]" if low is not None else ""
    note = f' <span class="note">({escape(visible(reason))})</span>' if reason and low is None else ""
    return f"{_num(value)}{band}{note}"


def _text(value) -> str:
    return escape(visible("—" if value is None else str(value)))


def summary(found: Found) -> str:
    if not found.kappas:
        return f"{TITLE}: no item judged by two judges on this board"
    pairs = len(found.kappas)
    apart = sum(found.counts.values())
    return (f"{TITLE}: {pairs} protocol and judge pair{'s' if pairs != 1 else ''}, {apart} item"
            f"{'s' if apart != 1 else ''} answered differently")


def panel(found: Found | None) -> str:
    """The folded panel (``<details id="disagreements">``): a table of kappa and rho per protocol and pair of
    judges, then per pair its disagreements, each item linking the filter to its records. ``""`` for None or a
    board without two judges on an item."""
    if found is None or not found.kappas:
        return ""
    rankings = {(r.protocol, r.judge_a, r.judge_b): r for r in found.rankings}
    parts = [f'<details class="{ID}" id="{ID}"><summary>{escape(summary(found))}</summary>',
             '<div class="scroll"><table><thead><tr><th>Protocol</th><th>Judge A</th><th>Judge B</th>'
             '<th class="num">items</th><th class="num">both parsed</th><th class="num">answered alike</th>'
             "<th>Cohen's κ [95%]</th><th>Spearman's ρ of model scores [95%]</th>"
             '<th class="num">answered differently</th></tr></thead><tbody>']
    for k in found.kappas:
        key = (k.protocol, k.judge_a, k.judge_b)
        r = rankings.get(key)
        kind = " (quadratic-weighted)" if k.weighted else ""
        rho = _band(r.rho, r.low, r.high, r.reason) + (f' <span class="note">({r.models} models)</span>'
                                                       if r.rho is not None else "") if r else "—"
        apart = found.counts.get(key, 0)
        parts.append(f"<tr><td>{_text(k.protocol)}</td><td>{_text(k.judge_a)}</td><td>{_text(k.judge_b)}</td>"
                     f'<td class="num">{k.items}</td><td class="num">{k.n}</td>'
                     f'<td class="num">{"—" if k.observed is None else f"{k.observed:.1%}"}</td>'
                     f"<td>{_band(k.kappa, k.low, k.high, k.reason)}{kind}</td><td>{rho}</td>"
                     f'<td class="num">{apart}</td></tr>')
    parts.append("</tbody></table></div>")
    for key, items in found.disagreements.items():
        protocol, a, b = key
        total = found.counts[key]
        more = f" (the first {len(items)} of {total})" if total > len(items) else ""
        parts.append(f"<details><summary>{_text(protocol)}: {_text(a)} and {_text(b)} answered "
                     f"{total} item{'s' if total != 1 else ''} differently{escape(more)}</summary>"
                     '<div class="scroll"><table><thead><tr><th>Item</th>'
                     f"<th>{_text(a)}</th><th>{_text(b)}</th><th>records</th></tr></thead><tbody>")
        for d in items:
            show = (f'<a href="{escape(d.href)}">both verdicts</a>' if d.href else "—")  # the item's records
            parts.append(f"<tr><td>{_text(d.item)}</td><td>{_answer(d.answer_a, d.category_a, d.side)}</td>"
                         f"<td>{_answer(d.answer_b, d.category_b, d.side)}</td><td>{show}</td></tr>")
        parts.append("</tbody></table></div></details>")
    parts.append('<p class="about">An item is one judged thing without its judge (a seed\'s dialogue of a model at a '
                 "length; a pair in the order shown; an MT-Bench-101 turn of a model): the judge_pairs view. κ compares "
                 "UniEval's Yes / No, Arena's and GTEval's outcome (win / lose / tie, so both orders pool) and "
                 "MT-Bench-101's rating (quadratic-weighted) on the items both parsed; ρ the judges' model scores on "
                 "those items. Intervals: a cluster bootstrap over the items' seeds (dialogues). A link filters the "
                 "records below to the item's.</p></details>")
    return "".join(parts)


def _answer(answer: str | None, category: str | None, side: str | None) -> str:
    """The answer as given, and what it means when that is not the same words (a verdict's outcome for ``side``)."""
    if answer is None:
        return '<span class="note">unparsed</span>'
    if category is None or category == answer:
        return _text(answer)
    meaning = f"{side}: {category}" if category in ("win", "lose", "tie") and side else category
    return f'{_text(answer)} <span class="note">({_text(meaning)})</span>'

