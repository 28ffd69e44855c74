"""Self-judging (issue 34, item 5): a candidate that is its own judge (the same name, or the same weights and revision
under another name) is named at validate time (a note of the preflight) and marked in every leaderboard it appears in:
the CLI's (the families' tables and the Arena and GTEval tables ``dialogbench run`` prints), results.json and
``dialogbench export`` (a ``self_judged`` column), the Prefect leaderboard artifacts, and the report's family sections,
"Who is really ahead" and "Trends"."""

from __future__ import annotations

import logging
import re

import pytest
import yaml

from dialogbench.backends import clear_backends

from dialogbench.run.registry import run_for
from dialogbench.run import registry
from dialogbench.botchat.leaderboard import format_leaderboard
from dialogbench.cli import main
from dialogbench.judge_checks import self_judging
from dialogbench.judge_checks.self_judging import LEGEND, MARK, identities, identities_from_yaml, mark_rows, \
    same_model, self_judged
from dialogbench.mtbench101.leaderboard import format_mtbench101
from dialogbench.run.preflight import check, preflight
from dialogbench.run.registry import open_lake
from dialogbench.report import ahead, trends
from dialogbench.report.build import render
from dialogbench.report.data import collect
from dialogbench.report.markdown import section as md_section
from dialogbench.report.results import collect_results, format_all_leaderboards
from dialogbench.run.runs import StageReport, record_stage
from tests.conftest import REPO_ROOT, chatbot, config_dict
from tests.stage_runner import night

# -- the rule -------------------------------------------------------------------------------------------------------


def weighted(lake_dir, *, a: dict, judge: dict, b: dict | None = None, **botchat) -> dict:
    """A config whose bot-a, bot-b and judge carry ``a``, ``b`` and ``judge`` (weights, revision, ...)."""
    return config_dict(lake_dir, models=[chatbot("bot-a", **a), chatbot("bot-b", **(b or {}))], judge_extra=judge,
                       **botchat)


def test_a_candidate_named_as_the_judge_is_self_judged(make_config, lake_dir):
    config = make_config(config_dict(lake_dir, judge="bot-a"))
    assert self_judged(config) == {"botchat": {"bot-a"}}


def test_the_same_weights_under_another_name_are_self_judged_whatever_the_backend_or_sampling(make_config, lake_dir):
    data = weighted(lake_dir, a={"weights": "org/m", "revision": "abc"},
                    judge={"weights": " org/m/ ", "revision": "abc", "max_tokens": 48,
                           "sampling": {"temperature": 0.7}})  # another spelling, other settings: the same model
    data["models"].append({"name": "bot-c", "backend": "openai", "weights": "org/m", "revision": "abc"})
    config = make_config(data)
    assert self_judged(config) == {"botchat": {"bot-a", "bot-c"}}
    assert identities(config)["bot-a"] == identities(config)["judge"] == ("weights", "org/m", "abc")
    assert identities(config)["bot-b"] == ("name", "bot-b")  # no weights: its name alone


@pytest.mark.parametrize("a", [{"weights": "org/m", "revision": "other"}, {"weights": "org/m"},
                               {"weights": "org/m2", "revision": "abc"}, {}])
def test_another_revision_other_weights_or_none_are_not_self_judged(make_config, lake_dir, a):
    config = make_config(weighted(lake_dir, a=a, judge={"weights": "org/m", "revision": "abc"}))
    assert self_judged(config) == {"botchat": set()}


def test_each_judged_family_is_checked_against_its_own_judge(make_config, lake_dir):
    data = config_dict(lake_dir)
    data["mtbench101"] = {"enabled": True, "judge": "bot-b", "tasks": ["GR"], "limit": 1}
    config = make_config(data)
    assert self_judged(config) == {"botchat": set(), "mtbench101": {"bot-b"}}  # GameEval has no judge: absent
    (note,) = self_judging.notes(config, source="c.yaml")
    assert note.startswith("c.yaml: model 'bot-b': self-judging: it is the judge of MT-Bench-101 (mtbench101.judge)")
    data["mtbench101"]["enabled"] = False
    assert self_judged(make_config(data)) == {"botchat": set()}


def test_an_agreement_judge_that_is_a_candidate_is_noted_but_marks_nothing(make_config, lake_dir):
    """An agreement judge rates its own output too, but never the headline: a note says so, no row is marked."""
    data = config_dict(lake_dir, agreement_judges=["bot-a"])
    data["mtbench101"] = {"enabled": True, "tasks": ["GR"], "limit": 1, "agreement_judges": ["bot-b"]}
    config = make_config(data)
    assert self_judged(config) == {"botchat": set(), "mtbench101": set()}
    notes = self_judging.notes(config, source="c.yaml")
    assert [n.split(": self-judging: ")[0] for n in notes] == ["c.yaml: model 'bot-a'", "c.yaml: model 'bot-b'"]
    assert "agreement judge of BotChat (UniEval, Arena, GTEval) (botchat.agreement_judges)" in notes[0]
    assert "agreement judge of MT-Bench-101 (mtbench101.agreement_judges)" in notes[1]


def test_same_model_and_the_rows_it_marks():
    known = {"a": ("weights", "w", ""), "j": ("weights", "w", ""), "b": ("name", "b")}
    assert same_model("j", "j") and same_model("a", "j", known)
    assert not same_model("b", "j", known) and not same_model("a", None, known) and not same_model("x", "y", known)
    rows = mark_rows([{"model": "a", "judge": "j"}, {"model": "b", "judge": "j"}, {"model": "b", "judge": "b"},
                      {"model": "a"}], judge="j", known=known)
    assert [r["self_judged"] for r in rows] == [True, False, True, True]


def test_the_recorded_config_gives_the_same_identities(make_config, lake_dir):
    config = make_config(weighted(lake_dir, a={"weights": "org/m"}, judge={"weights": "org/m"}))
    recorded = yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False)  # what run_configs keeps
    assert identities_from_yaml(recorded) == identities(config)
    assert identities_from_yaml(None) == identities_from_yaml("- not: a config") == identities_from_yaml("[") == {}


# -- validate and the run's preflight ---------------------------------------------------------------------------------


def test_validate_notes_each_self_judged_candidate(config_file, lake_dir, capsys):
    path = config_file(weighted(lake_dir, a={"weights": "org/m"}, judge={"weights": "org/m"}))
    assert main(["validate", "--config", str(path)]) == 0  # a note: the config stays valid
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note: ")]
    assert len(notes) == 1
    assert notes[0].startswith(f"note: {path}: model 'bot-a': self-judging: it has the weights and revision of the "
                               "judge 'judge' of BotChat (UniEval, Arena, GTEval) (botchat.judge)")
    assert "self-enhancement bias" in notes[0] and "org/m" not in notes[0]  # weights never quoted (a URL's password)
    assert main(["validate", "--config", str(config_file(config_dict(lake_dir)))]) == 0
    assert "self-judging" not in capsys.readouterr().out


def test_the_runs_preflight_warns_of_it(make_config, lake_dir, caplog, monkeypatch):
    import dialogbench.run.preflight

    monkeypatch.setattr(dialogbench.run.preflight, "_NOTED", set())  # notes are logged once per process
    config = make_config(config_dict(lake_dir, judge="bot-b"))
    found = check(run_for(config, source="c.yaml"))
    assert found.inputs == found.machine == [] and [n for n in found.notes if "self-judging" in n] == [
        n for n in found.notes if n.startswith("c.yaml: model 'bot-b': self-judging: it is the judge")]
    with caplog.at_level(logging.WARNING, logger="dialogbench.preflight"):
        preflight(run_for(config, source="c.yaml"))  # warns, raises nothing
    assert "model 'bot-b': self-judging" in caplog.text and "bot-a" not in caplog.text


# -- the marks: CLI leaderboards, the Prefect artifacts, the report ---------------------------------------------------


def test_the_cli_leaderboards_mark_a_self_judged_row_and_say_why():
    botchat = [{"model": "a", "judge": "a", "dialogues": 4, "unparsed": 0, "pass@4": 0.5, "self_judged": True},
               {"model": "b", "judge": "a", "dialogues": 4, "unparsed": 0, "pass@4": 0.25, "self_judged": False}]
    text = format_leaderboard(botchat, [4])
    lines = text.splitlines()
    assert next(line for line in lines if line.startswith("a ")).split()[:2] == ["a", MARK]
    assert MARK not in next(line for line in lines if line.startswith("b "))
    assert lines[-1] == LEGEND
    mt = [{"model": "a", "judge": "a", "avg": 6.0, "self_judged": True}, {"model": "b", "judge": "a", "avg": 5.0}]
    lines = format_mtbench101(mt).splitlines()
    assert next(line for line in lines if line.startswith("a ")).split()[:2] == ["a", MARK] and lines[-1] == LEGEND
    unmarked = [{**r, "self_judged": False} for r in botchat]
    assert MARK not in format_leaderboard(unmarked, [4]) and MARK not in format_mtbench101(mt[1:])


def test_a_leaderboard_artifact_names_its_self_judged_models(monkeypatch):
    import tasks.artifacts as artifacts

    calls: list[dict] = []
    monkeypatch.setattr(artifacts, "create_table_artifact", lambda **kwargs: calls.append(kwargs))
    artifacts.publish_leaderboards("r1", {"botchat": [{"model": "a", "self_judged": True},
                                                      {"model": "b", "self_judged": False}],
                                          "gameeval": {"askguess": [{"model": "a"}]}})
    botchat, game = calls
    assert [r["self_judged"] for r in botchat["table"]] == [True, False]
    assert "self_judged: a: rated by the judge, the same model (self-enhancement bias" in botchat["description"]
    assert "self_judged" not in game["description"]


def section(md: str, title: str) -> str:
    return md.split(f"## {title}")[1].split("\n## ")[0]


def recorded_night(config, run_id: str) -> None:
    """A night, and a ``runs`` row for it: the report reads the run's recorded config through its latest run."""
    night(config, run_id)
    record_stage(open_lake(config.lake), run_id=run_id, report=StageReport("extract_seeds"), config="night.yaml",
                 board=config.board)


def test_a_night_marks_the_self_judged_model_in_every_leaderboard_and_not_the_others(make_config, lake_dir):
    """Each judge has bot-a's weights under another name: the CLI's rows and the report (which knows the weights from
    the run's recorded config) mark bot-a in BotChat's and MT-Bench-101's tables, never bot-b."""
    data = weighted(lake_dir, a={"weights": "org/m"}, judge={"weights": "org/m"}, n=[4], limit=2,
                    judge_script=["Choice: No\nIndex: None\nReason: fine.", "Choice: Yes\nIndex: 4\nReason: odd."])
    data["judges"].append({"name": "mt-judge", "backend": "scripted", "script": ["Rating: [[7]]"], "weights": "org/m"})
    data["mtbench101"] = {"enabled": True, "judge": "mt-judge", "tasks": ["GR"], "limit": 1}
    config = make_config(data)
    recorded_night(config, "r1")
    boards = registry.leaderboards(config)
    for family in ("botchat", "mtbench101"):
        assert {r["model"]: r["self_judged"] for r in boards[family]} == {"bot-a": True, "bot-b": False}, family
    assert f"bot-a {MARK}" in format_leaderboard(boards["botchat"], [4])
    assert f"bot-a {MARK}" in format_mtbench101(boards["mtbench101"])

    page = render(open_lake(config.lake), board=config.board, families=registry.families())
    md, html = page["md"], page["html"]
    for title in ("Leaderboard", "UniEval pass rate vs N", "Utterance lengths", "MT-Bench-101"):
        text = section(md, title)
        assert f"bot-a {MARK}" in text and f"bot-b {MARK}" not in text and "bot-b" in text, title
        assert LEGEND in text, title
    # a warning opens each family: who, by whom, why
    assert ("Self-judging: bot-a is rated by the judge judge, the same model (the same name, or the same weights and "
            "revision)") in section(md, "Leaderboard")
    assert "Self-judging: bot-a is rated by the judge mt-judge" in section(md, "MT-Bench-101")
    assert f"bot-a {MARK}" in html and f"bot-b {MARK}" not in html and "self-enhancement bias" in html


def test_a_report_without_a_self_judged_model_has_no_mark(make_config, lake_dir):
    config = make_config(config_dict(lake_dir, n=[4], limit=2))
    recorded_night(config, "r1")
    assert all(not r["self_judged"] for r in registry.leaderboards(config)["botchat"])
    page = render(open_lake(config.lake), board=config.board, families=registry.families())
    assert MARK not in page["md"] and "Self-judging" not in page["md"] and MARK not in page["html"]
    lake, families = open_lake(config.lake), registry.families()
    text = format_all_leaderboards(lake, config.board, families=families)
    assert MARK not in text and LEGEND not in text
    found = collect_results(lake, config.board, families=families)["leaderboards"]
    rows = [r for key in ("botchat/botchat_unieval", "core/headline") for r in found[key]["rows"]]
    assert rows and all(r["self_judged"] is False for r in rows)


# -- results.json, the run's Arena and GTEval tables, who is really ahead, the trends ---------------------------------

UNIEVAL = ["Choice: No\nIndex: None\nReason: fine.", "Choice: Yes\nIndex: 4\nReason: odd."]
COMPARED = ["Choice: Conversation 1\nReason: the first one rambles.", "Choice: Conversation 2\nReason: too formal."]


@pytest.fixture(scope="module")
def two_nights(tmp_path_factory):
    """Two nights of every judged protocol where BotChat's judge ``judge`` has bot-a's weights under another name and
    MT-Bench-101's judge is bot-b itself (its script rates): bot-a is self-judged in BotChat's UniEval, Arena and
    GTEval, bot-b in MT-Bench-101, never the other way round."""
    tmp = tmp_path_factory.mktemp("self_judged")
    data = weighted(tmp / "lake", a={"weights": "org/m"}, judge={"weights": "org/m"}, b={"script": ["Rating: [[7]]"]},
                    n=[4], limit=2, judge_script=UNIEVAL + COMPARED, arena={"enabled": True, "n": [4]},
                    gteval={"enabled": True})
    data["mtbench101"] = {"enabled": True, "judge": "bot-b", "tasks": ["GR"], "limit": 1}
    path = tmp / "config" / "config.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    config = registry.load_config(path, root=REPO_ROOT)
    clear_backends()
    for run_id in ("r1", "r2"):
        recorded_night(config, run_id)
    clear_backends()
    return config


SELF_JUDGED = {"botchat": "bot-a", "mtbench101": "bot-b"}  # the model each judged family's judge is
OTHER = {"botchat": "bot-b", "mtbench101": "bot-a"}


def test_results_json_says_which_rows_are_self_judged(two_nights):
    found = collect_results(open_lake(two_nights.lake), two_nights.board, families=registry.families())
    boards = found["leaderboards"]
    for key in ("botchat/botchat_unieval", "botchat/botchat_unieval_gt", "botchat/botchat_elo",
                "botchat/botchat_gteval", "mtbench101/mtbench101_leaderboard", "mtbench101/mtbench101_tasks"):
        family = key.split("/")[0]
        table = boards[key]
        assert table["columns"][-1] == "self_judged" and table["rows"], key
        assert {(r["model"], r["self_judged"]) for r in table["rows"]} == {(SELF_JUDGED[family], True),
                                                                           (OTHER[family], False)}, key
    for key in ("gameeval/gameeval_askguess", "gameeval/gameeval_spyfall", "gameeval/gameeval_tofukingdom",
                "judge_checks/judge_probes"):  # no judge rates these models' numbers: no column
        assert "self_judged" not in boards[key]["columns"], key
    headline = boards["core/headline"]["rows"]
    assert headline and all(r["self_judged"] is (r["model"] == SELF_JUDGED[r["family"]]) for r in headline)


def test_the_arena_and_gteval_tables_the_run_prints_mark_the_model_and_say_why_once(two_nights):
    lake, families = open_lake(two_nights.lake), registry.families()
    text = format_all_leaderboards(lake, two_nights.board, views=("botchat_elo", "botchat_gteval"), families=families)
    for key in ("botchat/botchat_elo", "botchat/botchat_gteval"):
        rows = text.split(f"({key})\n")[1].split("\n\n")[0].splitlines()[2:]
        assert len(rows) == 2 and {r.split("  ")[0] for r in rows} == {f"bot-a {MARK}", "bot-b"}, key
    assert text.splitlines()[-1] == LEGEND and text.count(LEGEND) == 1
    everything = format_all_leaderboards(lake, two_nights.board, families=families)
    mt = everything.split("(mtbench101/mtbench101_leaderboard)\n")[1].split("\n\n")[0].splitlines()[2:]
    assert {r.split("  ")[0] for r in mt} == {f"bot-b {MARK}", "bot-a"}
    assert everything.count(LEGEND) == 1 and f"bot-a {MARK}" not in "\n".join(mt)


def matrix_names(md: str) -> dict[str, set[str]]:
    """"Who is really ahead" in Markdown: per leaderboard of a matrix (its caption's), its rows' and columns' names
    as shown (marked or not)."""
    found: dict[str, set[str]] = {}
    board = None
    for line in md.splitlines():
        if caption := re.match(r"\*[^*:]+: ([a-z0-9\\_]+)\.", line):
            board = caption.group(1).replace("\\", "")
        elif line.startswith("| ") and board:
            cells = [c.strip() for c in line.strip("|").split("|")]
            found.setdefault(board, set()).update(c.split(" (")[0] for c in
                                                  (cells[1:] if cells[0] == "row − column" else cells[:1]))
    return found


def chart_names(md: str) -> dict[str, set[str]]:
    """"Trends" in Markdown: per leaderboard of a chart, the models its table names as shown."""
    found: dict[str, set[str]] = {}
    for line in md.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 6 and cells[0] != "Metric":
            found.setdefault(cells[0].split(".")[0].replace("\\", ""), set()).add(cells[1])
    return found


AHEAD_BOARDS = {"botchat_unieval", "botchat_gteval", "mtbench101_leaderboard", "mtbench101_tasks"}  # Elo: no units


def test_who_is_ahead_and_the_trends_mark_the_model_its_judge_is(two_nights):
    """Given the run's identities (its recorded config: ``self_judging.identities_from_yaml``), every BotChat matrix
    and chart marks bot-a (the judge's weights), every MT-Bench-101 one bot-b (the judge), each section with the legend
    once; the model rated by another judge is never marked."""
    families = registry.families()
    data = collect(open_lake(two_nights.lake), families=families, board=two_nights.board)
    known = self_judging.identities_from_yaml(data["header"][0]["run_config"])
    assert known["bot-a"] == known["judge"] != known["bot-b"]
    shown = {"ahead": ahead.section(data["pairwise"], data["pairwise_tally"], judge=data["judge"], families=families,
                                    identities=known),
             "trends": trends.section(data["trends"], judge=data["judge"], families=families, identities=known)}
    for name, found in shown.items():
        md = md_section(found)
        seen = matrix_names(md) if name == "ahead" else chart_names(md)
        assert set(seen) == (AHEAD_BOARDS if name == "ahead" else AHEAD_BOARDS | {"botchat_elo"}), name
        for board, models in seen.items():
            family = board.split("_")[0]
            assert models == {f"{SELF_JUDGED[family]} {MARK}", OTHER[family]}, (name, board)
        assert md.count(LEGEND) == 1, name
    # the chart's own legend (the SVG) names the model as the table does
    botchat = [drawn for caption, drawn in shown["trends"].charts if caption.startswith("BotChat")]
    assert botchat and all(f"bot-a {MARK}" in drawn and f"bot-b {MARK}" not in drawn for drawn in botchat)
    # without identities a model is only its name: bot-b still is MT-Bench-101's judge, bot-a is not BotChat's
    plain = md_section(ahead.section(data["pairwise"], data["pairwise_tally"], judge=data["judge"], families=families))
    assert f"bot-b {MARK}" in plain and f"bot-a {MARK}" not in plain


def test_the_rendered_report_marks_a_candidate_that_is_its_judge_in_who_is_ahead_and_the_trends(two_nights):
    page = render(open_lake(two_nights.lake), board=two_nights.board, families=registry.families())
    for title, names in (("Who is really ahead", matrix_names), ("Trends", chart_names)):
        text = section(page["md"], title)
        seen = names(text)
        assert seen["mtbench101_leaderboard"] == seen["mtbench101_tasks"] == {f"bot-b {MARK}", "bot-a"}, title
        assert seen["botchat_unieval"] == {f"bot-a {MARK}", "bot-b"}, title  # the judge by its weights, not its name
        assert text.count(LEGEND) == 1, title
