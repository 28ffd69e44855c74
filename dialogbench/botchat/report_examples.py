"""BotChat's flagged dialogues: for each model, a few dialogues the UniEval judge flagged, the flagged utterance
highlighted with the judge's reason (rendered here, as HTML and as Markdown: no other section has dialogues)."""

from __future__ import annotations

from html import escape

from dialogbench.botchat.report_sections import leaderboard_order
from dialogbench.report.markdown import esc
from dialogbench.report.tables import Block, Section

HTML_CHARS, MARKDOWN_CHARS = 600, 300  # an utterance is shortened to this many characters


def examples(data: dict) -> Section:
    ex = data["examples"]
    if not ex:
        return Section("examples", "Flagged dialogues", empty="No data yet: no dialogue flagged by UniEval.")
    order = leaderboard_order(data, [e["model"] for e in ex])
    ex = sorted(ex, key=lambda e: (order.index(e["model"]), e["item_id"]))
    return Section("examples", "Flagged dialogues",
                   "For each model, a few dialogues the UniEval judge flagged as AI-involved: the first utterance "
                   "it found AI-like is highlighted, with its reason. Compare with BotChat's bad-case types: "
                   "AI self-identification, contextual confusion, excessive length, formal tone, repetitive phrasing.",
                   blocks=[Block(html_block(ex), markdown_block(ex))])


def html_block(examples: list[dict]) -> str:
    """A folded block per model (the first one open), its dialogues inside."""
    models: dict[str, list[dict]] = {}
    for e in examples:
        models.setdefault(e["model"], []).append(e)
    return "".join(f'<details{" open" if i == 0 else ""}><summary>{escape(model)} — {len(items)} flagged '
                   f'dialogue{"s" if len(items) != 1 else ""}</summary>{"".join(map(html_dialogue, items))}</details>'
                   for i, (model, items) in enumerate(models.items()))


def markdown_block(examples: list[dict]) -> str:
    return "\n\n".join(map(markdown_dialogue, examples))


def html_dialogue(e: dict) -> str:
    flagged, rows = e.get("ai_index"), []
    for i, text in enumerate(e["utterances"][: e.get("n_judged") or None], 1):
        text = text if len(text) <= HTML_CHARS else text[:HTML_CHARS] + " …"
        why = f'<td class="why">⚑ {escape(e.get("reason") or "")}</td>' if i == flagged else "<td></td>"
        rows.append(f'<tr{" class=" + chr(34) + "flag" + chr(34) if i == flagged else ""}><td class="who">'
                    f'{i}</td><td class="who">{"AB"[(i - 1) % 2]}:</td><td class="text">{escape(text)}</td>{why}</tr>')
    return (f'<p class="note">Seed {escape(str(e["item_id"]))}: first AI utterance {escape(str(flagged))} '
            f'of {len(e["utterances"][: e.get("n_judged") or None])}</p><div class="scroll"><table class="dlg">'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def markdown_dialogue(e: dict) -> str:
    flagged = e.get("ai_index")
    utterances = e["utterances"][: e.get("n_judged") or None]
    lines = [f"**{esc(e['model'])}**, seed {esc(e['item_id'])}: first AI utterance {esc(flagged)} of "
             f"{len(utterances)}", "", "| # | speaker | utterance | judge's reason |", "|---:|:---|:---|:---|"]
    for i, text in enumerate(utterances, 1):
        text = text if len(text) <= MARKDOWN_CHARS else text[:MARKDOWN_CHARS] + " …"
        mark = f"**▶ {esc(text)}**" if i == flagged and text.strip() else esc(text)
        lines.append(f"| {i} | {'AB'[(i - 1) % 2]} | {mark} | {esc(e.get('reason') or '') if i == flagged else ''} |")
    return "\n".join(lines)
