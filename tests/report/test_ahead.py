"""The report's "Who is really ahead" (dialogbench/report/ahead.py over report_pairwise): on a hand-made lake of
paired comparisons (metric_pairs) and snapshots, each matrix marks exactly the pairs whose verdict says a model is
ahead (▲ in its row, ▼ in the other's), leaves "within noise" plain and greys "cannot tell" / "not measured" with the
reason; one judge, the largest N and the latest run are shown; a metric with many slices is folded; a model its
matrix's judge is (the same name, or the same weights and revision) is marked ``†``, with the legend once."""

from __future__ import annotations

import datetime as dt
import re
from html import unescape
from urllib.parse import unquote

import pytest

from dialogbench.history.tables import METRIC_PAIRS_TABLE, METRIC_SNAPSHOTS_TABLE
from dialogbench.judge_checks.self_judging import LEGEND, MARK
from dialogbench.lake.catalog import connect
from dialogbench.run.registry import open_lake
from dialogbench.report import ahead, html
from dialogbench.report.build import render
from dialogbench.run import registry

T0 = dt.datetime(2026, 11, 20, 2, 0, tzinfo=dt.timezone.utc)
BOARD = "nightly"
PASS = ("botchat", "botchat_unieval", "pass_rate")
ROUNDS = ("gameeval", "gameeval_askguess", "mean_rounds")
AVG = ("mtbench101", "mtbench101_leaderboard", "avg")
TASKS = ("mtbench101", "mtbench101_tasks", "score")
NOT_MEASURED = "not measured (judge j fails its judge checks: 40% of verdicts unparsed)"
CANNOT_TELL = "cannot tell (3 shared units, fewer than 5)"


def pair(metric: tuple[str, str, str], slice_: str, a: str, b: str, value_a: float, value_b: float, verdict: str,
         *, ci: tuple[float, float] | None = None, run: str = "r2", p_holm: float | None = 0.01,
         higher_is_better: bool = True) -> dict:
    family, leaderboard, name = metric
    low, high = ci or (None, None)
    return {"run_id": run, "created_at": T0 + dt.timedelta(days=int(run[1:])), "board": BOARD, "family": family,
            "leaderboard": leaderboard, "metric": name, "slice": slice_, "model_a": a, "model_b": b,
            "value_a": value_a, "value_b": value_b, "difference": value_a - value_b, "ci_low": low, "ci_high": high,
            "p": p_holm, "p_holm": p_holm, "shared": 24, "rounds": 1000, "verdict": verdict,
            "higher_is_better": higher_is_better}


def snapshot(metric: tuple[str, str, str], slice_: str, model: str, value: float, run: str = "r2") -> dict:
    family, leaderboard, name = metric
    judge = dict(part.split("=", 1) for part in slice_.split(", ") if "=" in part).get("judge")
    return {"run_id": run, "created_at": T0 + dt.timedelta(days=int(run[1:])), "family": family, "board": BOARD,
            "leaderboard": leaderboard, "metric": name, "model": model, "slice": slice_, "judge": judge,
            "value": value, "ci_low": None, "ci_high": None, "n": 24, "measured": True, "complete": True}


def comparisons() -> list[dict]:
    n16, n8 = "judge=j, n=16", "judge=j, n=8"
    rows = [
        # pass@16 by judge j: alpha ahead of beta, gamma ahead of beta, alpha and gamma within noise
        pair(PASS, n16, "alpha", "beta", 0.8, 0.5, "alpha ahead", ci=(0.1, 0.5)),
        pair(PASS, n16, "alpha", "gamma", 0.8, 0.7, "within noise", ci=(-0.05, 0.25), p_holm=0.2),
        pair(PASS, n16, "beta", "gamma", 0.5, 0.7, "gamma ahead", ci=(-0.35, -0.05)),
        # lower is better: alpha's fewer rounds put it ahead, its difference negative
        pair(ROUNDS, "setting=with_description", "alpha", "beta", 3.0, 5.0, "alpha ahead", ci=(-3.0, -1.0),
             higher_is_better=False),
        # MT-Bench-101's average: a judge that failed its checks, too few shared units, noise
        pair(AVG, "judge=j", "alpha", "beta", 7.0, 6.0, NOT_MEASURED, ci=(0.2, 1.8)),
        pair(AVG, "judge=j", "alpha", "gamma", 7.0, 6.5, CANNOT_TELL, p_holm=None),
        pair(AVG, "judge=j", "beta", "gamma", 6.0, 6.5, "within noise", ci=(-1.5, 0.5), p_holm=0.4),
    ]
    # four task slices: one matrix counting them. alpha ahead of beta in two, within noise and cannot tell in one each;
    # alpha and gamma within noise in all four; beta and gamma never tested
    said = {1: "alpha ahead", 2: "alpha ahead", 3: "within noise", 4: CANNOT_TELL}
    for k in range(1, 5):
        rows += [pair(TASKS, f"judge=j, task=t{k}", "alpha", "beta", 7.0, 6.0, said[k], ci=(0.2, 1.8)),
                 pair(TASKS, f"judge=j, task=t{k}", "alpha", "gamma", 7.0, 6.9, "within noise", ci=(-0.5, 0.7)),
                 pair(TASKS, f"judge=j, task=t{k}", "beta", "gamma", 6.0, 6.9, CANNOT_TELL, p_holm=None)]
    # never shown: a smaller N, another judge with fewer comparisons, an earlier run
    rows += [pair(PASS, n8, a, b, 0.5, 0.4, f"{b} ahead", ci=(0.05, 0.15)) for a, b in
             (("alpha", "beta"), ("alpha", "gamma"), ("beta", "gamma"))]
    rows.append(pair(PASS, "judge=k, n=16", "alpha", "beta", 0.2, 0.9, "beta ahead", ci=(-0.9, -0.5)))
    rows += [pair(PASS, n16, a, b, 0.1, 0.9, f"{b} ahead", ci=(-0.9, -0.7), run="r1") for a, b in
             (("alpha", "beta"), ("alpha", "gamma"), ("beta", "gamma"))]
    return rows


def snapshots() -> list[dict]:
    values = {"alpha": 0.8, "gamma": 0.7, "beta": 0.5}
    return ([snapshot(PASS, "judge=j, n=16", m, v) for m, v in values.items()]
            + [snapshot(ROUNDS, "setting=with_description", m, v) for m, v in (("alpha", 3.0), ("beta", 5.0))])


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    lake = open_lake(tmp_path_factory.mktemp("ahead") / "lake")
    METRIC_PAIRS_TABLE.write(lake, comparisons())
    METRIC_SNAPSHOTS_TABLE.write(lake, snapshots())
    return lake


@pytest.fixture(scope="module")
def report(lake) -> dict[str, str]:
    return render(lake, board=BOARD, families=registry.families())


def section(html: str, name: str) -> str:
    return html.split(f'<section id="{name}">')[1].split("</section>")[0]


def matrices(html: str) -> list[tuple[str, list[str], dict[tuple[str, str], tuple[str, str, str]]]]:
    """Each matrix of the section: its caption, its row models in order, and per (row, column)
    the cell's class, its text (lines joined by a space) and its tooltip."""
    out = []
    for table in re.findall(r'<table class="ahead">.*?</table>', section(html, "ahead")):
        caption = re.search(r"<caption>(.*?)</caption>", table).group(1)
        columns = [unescape(c) for c in re.findall(r'<th class="num"[^>]*>(.*?)</th>', table)]
        rows, cells = [], {}
        for tr in re.findall(r"<tr>(<td.*?)</tr>", table):
            tds = re.findall(r'<td([^>]*)>(.*?)</td>', tr)
            row = unescape(tds[0][1].split("<br>")[0])
            rows.append(row)
            for column, (attrs, text) in zip(columns, tds[1:]):
                kind = re.search(r'class="num (\w+)"', attrs).group(1)
                tip = re.search(r'title="([^"]*)"', attrs)
                plain = unescape(re.sub(r"<[^>]+>", " ", text.replace("<br>", " ")))
                cells[(row, column)] = (kind, " ".join(plain.split()), unescape(tip.group(1)) if tip else "")
        out.append((unescape(caption), rows, cells))
    return out


def find(found, metric: str) -> list:
    return [m for m in found if metric in m[0] and (metric.endswith(",") or f"{metric} (" in m[0])]


def test_the_matrix_marks_exactly_the_ahead_cells(report):
    found = matrices(report["html"])
    (caption, rows, cells), = find(found, "botchat_unieval.pass_rate")
    assert rows == ["alpha", "gamma", "beta"]  # by the models' numbers, best first
    assert "n=16" in caption and "the largest of 2 N" in caption and "judge=j" in caption
    assert "paired bootstrap on the items both have" in caption and "Holm-adjusted p < 0.05" in caption
    assert "interval excluding 0" in caption
    kinds = {k: v[0] for k, v in cells.items()}
    assert kinds == {("alpha", "alpha"): "none", ("gamma", "gamma"): "none", ("beta", "beta"): "none",
                     ("alpha", "beta"): "ahead", ("beta", "alpha"): "behind",
                     ("gamma", "beta"): "ahead", ("beta", "gamma"): "behind",
                     ("alpha", "gamma"): "plain", ("gamma", "alpha"): "plain"}
    assert cells[("alpha", "beta")][:2] == ("ahead", "▲ +30.0 [+10.0, +50.0]")  # percentage points
    assert cells[("beta", "alpha")][:2] == ("behind", "▼ −30.0 [−50.0, −10.0]")
    assert cells[("alpha", "gamma")][1] == "+10.0 [−5.0, +25.0]"
    assert cells[("gamma", "alpha")][1] == "−10.0 [−25.0, +5.0]"
    assert cells[("alpha", "beta")][2].startswith("alpha ahead: alpha 80.0% vs beta 50.0% on 24 shared units")
    # the markers are on the ahead cells only, in every matrix of the section
    everything = [cell for _, _, cs in found for cell in cs.values()]
    assert sum(text.count("▲") for _, text, _ in everything) == sum(k == "ahead" for k, _, _ in everything) == 4
    assert sum(text.count("▼") for _, text, _ in everything) == sum(k == "behind" for k, _, _ in everything) == 4
    # the earlier run, the smaller N and the other judge are not shown
    assert len(find(found, "botchat_unieval.pass_rate")) == 1 and "judge=k" not in section(report["html"], "ahead")


def test_lower_is_better_marks_the_lower_as_ahead(report):
    (caption, rows, cells), = find(matrices(report["html"]), "gameeval_askguess.mean_rounds")
    assert rows == ["alpha", "beta"] and "lower is better" in caption
    assert cells[("alpha", "beta")][:2] == ("ahead", "▲ −2.00 [−3.00, −1.00]")
    assert cells[("beta", "alpha")][:2] == ("behind", "▼ +2.00 [+1.00, +3.00]")


def test_cannot_tell_and_not_measured_are_grey_with_the_reason(report):
    html = report["html"]
    (caption, rows, cells), = find(matrices(html), "mtbench101_leaderboard.avg")
    assert rows == ["alpha", "gamma", "beta"]  # no snapshot: by the mean of each model's numbers in its pairs
    # footnotes numbered in reading order
    assert cells[("alpha", "gamma")] == cells[("gamma", "alpha")] == (
        "grey", "cannot tell¹", "cannot tell: 3 shared units, fewer than 5")
    assert cells[("alpha", "beta")] == ("grey", "not measured²",
                                        "not measured: judge j fails its judge checks: 40% of verdicts unparsed")
    assert cells[("beta", "gamma")][0] == "plain"
    ahead = section(html, "ahead")
    assert "¹ cannot tell: 3 shared units, fewer than 5" in ahead
    assert "² not measured: judge j fails its judge checks: 40% of verdicts unparsed" in ahead
    assert "+1.00" not in ahead.split("mtbench101_leaderboard.avg")[1].split("</table>")[0]  # no number refused


def test_a_metric_with_many_slices_gets_one_matrix_counting_them(report):
    (caption, rows, cells), = find(matrices(report["html"]), "mtbench101_tasks.score,")
    assert caption.startswith("MT-Bench-101: mtbench101_tasks.score, judge=j, over its 4 slices (task)")
    assert rows == ["alpha", "gamma", "beta"]  # by slices ahead minus behind
    assert cells[("alpha", "beta")] == ("ahead", "▲2 of 4", "4 task slices: alpha ahead in task=t1, task=t2; "
                                                            "1 within noise; 1 cannot tell")
    assert cells[("beta", "alpha")][:2] == ("behind", "▼2 of 4")
    assert cells[("alpha", "gamma")] == ("plain", "0 of 4", "4 task slices: 4 within noise")
    assert cells[("beta", "gamma")] == ("grey", "no test of 4", "4 task slices: 4 cannot tell")
    assert "task=t" not in "".join(c for c, _, _ in matrices(report["html"]))  # no matrix per task
    assert ("more than 3 slices has one matrix counting its slices by verdict instead of one per slice: "
            "mtbench101_tasks.score (4 slices)") in section(report["html"], "ahead")


def test_markdown_marks_the_same_cells(report):
    md = report["md"].split("## Who is really ahead")[1].split("\n## ")[0]
    lines = {line.split(" | ")[0].removeprefix("| "): line for line in md.splitlines() if line.startswith("| alpha")}
    assert "**▲ +30.0** [+10.0, +50.0]" in md and "**▼ −30.0** [−50.0, −10.0]" in md
    assert md.count("**▲") == 4 and md.count("**▼") == 4 and "**▲2** of 4" in md
    assert "*cannot tell¹*" in md and "*not measured²*" in md
    assert "² not measured: judge j fails its judge checks: 40% of verdicts unparsed" in md
    assert "alpha (80.0%)" in lines and "Holm-adjusted p &lt; 0.05" in md
    # tables first, then the text that explains them (as every section)
    paragraphs = md.strip().split("\n\n")
    tables = [i for i, p in enumerate(paragraphs) if p.startswith("| ")]
    text = [i for i, p in enumerate(paragraphs) if not p.startswith(("| ", "*"))]
    assert len(tables) == 4 and text and min(text) > max(tables)  # pass@16, rounds, average, the tasks' tally
    assert "Holm-adjusted over the metric's pairs, is under 0.05 and the interval excludes 0" in paragraphs[-1]


def test_the_html_section_explains_after_its_matrices(report):
    ahead = unescape(section(report["html"], "ahead"))
    assert ahead.rfind('<p class="about">') > ahead.rfind("<table")
    assert "Judge: j (other judges' comparisons left out: k)" in ahead
    assert "Of a metric with many N, the largest: botchat_unieval.pass_rate at N = 16 of 2 N" in ahead


def test_the_view_pairs_each_comparison_both_ways(lake):
    with connect(lake, board=BOARD) as con:
        rows = con.execute("select row_model, col_model, difference, ci_low, ci_high, mark, model_rank, largest_n "
                           "from report_pairwise where metric = 'pass_rate' and slice = 'judge=j, n=16' "
                           "order by row_model, col_model").fetchall()
    assert [(r[0], r[1], round(r[2], 9), r[3], r[4], r[5], r[6], r[7]) for r in rows] == [
        ("alpha", "beta", 0.3, 0.1, 0.5, "ahead", 1, True),
        ("alpha", "gamma", 0.1, -0.05, 0.25, "within noise", 1, True),
        ("beta", "alpha", -0.3, -0.5, -0.1, "behind", 3, True),
        ("beta", "gamma", -0.2, -0.35, -0.05, "behind", 3, True),
        ("gamma", "alpha", -0.1, -0.25, 0.05, "within noise", 2, True),
        ("gamma", "beta", 0.2, 0.05, 0.35, "ahead", 2, True)]


def rows_of(lake, sql: str) -> list[dict]:
    with connect(lake, board=BOARD) as con:
        relation = con.execute(sql)
        columns = [d[0] for d in relation.description]
        return [dict(zip(columns, r)) for r in relation.fetchall()]


def test_a_model_its_judge_is_is_marked_in_each_matrix_that_judge_rated(lake, report):
    """alpha has the weights of the judge j (the identities the run's recorded config gives): each matrix and tally
    judged by j names it ``alpha †`` in its rows and columns, the Ask-Guess matrix (no judge) plainly; beta and gamma
    never; the legend once. The report of this lake (no such identities, no model named j) marks nothing."""
    assert MARK not in section(report["html"], "ahead") and LEGEND not in report["md"]
    known = {"alpha": ("weights", "org/m", ""), "j": ("weights", "org/m", ""), "beta": ("name", "beta")}
    found = ahead.section(rows_of(lake, ahead.SQL), rows_of(lake, ahead.TALLY_SQL), judge="j",
                          families=registry.families(), identities=known)
    page = html.render([found], title="t", subtitle="s")
    shown = {caption.split(" (")[0].split(",")[0]: (rows, {c for _, c in cells})
             for caption, rows, cells in matrices(page)}
    alpha = f"alpha {MARK}"
    assert shown == {"BotChat: botchat_unieval.pass_rate": ([alpha, "gamma", "beta"], {alpha, "gamma", "beta"}),
                     "GameEval: gameeval_askguess.mean_rounds": (["alpha", "beta"], {"alpha", "beta"}),
                     "MT-Bench-101: mtbench101_leaderboard.avg": ([alpha, "gamma", "beta"], {alpha, "gamma", "beta"}),
                     "MT-Bench-101: mtbench101_tasks.score": ([alpha, "gamma", "beta"], {alpha, "gamma", "beta"})}
    assert found.intro.count(LEGEND) == 1
    # the links behind the names and cells still name the model itself
    hrefs = [unquote(unescape(h)) for h in re.findall(r'href="(explorer[^"]*)"', page)]
    assert any("model=alpha&" in h for h in hrefs) and not any(MARK in h for h in hrefs)
    md = "\n\n".join(b.markdown for b in found.blocks)
    assert f"| row − column | {alpha} | gamma | beta |" in md and f"| {alpha} (80.0%) |" in md


def test_no_comparison_yet(tmp_path):
    pages = render(open_lake(tmp_path / "lake"), families=registry.families())
    assert "No run on this board has compared models yet" in section(pages["html"], "ahead")
    assert "No run on this board has compared models yet" in pages["md"]
