"""The report follows the registry: a family registered with a report section gets its section (after the
built-in families', in the nav and the title, its queries read, a missing view as None, the report's judge
passed to it); a family without one (the toy echo family of tests/toy_family.py) changes nothing."""

from __future__ import annotations

import pytest

from tests.fakes.synthetic_lake import synthetic_lake
from dialogbench.run.registry import open_lake
from dialogbench.run import registry
from dialogbench.run.family_spec import Family
from dialogbench.lake import Lake
from dialogbench.report.build import default_title, render, write_report
from dialogbench.report.data import collect
from dialogbench.report.section import Context, ReportSection
from dialogbench.report.tables import Section, Table


def toy_derive(rows: dict, context: Context) -> dict:
    return {**rows, "judge": context.judge}


def toy_sections(data: dict) -> list[Section]:
    if not data["runs"]:
        return [Section("toy", "Toy echo", empty="No toy runs yet.")]
    return [Section("toy", "Toy echo", f"Judge: {data['judge']}.",
                    [Table(["Stage", "planned"], [[r["stage"], str(r["planned"])] for r in data["runs"]])])]


TOY_REPORT = ReportSection(queries={"runs": "select distinct stage, planned from report_latest_run order by stage",
                                    "missing": "select * from toy_view_that_does_not_exist"},
                           derive=toy_derive, sections=toy_sections)
BUILTIN_TITLE = "dialogbench — BotChat, MT-Bench-101 and GameEval report"


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> Lake:
    root = tmp_path_factory.mktemp("families") / "lake"
    synthetic_lake(root, models=["alpha", "beta"], seeds=4, arena_seeds=2, seed=1)
    return open_lake(root)


@pytest.fixture(scope="module")
def builtin_pages(lake) -> dict[str, str]:
    """The report with the built-in families only."""
    assert [f.name for f in registry.families()] == ["botchat", "mtbench101", "gameeval", "canary", "judge_checks"]
    return render(lake, families=registry.families())


@pytest.fixture
def toy():
    family = registry.register(Family(name="toy_report", title="Toy echo", section=object,
                                      stages=lambda config: [], report=TOY_REPORT))
    yield family
    registry.unregister(family.name)


@pytest.fixture
def echo():
    from tests import toy_family  # registers its family on import

    family = registry.register(toy_family.FAMILY)
    assert family.report is None
    yield family
    registry.unregister(family.name)


def test_a_family_with_a_report_section_is_shown(lake, builtin_pages, toy):
    data = collect(lake, families=registry.families())
    assert list(data["families"]) == ["botchat", "mtbench101", "gameeval", "toy_report", "canary", "judge_checks"]  # checks last
    toy_data = data["families"]["toy_report"]
    assert toy_data["missing"] is None and toy_data["judge"] == data["judge"] == "gpt-4-0613"
    assert [r["stage"] for r in toy_data["runs"]] == sorted({r["stage"] for r in data["runs"]})

    pages = render(lake, families=registry.families())
    html, md = pages["html"], pages["md"]
    title = default_title(families=registry.families())
    assert title == "dialogbench — BotChat, MT-Bench-101, GameEval and Toy echo report"
    assert f"<title>{title}</title>" in html and md.startswith(f"# {title}\n")
    assert html.index('id="gameeval"') < html.index('<section id="toy">') < html.index('id="judge"')
    assert ('<a href="#gameeval">GameEval</a><a href="#toy">Toy echo</a><a href="#ahead">Who is really ahead</a>'
            '<a href="#trends">Trends</a><a href="#canary">Judge canary</a>'
            '<a href="#judge-checks">Can the judge tell?</a><a href="#judge">') in html
    block = md.split("## Toy echo\n\n")[1].split("\n## ")[0]
    assert block.startswith("| Stage | planned |") and block.endswith("|\n\nJudge: gpt-4-0613.\n")  # table, then text
    assert "| botchat\\_unieval |" in block
    # the rest of the page as without the toy family
    section = '<section id="toy">' + html.split('<section id="toy">')[1].split("</section>")[0] + "</section>"
    rest = html.replace(section, "").replace('<a href="#toy">Toy echo</a>', "")
    assert rest.replace(title, "TITLE") == builtin_pages["html"].replace(BUILTIN_TITLE, "TITLE")


def test_a_family_section_on_an_empty_lake(tmp_path, toy):
    md = write_report(open_lake(tmp_path / "nothing"), tmp_path / "out", families=registry.families())["md"].read_text()
    assert "## Toy echo\n\n_No toy runs yet._" in md and md.count("No data yet") == 10 and "No backend call recorded" in md


def test_a_family_without_a_report_section_changes_nothing(lake, builtin_pages, echo):
    assert echo.name in [f.name for f in registry.families()]
    assert "toy" not in collect(lake, families=registry.families())["families"]
    assert render(lake, families=registry.families()) == builtin_pages
    assert default_title(families=registry.families()) == BUILTIN_TITLE


def test_the_registry_is_left_as_found():
    assert [f.name for f in registry.families()] == ["botchat", "mtbench101", "gameeval", "canary", "judge_checks"]


def test_judged_queries_must_exist():
    with pytest.raises(ValueError, match="judged names no query: elo"):
        ReportSection(queries={"runs": "select 1"}, judged=("elo",), sections=lambda data: [])
