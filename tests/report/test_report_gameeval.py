"""The report's GameEval section: Table 2's two setting blocks, Table 3's w / l matrix, Figure 6's per-word-pair
win rates, Table 4's points per camp permutation with Total Points, example transcripts, captions that count
unfinished and missing games, and the "no data" note of a lake GameEval never ran on."""

from __future__ import annotations

import re

import pytest

from dialogbench.run.registry import open_lake
from dialogbench.report.build import default_title, write_report
from dialogbench.gameeval.report import EMPTY, gameeval
from dialogbench.run.config import ReportConfig
from dialogbench.report.data import collect
from dialogbench.run import registry
from tests.gameeval.test_views import GAMES, gameeval_lake, plan_rows


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, str]:
    lake = gameeval_lake(tmp_path_factory.mktemp("gameeval-report") / "lake")
    # one game a cell: no few-games marks here (test_report_warnings checks them)
    paths = write_report(lake, tmp_path_factory.mktemp("out"), settings=ReportConfig(min_cells=1),
                         families=registry.families())
    return {kind: path.read_text() for kind, path in paths.items()}


def html_section(html: str) -> str:
    return html.split('<section id="gameeval">')[1].split("</section>")[0]


def html_rows(fragment: str) -> list[list[str]]:
    """Each table row's cells as text (a cell's extra lines joined with a space)."""
    rows = []
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", fragment):
        cells = re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", tr)
        rows.append([re.sub(r"<br>", " ", re.sub(r"<(?!br>)[^>]+>", "", c)) for c in cells])
    return rows


def md_table(md: str, caption_start: str) -> list[list[str]]:
    block = md.split("## GameEval")[1].split("\n## ")[0]
    part = next(p for p in block.split(caption_start, 1)[1].split("\n\n") if p.startswith("| "))
    return [[c.strip() for c in line.strip("|").split(" | ")] for line in part.splitlines()[2:]]


def test_table2_blocks_per_setting(pages):
    md = pages["md"]
    with_desc = md_table(md, "*Table 2, Ask-Guess w/ prior description")
    # beta (ST 100) first; alpha: apple 3/4 ST + 1/4 EE, bus 1/2 ST + 1/2 AME, averaged over the two words;
    # Round as the authors' compute.py: apple (2+3+4)/3, bus 5, then over the words: 4
    assert with_desc == [["1", "beta", "1.00", "100.00", "0.00", "0.00", "0.00", "0.00", "1", "1", "0"],
                         ["2", "alpha", "4.00", "62.50", "12.50", "0.00", "25.00", "0.00", "2", "6", "0"],
                         ["–", "delta", "–", "–", "–", "–", "–", "–", "0", "0", "1"]]  # planned, no game yet
    without = md_table(md, "*Table 2, Ask-Guess w/o prior description")
    # trial 3 failed on backend errors: missing (with trial 4), never a CE
    assert without == [["1", "alpha", "6.00", "50.00", "0.00", "50.00", "0.00", "0.00", "1", "2", "2"]]
    assert md.index("w/ prior description") < md.index("w/o prior description")
    assert md.count("then the mean over the words; 1 missing; matchers: 0 of ") == 1
    assert md.count("then the mean over the words; 2 missing; matchers: 0 of ") == 1
    assert "(questions - 1), 30 for a word never guessed" in md and "scored as the authors' compute.py" in md


def html_table(section: str, caption_start: str) -> tuple[list[list[str]], str]:
    """The rows of the table whose caption starts with ``caption_start``, and its caption."""
    table = section[section.index(caption_start):]
    table = table[:table.index("</table>")]
    return html_rows(table), table.split("</caption>")[0]


def test_table3_spy_by_villager_with_w_and_l(pages):
    section = html_section(pages["html"])
    # alpha vs beta: lion,tiger 2/3 and 10/3, iphone,ipad 0 and 1: the mean over the 2 word pairs (pooled: 0.50 and
    # 2.75), then in parentheses their sum / (2 - 1); beta vs alpha has one word pair: no published value
    w, caption = html_table(section, "Table 3, SpyFall, w:")
    assert w[:2] == [["", "Villagers"], ["Spy", "alpha", "beta"]]
    # w with its value by the paper's formula and its finished games below it (n)
    assert w[2:] == [["alpha", "-", "0.33 (0.67) n=4"], ["beta", "0.00 (–) n=2", "-"]]
    assert "then the mean over the word pairs; below it, in parentheses, pub.:" in caption
    assert "by the paper&#x27;s Table 3 formula, sum over word pairs / (word pairs - 1)" in caption
    assert ("finished games only, 1 unfinished left out, 1 discarded (most votes for no living player) left out, "
            "1 missing") in caption
    l, caption = html_table(section, "Table 3, SpyFall, l:")
    assert l == [["", "Villagers"], ["Spy", "alpha", "beta"], ["alpha", "-", "2.17 (4.33)"], ["beta", "2.50 (–)", "-"]]
    assert "finished games only, 1 unfinished left out, 1 discarded" in caption
    assert section.index("Table 3, SpyFall, w:") < section.index("Table 3, SpyFall, l:")


def test_figure6_win_rate_per_word_pair(pages):
    rows = md_table(pages["md"], "*Figure 6, SpyFall")
    assert rows == [["alpha", "beta", "0.00 0 / 1", "0.67 2 / 3"], ["beta", "alpha", "-", "0.00 0 / 2"]]
    assert "| Spy | Villagers | iphone / ipad | lion / tiger |" in pages["md"]
    section = html_section(pages["html"])
    assert "<details><summary>Figure 6, SpyFall" in section  # folded: a row per ordered model pair


def test_table4_points_per_permutation_and_total(pages):
    rows = md_table(pages["md"], "*Table 4, TofuKingdom:")
    # each camp's points: the model playing it scores them; alpha-beta-gamma's trial 4 failed on backend errors:
    # missing, not unfinished
    assert rows == [["alpha", "beta", "gamma", "3", "0", "2", "0", "1"],
                    ["beta", "gamma", "alpha", "3", "0", "1", "1", "1"],
                    ["gamma", "alpha", "beta", "2", "0", "1", "1", "0"],
                    ["Total", "", "", "8", "0", "", "", ""]]
    # then each camp's win rate, points / finished games (no snapshot here: no interval below it)
    assert md_table(pages["md"], "*Table 4, TofuKingdom Total Points") == [
        ["alpha", "4", "0.67 2 / 3", "0.50 1 / 2", "0.33 1 / 3"], ["gamma", "3", "0.50 1 / 2", "0.33 1 / 3", "0.33 1 / 3"],
        ["beta", "1", "0.33 1 / 3", "0.00 0 / 3", "0.00 0 / 2"]]
    section = html_section(pages["html"])
    rows, caption = html_table(section, "Table 4, TofuKingdom:")
    assert rows[:2] == [["Camps", "", "Points"], ["Prince", "Spy", "Queen", "games", "unfinished", "Prince", "Spy", "Queen"]]
    assert "finished games only, 0 unfinished left out, 2 missing" in caption


def test_intro_counts_and_example_transcripts(pages):
    section = html_section(pages["html"])
    assert ("Ask-Guess: 12 games planned, 9 played (9 finished, 0 unfinished), 3 missing (1 of them failed on "
            "backend errors: no outcome, replayed by the next run), 0 chat errors") in section
    assert ("SpyFall: 9 games planned, 8 played (6 finished, 1 unfinished, 1 discarded), 1 missing, 3 chat errors"
            in section)
    assert ("TofuKingdom: 10 games planned, 8 played (8 finished, 0 unfinished), 2 missing (1 of them failed on "
            "backend errors") in section
    assert "Ask-Guess (Table 2) counts every played trial, chat errors included" in section
    assert ("count only the games that finished by the rules (the paper&#x27;s successful trials): unfinished games "
            "are left out of their rates and points") in section
    assert section.count("<details>") == 6  # Figure 6, all SpyFall pairs, moves per model + an example per game
    example = section[section.index("Example Ask-Guess game (apple/with_description/1)"):]
    example = example[:example.index("</table>")]
    rows = html_rows(example)
    assert rows[1:] == [
        ["1", "0", "host", "host", "The game starts. Answerer, describe the word.", ""],
        ["2", "0", "answerer", "alpha", "A round fruit that grows on trees.", ""],
        ["3", "1", "questioner", "alpha", "Is it an apple?", "Round fruit on a tree."],
        ["4", "1", "answerer", "alpha", "Gameover", ""]]
    assert "thought (private)" in example and "outcome ST after 2 rounds" in example
    assert "Example SpyFall game (iphone,ipad/1)" in section
    assert "Example TofuKingdom game (alpha-beta-gamma/1)" in section and "won by the prince camp" in section
    assert "won by the villagers side" in section
    assert "Example Ask-Guess game (apple/with\\_description/1)" in pages["md"]


def test_page_title_and_section_order(pages):
    html = pages["html"]
    title = default_title(families=registry.families())
    assert f"<title>{title}</title>" in html and "GameEval" in title
    assert html.index('id="mtbench101"') < html.index('id="gameeval"') < html.index('id="judge"')
    assert '<a href="#gameeval">GameEval</a>' in html


def test_empty_lake_renders_a_no_data_note(tmp_path):
    paths = write_report(open_lake(tmp_path / "nothing"), tmp_path / "out", families=registry.families())
    html, md = paths["html"].read_text(), paths["md"].read_text()
    assert f'<p class="empty">{EMPTY}</p>' in html_section(html)
    assert "## GameEval\n\n_No GameEval games yet" in md


def test_planned_but_unplayed_games_render(tmp_path):
    """A run that planned games but wrote none yet (killed, or still running): counts, the planned models (their
    plans' roles) with every game missing, no crash."""
    lake = gameeval_lake(tmp_path / "lake", games=[], plans=[p for p in plan_rows() if p["run_id"] == "run-2"])
    section = gameeval(collect(lake, families=registry.families())["families"]["gameeval"])
    assert section.empty is None
    table2 = next(t for t in section.tables if t.caption.startswith("Table 2, Ask-Guess w/ prior"))
    assert [(r[1], r[-2], r[-1]) for r in table2.rows] == [("alpha", "0", "6"), ("beta", "0", "1"), ("delta", "0", "1")]
    assert "Ask-Guess: 12 games planned, 0 played (0 finished, 0 unfinished), 12 missing" in section.intro


def test_one_game_only(tmp_path):
    games = [g for g in GAMES if g["game"] == "spyfall"]
    lake = gameeval_lake(tmp_path / "lake", games=games,
                         plans=[p for p in plan_rows() if p["stage"] == "gameeval_spyfall"])
    section = gameeval(collect(lake, families=registry.families())["families"]["gameeval"])
    assert "Ask-Guess: not run" in section.intro and "TofuKingdom: not run" in section.intro
    assert [t.caption.split(",")[0] for t in section.tables if not t.collapsed] == ["Table 3", "Table 3"]
    assert [t.caption.split(",")[0] for t in section.tables if t.collapsed][:2] == [
        "Figure 6", "All SpyFall model pairs: finished games"]


def test_a_discarded_spyfall_example_says_so():
    from dialogbench.gameeval.report import example_table

    g = {"game": "spyfall", "item_id": "lion,tiger/3", "item": "lion,tiger", "setting": "default",
         "assignment": {"spy": "a"}, "finished": False, "outcome": "discarded", "end_reason": "voted_no_player",
         "rounds": 2, "events": []}
    assert "discarded (the most votes went to no living player) after 2 rounds" in example_table(g).caption


def test_table2_caption_counts_the_games_the_matchers_score_differently():
    from dialogbench.gameeval.report import askguess_tables

    row = {"model": "m", "setting": "without_description", "st": 50.0, "ee": 50.0, "rle": 0.0, "ame": 0.0, "ce": 0.0,
           "mean_rounds": 4.0, "words": 2, "trials": 8, "missing": 0, "matchers_differ": 3}
    (table,) = askguess_tables([row], {"planned": 8})
    assert "matchers: 3 of 8 played games would score differently under the other matcher" in table.caption
    assert "(questions - 1)" in table.caption
