"""``dialogbench.report``: the leaderboard's rows, values and order, every section on an empty lake, a lake
missing the newer views, escaping of model output, flagged examples, a self-contained deterministic page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.fakes.synthetic_lake import synthetic_lake
from dialogbench.run.registry import open_lake
from dialogbench.lake import Lake
from dialogbench.lake.catalog import connect as catalog_connect
from dialogbench.botchat.report import leaderboard
from dialogbench.report.build import write_report
from dialogbench.report.data import collect
from dialogbench.report.svg import box_plot, heatmap, line_chart, stacked_bars
from dialogbench.report.tables import pct
from dialogbench.run import registry

MODELS = ["alpha", "beta", "gamma"]
EVIL = "<script>alert('pwned')</script> & <b>bold</b> | pipe"


def utterance(model: str, item: str, i: int) -> str:
    return EVIL if i == 6 else f"{model} says line {i} of {item}"


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> Lake:
    root = tmp_path_factory.mktemp("report") / "lake"
    synthetic_lake(root, models=MODELS, seeds=12, arena_seeds=6, utterance=utterance, seed=3)
    return open_lake(root)


@pytest.fixture(scope="module")
def report(lake, tmp_path_factory) -> dict[str, str]:
    paths = write_report(lake, tmp_path_factory.mktemp("out"), title="Nightly <BotChat>", families=registry.families())
    return {kind: path.read_text() for kind, path in paths.items()}


def view(lake: Lake, sql: str) -> list[dict]:
    with catalog_connect(lake) as con:
        rel = con.execute(sql)
        cols = [d[0] for d in rel.description]
        return [dict(zip(cols, r)) for r in rel.fetchall()]


def test_leaderboard_rows_values_and_order(lake, report):
    data = collect(lake, families=registry.families())["families"]["botchat"]
    rows = data["leaderboard"]["rows"]
    gt = {r["model"]: r["win_tie_rate"] for r in view(lake, "select * from botchat_gteval")}
    uni = {(r["model"], r["n"]): r["pass_rate"] for r in view(lake, "select * from botchat_unieval")}
    elo = {(r["model"], r["n"]): r["elo"] for r in view(lake, "select * from botchat_elo")}
    assert sorted(r["model"] for r in rows) == MODELS
    assert [r["model"] for r in rows] == sorted(MODELS, key=lambda m: (-gt[m], m))
    assert data["leaderboard"]["sort_by"] == "Win + Tie vs GT"
    assert data["leaderboard"]["pass_ns"] == [8, 16] and data["leaderboard"]["elo_ns"] == [8, 16]
    for r in rows:
        assert r["win_tie"] == gt[r["model"]]
        assert r["pass@8"] == uni[(r["model"], 8)] and r["pass@16"] == uni[(r["model"], 16)]
        assert r["elo@16"]["elo"] == elo[(r["model"], 16)]
    html = report["html"]
    table = html[html.index('<table class="lb">'):html.index("</table>")]
    first = rows[0]
    assert f"{first['win_tie'] * 100:.1f}%" in table and f"{first['pass@16'] * 100:.1f}%" in table
    assert f"{first['elo@16']['elo']:.1f} ± {first['elo@16']['elo_std']:.1f}" in table
    assert f"[{first['elo@16']['bt_ci_low']:.1f}, {first['elo@16']['bt_ci_high']:.1f}]" in table
    # the leaderboard comes first, in table order, with its note and the judge
    assert html.index('id="leaderboard"') < html.index('id="unieval"') < html.index('id="arena"')
    assert [m for m in re.findall(r"<tr><td>\d+</td><td class=\"nw\">([^<]+)</td>", table)] == [r["model"] for r in rows]
    assert "Judge: gpt-4-0613" in html and "Win + Tie vs GT:" in html
    # the captions name the rule each rate follows, and the unparsed-left-out rates sit beside them
    assert "authors&#x27; notebook" in html or "authors' notebook" in html
    assert "analyze.py" in html and "unparsed left out" in html
    lead, strict = report["md"].split("## UniEval")[0].split("*The same rates with unparseable verdicts left out")
    md_rows = [line.split(" | ")[1] for line in lead.splitlines() if re.match(r"\| \d+ \|", line)]
    assert md_rows == [r["model"] for r in rows]
    # under it, the rates with unparseable verdicts left out, in the same order
    assert [line.split(" | ")[1] for line in strict.splitlines() if re.match(r"\| \d+ \|", line)] == md_rows
    assert f"| {pct(first['parsed_pass@16'])} |" in strict.splitlines()[4]


def test_sort_falls_back_to_elo_then_pass_rate():
    def lb(**sections):
        base = {"unieval": [], "elo": [], "gteval": None, "lengths": []}
        return [r["model"] for r in leaderboard({**base, **sections})["rows"]]

    unieval = [{"model": m, "n": 16, "pass_rate": p, "dialogues": 5, "unparsed": 0}
               for m, p in (("a", 0.2), ("b", 0.9), ("c", None))]
    elo = [{"model": m, "n": n, "elo": e} for m, e in (("a", 1100.0), ("b", 900.0)) for n in (8, 16)]
    assert lb(unieval=unieval) == ["b", "a", "c"]           # pass@16, missing values last
    assert lb(unieval=unieval, elo=elo) == ["a", "b", "c"]  # Elo@16 beats pass@16
    gt = [{"model": "c", "win_tie_rate": 0.5, "unparsed": 0}, {"model": "b", "win_tie_rate": 0.1, "unparsed": 1}]
    assert lb(unieval=unieval, elo=elo, gteval=gt) == ["c", "b", "a"]


def test_empty_lake_renders_every_section(tmp_path):
    paths = write_report(open_lake(tmp_path / "nothing"), tmp_path / "out", families=registry.families())
    html, md = paths["html"].read_text(), paths["md"].read_text()
    for section in ("leaderboard", "unieval", "arena", "gt", "lengths", "examples", "mtbench101", "judge", "runs"):
        block = html.split(f'<section id="{section}">')[1].split("</section>")[0]
        assert "No data yet" in block, section
    assert md.count("No data yet") == 10 and "No backend call recorded" in md and md.startswith("# dialogbench")  # "Can the judge tell?" too


def test_model_output_is_escaped(report):
    html, md = report["html"], report["md"]
    assert "<script" not in html.lower() and "<b>bold" not in html
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in html
    assert "Nightly &lt;BotChat&gt;" in html
    assert "<script" not in md.lower() and "&lt;script&gt;" in md and "\\| pipe" in md


def test_page_is_self_contained(report):
    html = report["html"]
    assert not re.search(r"https?://", html)
    assert not re.search(r"<(script|img|iframe|object|embed)\b", html, re.I)
    assert re.findall(r"<link[^>]*>", html) == ['<link rel="icon" href="data:,">']  # no favicon request
    assert html.count("<svg") == 5  # pass-rate curves, a heatmap per N (2), GT bars, length boxes
    assert "@import" not in html and "url(" not in html


def test_flagged_examples_highlight_the_judged_utterance(lake, report):
    flagged = view(lake, """select model, item_id, ai_index, reason from unieval_judgments
                            where parsed and choice = 'Yes' order by model, item_id""")
    html = report["html"]
    examples = html.split('<section id="examples">')[1].split("</section>")[0]
    assert examples.count("<details") == len(MODELS) and examples.count("<details open>") == 1
    for model in MODELS:
        shown = [f for f in flagged if f["model"] == model][:3]
        block = examples.split(f"<summary>{model} — ")[1].split("</details>")[0]
        rows = re.findall(r'<tr class="flag">(.*?)</tr>', block)
        assert len(rows) == len(shown) > 0
        for row, f in zip(rows, shown):
            expected = EVIL if f["ai_index"] == 6 else f"{model} says line {f['ai_index']} of {f['item_id']}"
            assert expected.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&#x27;") in row
            assert f"Utterance {f['ai_index']} is far too long &amp; formal." in row
            assert "A:" in row or "B:" in row


def test_each_interval_is_labelled_for_what_it_is(report):
    """Elo's band is a spread over shuffles of the game order (not a confidence interval), with mean ± std over
    repeats; Bradley–Terry's is a bootstrap 95% confidence interval: so in the headers, captions and notes of the
    leaderboard and the Arena, in HTML and in Markdown."""
    html, md = report["html"], report["md"]
    arena = html.split('<section id="arena">')[1].split("</section>")[0]
    heads = [re.sub(r"<[^>]+>", " ", h).split() for h in re.findall(r"<th[^>]*>(.*?)</th>", arena.split("</thead>")[0])]
    assert [" ".join(h) for h in heads] == ["Model", *[x for n in (8, 16) for x in (
        f"Elo@{n} mean ± std over repeats [2.5–97.5% over shuffles]", f"BT@{n} [bootstrap 95% CI]", f"games@{n}")]]
    caption = arena.split("<caption>")[1].split("</caption>")[0]
    assert "[2.5–97.5% over shuffles]: a spread over orderings of the same games, not a confidence interval" in caption
    assert "BT@N: below it, [bootstrap 95% CI]." in caption
    about = arena.split('<p class="about">')[1]
    assert "the mean of those medians over the repeats, ± their standard deviation across repeats" in about
    assert "percentiles of the final ratings of every shuffle of every repeat" in about
    assert "bootstrap 95% confidence interval (percentiles of refits on the games resampled with replacement)" in about
    lead = html.split('<table class="lb">')[1].split("</thead>")[0]
    assert ("Elo@16<br><span class=\"more\">mean ± std over repeats;</span><br>"
            "<span class=\"more\">BT [bootstrap 95% CI]; games") in lead
    notes = html.split('<ul class="notes">')[1].split("</ul>")[0]
    assert "± their standard deviation across repeats" in notes and "bootstrap 95% confidence interval" in notes
    # nowhere is the Elo band called a confidence interval, or Bradley-Terry's a spread
    assert "± std; 2.5–97.5%" not in html and "[95% CI]" not in html and "[95% CI]" not in md
    md_arena = md.split("## BotChat Arena")[1].split("\n## ")[0]
    assert ("| Model | Elo@8 mean ± std over repeats [2.5–97.5% over shuffles] | BT@8 [bootstrap 95% CI] | games@8 |"
            in md_arena)
    assert "not a confidence interval" in md_arena and "bootstrap 95% confidence interval" in md_arena
    md_lead = md.split("## Leaderboard")[1].split("\n## ")[0]
    assert "Elo@8 mean ± std over repeats; BT [bootstrap 95% CI]; games" in md_lead
    assert "± their standard deviation across repeats" in md_lead


def test_tables_come_before_the_text_that_explains_them(report):
    """In every section (HTML and Markdown): the title, its Warnings, the tables and charts, then the text."""
    html, md = report["html"], report["md"]
    sections = re.findall(r'<section id="([^"]+)"><h2>[^<]*</h2>(.*?)</section>', html)
    assert len(sections) >= 8
    for name, body in sections:
        if 'class="empty"' in body:
            continue
        shown = [body.find(tag) for tag in ("<table", "<figure", "<details") if tag in body]
        text = max(body.rfind('<p class="about">'), body.rfind('<ul class="notes">'))
        assert shown and text > max(shown), name
        if '<div class="warnings"' in body:
            assert body.index('<div class="warnings"') == 0, name
    for part in md.split("\n## ")[1:]:
        title, _, body = part.partition("\n\n")
        if body.startswith("_") or "|" not in body:
            continue
        paragraphs = [p for p in body.split("\n\n") if not p.startswith("**Warnings**")]
        last_table = max(i for i, p in enumerate(paragraphs) if p.startswith("| "))
        text = [i for i, p in enumerate(paragraphs) if not p.startswith(("| ", "*", "_Charts", "Columns: "))]
        assert text and min(text) > last_table, title


def test_unieval_table_at_the_papers_n_and_every_n_folded(lake):
    """The open table has the N the paper reports (4, 8, 12, 16); every N is in folded tables of at most 7 N columns,
    each rate with its interval and n, the same cells as the open table's."""
    from dialogbench.botchat.report_sections import unieval

    section = unieval(collect(lake, families=registry.families())["families"]["botchat"])
    main, *every, strict = section.tables
    assert main.headers == ["Model", "N=4", "N=8", "N=12", "N=16", "unparsed"] and not main.collapsed
    assert [t.headers[1:] for t in every] == [[f"N={n}" for n in range(3, 10)], [f"N={n}" for n in range(10, 17)]]
    assert all(t.collapsed and t.caption.startswith("Pass rate at every N") for t in every)
    assert strict.collapsed and strict.headers[1:-1] == [f"N={n}" for n in range(3, 17)]
    folded = {(row[0], head): cell for t in every for row in t.rows for head, cell in zip(t.headers[1:], row[1:])}
    for row in main.rows:
        for head, cell in zip(main.headers[1:-1], row[1:-1]):
            assert folded[(row[0], head)] == cell and "\n[" in cell and " n=" in cell
    rates = {(r["model"], r["n"]): r["pass_rate"] for r in view(lake, "select * from botchat_unieval")}
    assert folded[("alpha", "N=3")].split("\n")[0] == pct(rates[("alpha", 3)])


def test_column_chunks_keep_the_first_columns_in_each_part():
    from dialogbench.report.tables import Table, column_chunks

    t = Table(["Model", "a", "b", "c", "d", "e"], [["m", "1", "2", "3", "4", "5"]], "Rates", collapsed=True)
    parts = column_chunks(t, 1, 2)
    assert [p.headers for p in parts] == [["Model", "a", "b"], ["Model", "c", "d"], ["Model", "e"]]
    assert [p.rows for p in parts] == [[["m", "1", "2"]], [["m", "3", "4"]], [["m", "5"]]]
    assert [p.caption for p in parts] == ["Rates (a to b)", "Rates (c to d)", "Rates (e)"]
    assert all(p.collapsed for p in parts) and column_chunks(t, 1, 5) == [t]


def test_heatmap_mirror_cells_and_counts(lake, report):
    pair = view(lake, "select * from botchat_pair_rates where n = 16 and model_a = 'alpha' and model_b = 'beta'")[0]
    html = report["html"]
    assert f"<title>alpha vs beta: {pair['wins_a'] / pair['games']:.1%}</title>" in html
    assert f"<title>beta vs alpha: {pair['wins_b'] / pair['games']:.1%}</title>" in html
    assert "Judge reliability" in html and "botchat_arena" in html.split('<section id="judge">')[1]


def test_write_is_deterministic_and_atomic(lake, tmp_path):
    first = {k: p.read_bytes() for k, p in write_report(lake, tmp_path, families=registry.families()).items()}
    second = {k: p.read_bytes() for k, p in write_report(lake, tmp_path, families=registry.families()).items()}
    assert first == second
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "report.md"]


def test_svg_helpers_escape_and_handle_empty_input():
    evil = "<x>&"
    for chart in (line_chart({evil: [(3, 0.5), (4, None)]}, label=evil),
                  heatmap([evil, "b"], {(evil, "b"): 0.25}, label=evil),
                  stacked_bars([(evil, [0.5, 0.2, 0.3])], parts=[("win", "#0a0")] * 3, label=evil),
                  box_plot([(evil, {"lo": 1, "q1": 2, "median": 5, "q3": 9, "hi": 3000})], label=evil),
                  line_chart({}, label="empty"), heatmap([], {}, label="empty"), box_plot([], label="empty")):
        assert "<x>" not in chart and chart.startswith("<svg") and chart.endswith("</svg>")


def test_report_on_a_lake_written_by_the_real_stages(make_config, pipeline, tmp_path):
    """The scripted pipeline (seeds, generation, UniEval) as the flow runs it: the report reads its lake."""
    config = make_config()
    pipeline(config, record=True)
    data = collect(open_lake(config.lake), families=registry.families())
    botchat = data["families"]["botchat"]
    assert data["judge"] == botchat["judge"] == "judge" and botchat["leaderboard"]["pass_ns"] == [8]
    rows = botchat["leaderboard"]["rows"]
    assert [r["model"] for r in rows] == sorted(
        ["bot-a", "bot-b"], key=lambda m: (-next(r["pass@8"] for r in rows if r["model"] == m), m))
    assert data["runs"] and {r["stage"] for r in data["runs"]} >= {"botchat_unieval"}
    html = write_report(open_lake(config.lake), tmp_path / "out", families=registry.families())["html"].read_text()
    assert html.count('<tr class="flag">') == len(botchat["examples"]) > 0


def test_skipped_seeds_are_reported_in_the_run_table():
    from dialogbench.report.sections import runs, stage_notes

    detail = json.dumps({"skipped_missing_dialogues": 3, "skipped": {"a vs b @ N=8": 3, "a vs c @ N=8": 0}})
    assert stage_notes(detail) == "seeds skipped (missing dialogues): a vs b @ N=8: 3"
    assert stage_notes(json.dumps({"backend_calls": 6})) == "" and stage_notes(None) == ""
    section = runs({"runs": [{"stage": "botchat_arena", "planned": 10, "cached": 0, "computed": 10, "failed": 0,
                              "seconds": 1.0, "started_at": None, "run_id": "r1", "detail": detail}]})
    assert "a vs b @ N=8: 3" in section.tables[0].rows[0][-1]


def test_a_stage_dispatched_in_groups_names_each_row_s_players():
    from dialogbench.report.sections import stage_notes

    assert stage_notes(json.dumps({"group": ["bot-a", "bot-b"], "moves": 4})) == "players: bot-a + bot-b"


# --- MT-Bench-101 -------------------------------------------------------------------------------------------

MT_MODELS = ["mt-strong", "mt-weak", "<i>mt</i> & | odd"]


def mt_lake(root: Path, *, models=MT_MODELS, judge: str = "gpt-4", tasks=None) -> Lake:
    """Plans and 1–10 turn ratings for every model x task (2 dialogues of 3 turns); model k is worse than
    model k-1; the weak model has one unparsed turn (its dialogue is left out). ``tasks``: the task codes of every
    model (default all 13), or a dict of them per model."""
    import datetime as dt

    import pyarrow as pa

    from dialogbench.lake.schemas import PLANS
    from dialogbench.mtbench101.tables import RATINGS_TABLE
    from dialogbench.mtbench101.taxonomy import TASKS

    t0, plans, judgments, lake = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc), [], [], open_lake(root)
    for k, model in enumerate(models):
        codes = tasks.get(model) if isinstance(tasks, dict) else tasks
        for ti, task in enumerate(codes or [t.code for t in TASKS]):
            for d in range(2):
                for turn in range(3):
                    key, item = f"mt-{k}-{task}-{d}-{turn}", f"{task}-{d}:{turn}"
                    plans.append({"run_id": "r1", "stage": "mtbench101_judge", "cell_key": key, "item_id": item,
                                  "model": model, "judge": judge, "created_at": t0, "task": task,
                                  "roles": [("model", model)], "scope": [model]})
                    parsed = not (k == 1 and ti == 0 and d == 0 and turn == 1)
                    judgments.append({"cell_key": key, "protocol": "mtbench101_judge", "protocol_version": "v1",
                                      "item_id": item, "model": model, "judge": judge, "parsed": parsed,
                                      "score": min(10, max(1, 10 - 2 * k - turn * (1 + ti % 3) // 2 - (ti * 7) % 4 + d))
                                      if parsed else None,
                                      "run_id": "r1", "created_at": t0})
    lake.write("plans", pa.Table.from_pylist(plans, schema=PLANS))
    RATINGS_TABLE.write(lake, judgments)
    return lake


@pytest.fixture(scope="module")
def mt_report(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("mt")
    lake = mt_lake(root / "lake")
    paths = write_report(lake, root / "out", families=registry.families())
    return {"lake": lake, "out": root / "out", **{kind: path.read_text() for kind, path in paths.items()}}


def mt_block(html: str) -> str:
    return html.split('<section id="mtbench101">')[1].split("</section>")[0]


def test_mtbench101_table3_models_columns_and_notes(mt_report):
    from dialogbench.mtbench101.taxonomy import ABILITIES, TASK_CODES, TIERS

    lb = view(mt_report["lake"], "select * from mtbench101_leaderboard")
    expected = [r["model"] for r in sorted(lb, key=lambda r: (r["avg"] is None, -(r["avg"] or 0), r["model"]))]
    html, md = mt_report["html"], mt_report["md"]
    block = mt_block(html)
    table = block[block.index("<table"):block.index("</table>")]
    heads = re.findall(r"<th[^>]*>([^<]*)</th>", table.split("</thead>")[0].split('<tr>')[-1])
    assert heads == ["#", "Model", "Avg", *TASK_CODES, "tasks scored", "unparsed", "missing", "Avg (OpenCompass rule)"]
    group_rows = re.findall(r'<tr class="grp">(.*?)</tr>', table)
    assert [re.findall(r'class="lab">([^<]+)<', g) for g in group_rows] == [list(TIERS), list(ABILITIES)]
    assert 'colspan="5" class="lab">Perceptivity' in group_rows[0] and 'colspan="2" class="lab">Understanding' in group_rows[1]
    shown = [m.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
             for m in re.findall(r"<tr><td>\d+</td><td class=\"nw\">([^<]*(?:<(?!/td)[^<]*)*)</td>", table)]
    assert shown == expected and len(expected) == 3
    best = next(r for r in lb if r["model"] == expected[0])
    assert f"{best['avg']:.2f}" in table and f"{best['CM']:.2f}" in table
    assert "1 to 10" in block and "lowest judged turn" in block and "Judge: gpt-4" in block
    assert "Left out of every score: 1 dialogue with a rating the parser cannot read (unparsed), 0 with a turn " in block
    assert "Avg (OpenCompass rule)" in block and "first [n]" in block
    assert '<a href="#mtbench101">MT-Bench-101</a>' in html
    assert html.index('id="examples"') < html.index('id="mtbench101"') < html.index('id="judge"')
    md_block = md.split("## MT-Bench-101")[1].split("\n## ")[0]
    assert "| # | Model | Avg | " + " | ".join(TASK_CODES) + " |" in md_block
    assert "CM: Perceptivity / Memory; SI: Perceptivity / Understanding" in md_block
    assert "PI: Interactivity / Questioning." in md_block and "No data yet" not in md_block


def test_mtbench101_radar_and_turn_curves(mt_report):
    from dialogbench.mtbench101.taxonomy import ABILITIES

    block = mt_block(mt_report["html"])
    svgs = re.findall(r"<svg.*?</svg>", block)
    assert len(svgs) == 3  # radar, mean by turn per model, best model per task
    radar = svgs[0]
    assert radar.count('<polygon class="series"') == len(MT_MODELS)
    assert re.findall(r'<text[^>]*class="axis"[^>]*>([^<]+)</text>', radar) == list(ABILITIES)
    assert "&lt;i&gt;mt&lt;/i&gt; &amp; | odd" in radar and "<i>" not in block
    assert "<script" not in block
    curves = view(mt_report["lake"], "select * from mtbench101_turn_curves where model = 'mt-strong' and task = 'CM'")
    assert [r["turn"] for r in curves] == [0, 1, 2]
    assert f"CM Context Memory @1: {curves[0]['score']:.2f}" in svgs[2]  # turns shown 1-based
    assert f"CM Context Memory @3: {curves[2]['score']:.2f}" in svgs[2] and "mt-weak" not in svgs[2]
    first = view(mt_report["lake"], """select sum(score * n) / sum(n) as s from mtbench101_turn_curves
                                       where model = 'mt-strong' and turn = 0""")[0]["s"]
    assert f"mt-strong @1: {first:.2f}" in svgs[1] and ">turn 1<" in block
    assert "<svg" not in mt_report["md"]


def test_mtbench101_empty_and_partial(tmp_path):
    from dialogbench.mtbench101.report import mtbench101

    assert mtbench101({"leaderboard": None}).empty.startswith("No data yet")
    assert mtbench101({"leaderboard": []}).empty.startswith("No data yet")
    lake = mt_lake(tmp_path / "lake", models=["solo"], tasks=["CM", "SI"])  # a slice: no Avg, no complete ability
    html = write_report(lake, tmp_path / "out", families=registry.families())["html"].read_text()
    block = mt_block(html)
    assert "No data yet" not in block and "2 / 13" in block and "<td class=\"num\">–</td>" in block
    assert block.count('<polygon class="series"') == 1  # Memory is complete (CM only)


def test_mtbench101_partial_average_is_shown_marked(tmp_path):
    """Table 3's Avg stays blank without all 13 task scores; the report shows the mean over the tasks scored in its
    place, marked partial with its count, and ranks it after the full averages."""
    lake = mt_lake(tmp_path / "lake", models=["full", "part-a", "part-b"],
                   tasks={"part-a": ["CM", "SI", "AR"], "part-b": ["GR"]})
    lb = {r["model"]: r for r in view(lake, "select * from mtbench101_leaderboard")}
    assert lb["part-a"]["avg"] is None and lb["part-a"]["tasks_scored"] == 3
    assert lb["part-a"]["avg_scored"] == pytest.approx((lb["part-a"]["CM"] + lb["part-a"]["SI"] + lb["part-a"]["AR"]) / 3)
    assert lb["full"]["avg_scored"] == pytest.approx(lb["full"]["avg"]) and lb["full"]["tasks_scored"] == 13
    paths = write_report(lake, tmp_path / "out", families=registry.families())
    html, md = paths["html"].read_text(), paths["md"].read_text()
    part_a, part_b = lb["part-a"]["avg_scored"], lb["part-b"]["avg_scored"]
    table = mt_block(html)[mt_block(html).index("<table"):]
    rows = [(rank, model, re.sub(r"</?a[^>]*>", "", avg)) for rank, model, avg in  # the number links to the explorer
            re.findall(r"<tr><td>(\d+)</td><td[^>]*>([^<]+)</td><td class=\"num\">(.*?)</td>", table)]
    assert rows == [("1", "full", f"{lb['full']['avg']:.2f}"),
                    ("2", "part-a", f'{part_a:.2f} partial:<br><span class="more">3 of 13 tasks</span>'),
                    ("3", "part-b", f'{part_b:.2f} partial:<br><span class="more">1 of 13 tasks</span>')]
    mt_md = md.split("## MT-Bench-101")[1].split("\n## ")[0]
    assert f"| 2 | part-a | {part_a:.2f} partial: 3 of 13 tasks |" in mt_md
    assert f"| 1 | full | {lb['full']['avg']:.2f} |" in mt_md
    assert "marked 'partial: k of 13 tasks'" in mt_md


def test_radar_escapes_and_handles_missing_values():
    from dialogbench.report.svg import radar

    chart = radar(["<a>", "b", "c"], {"<x>&": [5, None, 10], "y": [None, None, None]}, label="<l>")
    assert "<x>" not in chart and "<a>" not in chart and "<l>" not in chart
    assert chart.count('<polygon class="series"') == 2 and chart.count("<circle") == 2
    assert chart.startswith("<svg") and chart.endswith("</svg>")


def test_mtbench101_average_shows_the_latest_runs_interval_of_the_number_shown(tmp_path):
    """Below Avg, the cluster bootstrap's 95% interval the board's latest run recorded (headline), when it is the
    interval of the number the table shows; none for a model whose recorded average is another number."""
    import datetime as dt

    from dialogbench.history.tables import METRIC_SNAPSHOTS_TABLE

    lake = mt_lake(tmp_path / "lake", models=["full", "other"])
    avg = {r["model"]: r["avg"] for r in view(lake, "select model, avg from mtbench101_leaderboard")}
    at = dt.datetime(2026, 11, 20, tzinfo=dt.timezone.utc)
    METRIC_SNAPSHOTS_TABLE.write(lake, [
        {"run_id": "r1", "created_at": at, "family": "mtbench101", "board": None, "leaderboard": "mtbench101_leaderboard",
         "metric": "avg", "model": model, "slice": "judge=gpt-4", "judge": "gpt-4", "value": value, "ci_low": value - 0.4,
         "ci_high": value + 0.3, "n": 13, "measured": True, "complete": True}
        for model, value in (("full", avg["full"]), ("other", avg["other"] + 1.0))])
    block = mt_block(write_report(lake, tmp_path / "out", families=registry.families())["html"].read_text())
    full = block[block.index("<tr><td>1</td>"):block.index("<tr><td>2</td>")]
    assert f"{avg['full']:.2f}<br>" in full and f"[{avg['full'] - 0.4:.2f}, {avg['full'] + 0.3:.2f}]" in full
    assert f"[{avg['other'] + 0.6:.2f}," not in block and "below Avg: its 95% interval" in block
