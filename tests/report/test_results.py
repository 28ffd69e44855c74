"""``dialogbench.report.results``: every leaderboard of a board in ``results.json`` beside each published report (every column
of each leaderboard view, its intervals and ``measured`` flags included, a judged one's ``self_judged``, and the run's
provenance),
``dialogbench export`` without SQL (json: the same leaderboards; csv: one file per leaderboard), a board no run
published to refused by name, the SQL form of ``export`` as before, and the plain-text tables ``run`` prints (Arena
and GTEval included, with intervals)."""

from __future__ import annotations

import csv
import datetime as dt
import json
import os
from pathlib import Path

import pytest

from dialogbench.run import registry
from dialogbench.report import results
from dialogbench.cli import main
from dialogbench.history.tables import JUDGE_FINDINGS_TABLE, METRIC_SNAPSHOTS_TABLE
from dialogbench.lake.catalog import connect
from dialogbench.lake.version import FORMAT, MARKER
from dialogbench.report.publish import board_folder, publish_reports, run_folder
from dialogbench.report.results import (NoResults, collect_results, format_all_leaderboards, leaderboards, write_csv,
                                 write_results)
from tests.report.paper_lake import paper_lake

MODELS = ["m-a", "m-b", "m-c"]
BOARD = "bench"  # the paper lake's runs ran bench.yaml
RUN = "run-0001"  # its latest run
SNAP = "snap-1"
AT = dt.datetime(2026, 11, 21, tzinfo=dt.timezone.utc)
JUDGE = "gpt-4-0613"  # BotChat's judge in the paper lake
WHY = "the judge could not read 40% of its Arena verdicts"
# the leaderboard views every family shows, by results key
EXPECTED = {"botchat/botchat_unieval", "botchat/botchat_unieval_gt", "botchat/botchat_gteval", "botchat/botchat_elo",
            "mtbench101/mtbench101_leaderboard", "mtbench101/mtbench101_tasks", "gameeval/gameeval_askguess",
            "gameeval/gameeval_spyfall", "gameeval/gameeval_tofukingdom", "judge_checks/judge_probes",
            "core/headline"}
# the leaderboards whose rows say whether the model is its judge (self_judged, added after the view's columns)
JUDGED = {"botchat/botchat_unieval", "botchat/botchat_unieval_gt", "botchat/botchat_gteval", "botchat/botchat_elo",
          "mtbench101/mtbench101_leaderboard", "mtbench101/mtbench101_tasks", "core/headline"}


def view(lake, sql: str, board: str | None = None) -> tuple[list[str], list[dict]]:
    with connect(lake, board=board) as con:
        relation = con.execute(sql)
        columns = [d[0] for d in relation.description]
        return columns, [dict(zip(columns, r)) for r in relation.fetchall()]


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    """Every protocol for three models on board ``bench``; its latest run's snapshot gives GTEval bootstrap intervals
    and ranks (``headline``), and its judge checks refused the Arena judge (``botchat_elo.measured`` false)."""
    lake = paper_lake(tmp_path_factory.mktemp("results") / "lake", models=MODELS)
    (lake.root / MARKER).write_text(json.dumps({"format": FORMAT}) + "\n")  # what a run writes first: the CLI reads it
    _, gteval = view(lake, "select model, win_tie_rate from botchat_gteval")
    METRIC_SNAPSHOTS_TABLE.write(lake, [
        {"run_id": SNAP, "created_at": AT, "board": BOARD, "family": "botchat", "leaderboard": "botchat_gteval",
         "metric": "win_tie_rate", "model": r["model"], "slice": f"judge={JUDGE}", "judge": JUDGE,
         "value": r["win_tie_rate"], "ci_low": r["win_tie_rate"] - 0.125,
         "ci_high": min(1.0, r["win_tie_rate"] + 0.0625),
         "n": 12, "measured": True, "complete": True, "rank": i + 1, "rank_low": 1, "rank_high": 3}
        for i, r in enumerate(sorted(gteval, key=lambda r: -r["win_tie_rate"]))])
    JUDGE_FINDINGS_TABLE.write(lake, [{"run_id": SNAP, "created_at": AT, "board": BOARD, "judge": JUDGE,
                                       "protocol": "botchat_arena", "check": "unparsed", "reason": WHY}])
    return lake


@pytest.fixture(scope="module")
def published(lake):
    """The run's reports as a run publishes them (report, explorer, run.json, results.json)."""
    return publish_reports(lake, run_id=RUN, board=BOARD, config_path="bench.yaml", families=registry.families())


def test_every_registered_leaderboard_view_is_collected():
    views = {lb.key for lb in leaderboards(families=registry.families())}
    assert views == EXPECTED
    declared = {(f.name, m.view) for f in registry.families() for m in f.metrics}  # no family's metric view missed
    assert {f"{family}/{v}" for family, v in declared} <= views


def test_each_published_file_is_where_its_kind_says(lake, published):
    """``FILE_OF_KIND`` (what a reused rerun reports, dialogbench/commands/run_reuse.py) names the file publish_reports wrote under
    each kind, every kind."""
    from dialogbench.report.publish import FILE_OF_KIND

    assert {kind: Path(published[kind]).name for kind in FILE_OF_KIND} == FILE_OF_KIND


def test_results_json_lies_beside_the_report_with_every_leaderboard_whole(lake, published):
    path = run_folder(lake, RUN) / "results.json"
    assert published["results"] == str(path) and (run_folder(lake, RUN) / "report.html").is_file()
    found = json.loads(path.read_text(encoding="utf-8"))
    # copied with the report to the board's folder and the top of reports/ (a board without overrides)
    for folder in (board_folder(lake, BOARD), lake.root / "reports"):
        assert json.loads((folder / "results.json").read_text(encoding="utf-8")) == found
    assert not [p for p in run_folder(lake, RUN).iterdir() if p.name.endswith(".tmp")]
    assert found["board"] == BOARD and found["run_id"] == RUN
    assert dt.datetime.fromisoformat(found["generated_at"]).tzinfo is not None
    provenance = found["provenance"]
    assert provenance["run_id"] == RUN and provenance["config"] == "bench.yaml" and provenance["failed"] is None
    assert provenance["models"] == MODELS and provenance["runs"] == 3 and provenance["dialogbench"]
    assert provenance["started_at"].startswith("2026-11-20")
    assert set(found["leaderboards"]) == EXPECTED
    for key, table in found["leaderboards"].items():
        columns, rows = view(lake, f'select * from "{key.split("/")[1]}"', board=BOARD)
        # every column: intervals and measured flags included; a judged leaderboard's self_judged after them
        assert table["columns"] == columns + (["self_judged"] if key in JUDGED else []), key
        assert len(table["rows"]) == len(rows), key
        assert all(list(r) == table["columns"] for r in table["rows"]), key
    boards = found["leaderboards"]
    assert len(boards["botchat/botchat_elo"]["rows"]) == 6 and len(boards["gameeval/gameeval_spyfall"]["rows"]) == 6
    # the interval columns each view has, with values
    for key, low, high in (("botchat/botchat_elo", "ci_low", "ci_high"), ("botchat/botchat_elo", "bt_ci_low",
                                                                            "bt_ci_high"),
                           ("botchat/botchat_gteval", "win_tie_ci_low", "win_tie_ci_high"),
                           ("botchat/botchat_unieval", "pass_ci_low", "pass_ci_high"),
                           ("botchat/botchat_unieval_gt", "pass_ci_low", "pass_ci_high"),
                           ("core/headline", "ci_low", "ci_high")):
        rows = boards[key]["rows"]
        assert rows and all(r[low] is not None and r[low] <= r[high] for r in rows), (key, low)
    for key in ("mtbench101/mtbench101_leaderboard", "mtbench101/mtbench101_tasks", "gameeval/gameeval_askguess",
                "gameeval/gameeval_spyfall", "gameeval/gameeval_tofukingdom"):
        assert any(c.endswith("_ci_low") for c in boards[key]["columns"]), key
    # measured flags: the Arena judge was refused, GTEval's was not
    elo = boards["botchat/botchat_elo"]["rows"]
    assert all(r["measured"] is False and WHY in r["not_measured"] for r in elo)
    assert all(r["measured"] is True for r in boards["botchat/botchat_gteval"]["rows"])
    headline = boards["core/headline"]["rows"]
    assert {r["model"] for r in headline} == set(MODELS) and all(r["measured"] is True for r in headline)
    assert [r["rank"] for r in headline] == [1, 2, 3]
    # ordered as the leaderboard reads: Elo by judge, N, best first
    assert [(r["n"], r["model"]) for r in elo] == [(8, "m-a"), (8, "m-b"), (8, "m-c"),
                                                   (16, "m-a"), (16, "m-b"), (16, "m-c")]


def test_export_json_equals_results_json(lake, published, tmp_path, capsys):
    out = tmp_path / "out" / "board.json"
    assert main(["export", "--lake", str(lake.root), "--board", BOARD, "--out", str(out)]) == 0
    exported = json.loads(out.read_text(encoding="utf-8"))
    kept = json.loads((run_folder(lake, RUN) / "results.json").read_text(encoding="utf-8"))
    assert exported["leaderboards"] == kept["leaderboards"]
    assert {k: v for k, v in exported["provenance"].items()} == kept["provenance"]
    assert "11 leaderboard(s)" in capsys.readouterr().out
    # the default board is the same one; --format json on another suffix too
    other = tmp_path / "board.txt"
    assert main(["export", "--lake", str(lake.root), "--format", "json", "--out", str(other)]) == 0
    assert json.loads(other.read_text(encoding="utf-8"))["leaderboards"] == kept["leaderboards"]


def cell(value) -> str:
    """A JSON value as the CSV writes it."""
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def test_export_csv_writes_one_file_per_leaderboard_with_the_same_rows(lake, tmp_path):
    out = tmp_path / "csv"
    assert main(["export", "--lake", str(lake.root), "--board", BOARD, "--format", "csv", "--out", str(out)]) == 0
    found = collect_results(lake, BOARD, families=registry.families())
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{k.split('/')[1]}.csv" for k in EXPECTED)
    for key, table in found["leaderboards"].items():
        with open(out / f"{key.split('/')[1]}.csv", newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
        assert rows[0] == table["columns"], key
        assert rows[1:] == [[cell(r[c]) for c in table["columns"]] for r in table["rows"]], key
    with open(out / "botchat_elo.csv", newline="", encoding="utf-8") as handle:
        elo = list(csv.DictReader(handle))
    assert len(elo) == 6 and {r["measured"] for r in elo} == {"False"} and all(r["ci_low"] for r in elo)


def test_csv_cells_a_spreadsheet_would_run_get_an_apostrophe_unless_raw(tmp_path):
    found = {"leaderboards": {"botchat/botchat_elo": {"columns": ["model", "elo", "tags"], "rows": [
        {"model": "=HYPERLINK(\"x\")", "elo": -5.0, "tags": ["a"]}, {"model": "plain", "elo": None, "tags": None}]}}}
    write_csv(found, tmp_path / "safe")
    write_csv(found, tmp_path / "raw", raw=True)
    read = lambda p: list(csv.reader(open(p, newline="", encoding="utf-8")))  # noqa: E731
    assert read(tmp_path / "safe" / "botchat_elo.csv")[1:] == [["'=HYPERLINK(\"x\")", "-5.0", '["a"]'],
                                                               ["plain", "", ""]]
    assert read(tmp_path / "raw" / "botchat_elo.csv")[1][0] == "=HYPERLINK(\"x\")"


def test_a_board_no_run_published_to_is_refused_by_name(lake, tmp_path, capsys):
    with pytest.raises(NoResults, match="'nightly-typo'.*bench"):
        collect_results(lake, "nightly-typo", families=registry.families())
    out = tmp_path / "x.json"
    assert main(["export", "--lake", str(lake.root), "--board", "nightly-typo", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "nightly-typo" in err and "no run has published to it" in err and "bench" in err
    assert len(err.strip().splitlines()) == 1 and not out.exists()
    with pytest.raises(NoResults, match="nightly-typo"):
        format_all_leaderboards(lake, "nightly-typo", families=registry.families())
    # a run publishing its own results is never refused: the board as named, its views as they read
    found = collect_results(lake, "nightly-typo", require_run=False, families=registry.families())
    assert found["board"] == "nightly-typo"


def test_an_empty_lake_is_refused(tmp_path, capsys):
    from dialogbench.run.registry import open_lake

    lake = open_lake(tmp_path / "empty")
    lake.root.mkdir(parents=True, exist_ok=True)
    with pytest.raises(NoResults, match="no run recorded"):
        collect_results(lake, families=registry.families())


def test_export_without_sql_refuses_parquet_no_format_and_the_lake(lake, tmp_path, capsys):
    for argv, says in ((["--out", str(tmp_path / "x.parquet")], "--format json"),
                       (["--out", str(tmp_path / "x.parquet"), "--format", "parquet"], "not parquet"),
                       (["--out", str(lake.root / "x.json")], "inside the lake")):
        assert main(["export", "--lake", str(lake.root), *argv]) == 2
        assert says in capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    assert main(["export", "--lake", str(lake.root), "--format", "csv", "--out", str(tmp_path / "file")]) == 2
    assert "is a file" in capsys.readouterr().err


def test_the_sql_form_of_export_works_as_before(lake, tmp_path, capsys):
    out = tmp_path / "elo.csv"
    assert main(["export", "select model, n, elo from botchat_elo order by n, elo desc", "--out", str(out),
                 "--lake", str(lake.root)]) == 0
    assert "6 row(s) written" in capsys.readouterr().out
    rows = list(csv.reader(open(out, newline="", encoding="utf-8")))
    assert rows[0] == ["model", "n", "elo"] and rows[1][:2] == ["m-a", "8"] and len(rows) == 7
    lines = tmp_path / "elo.json"
    assert main(["export", "select model from botchat_gteval order by model", "--out", str(lines),
                 "--lake", str(lake.root)]) == 0
    assert [json.loads(x)["model"] for x in lines.read_text().splitlines()] == MODELS


def test_write_results_replaces_the_file_atomically(lake, tmp_path, monkeypatch):
    path = write_results(lake, BOARD, tmp_path / "out", families=registry.families())
    before = path.read_text(encoding="utf-8")
    assert json.loads(before)["board"] == BOARD

    def broken(fd):
        raise OSError("disk gone")

    import dialogbench.report.build as build  # the report's atomic writer, which results.json shares

    monkeypatch.setattr(build.os, "fsync", broken)
    with pytest.raises(OSError, match="disk gone"):
        write_results(lake, BOARD, tmp_path / "out", families=registry.families())
    assert path.read_text(encoding="utf-8") == before
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["results.json"]


def test_plain_values():
    assert results.plain({"a": float("nan"), "b": [dt.datetime(2026, 1, 2, tzinfo=dt.timezone.utc), float("inf")],
                          "c": {"key": ["x"], "value": [1]}}) == {
        "a": None, "b": ["2026-01-02T00:00:00+00:00", None], "c": {"x": 1}}


def test_format_all_leaderboards_shows_every_family_with_intervals(lake):
    text = format_all_leaderboards(lake, BOARD, families=registry.families())
    assert text.startswith(f"leaderboards of board {BOARD} (latest run {RUN}")
    for key in EXPECTED - {"core/headline"}:
        assert f"({key})" in text, key
    assert "BotChat Arena Elo (botchat/botchat_elo)" in text and "BotChat GTEval" in text
    block = lambda key: text.split(f"({key})\n")[1].split("\n\n")[0]  # noqa: E731
    gteval = block("botchat/botchat_gteval").splitlines()
    _, rows = view(lake, "select model, win_tie_rate from botchat_gteval order by win_tie_rate desc")
    best = rows[0]
    # GTEval: the run's recorded (bootstrap) interval of the value shown, and the ranks it allows
    assert gteval[0].split() == ["model", "judge", "win_tie_rate", "ranks", "comparisons"]
    low, high = best["win_tie_rate"] - 0.125, min(1.0, best["win_tie_rate"] + 0.0625)
    assert gteval[2].split() == [best["model"], JUDGE, f"{best['win_tie_rate']:.3f}", f"[{low:.3f},", f"{high:.3f}]",
                                 "1-3", "12"]
    # Arena: refused by the judge checks, with why
    elo = block("botchat/botchat_elo")
    assert elo.count("not measured") == 6 * 2 + 1 and f"not measured: {WHY}" in elo
    # MT-Bench-101 avg, GameEval's games: a row per model (and setting, pair, camp)
    assert len(block("gameeval/gameeval_spyfall").splitlines()) == 2 + 6
    assert len(block("mtbench101/mtbench101_leaderboard").splitlines()) == 2 + 3
    # a view's own interval where the run recorded none (UniEval's Wilson interval)
    unieval_gt = block("botchat/botchat_unieval_gt").splitlines()
    assert "[" in unieval_gt[2] and "judge_checks/judge_probes)\n(no rows yet)" in text


def test_no_model_of_the_paper_lake_is_its_judge_so_none_is_marked(lake):
    """Its judges (gpt-4-0613, ...) are none of its models: every judged row says self_judged false (a headline row of
    a family without a judge: null), and no table the run prints has the mark or its legend
    (tests/judge_checks/test_self_judging.py has the lakes where one is)."""
    from dialogbench.judge_checks.self_judging import LEGEND, MARK

    found = collect_results(lake, BOARD, families=registry.families())["leaderboards"]
    for key in JUDGED - {"core/headline"}:
        assert found[key]["rows"] and all(r["self_judged"] is False for r in found[key]["rows"]), key
    headline = found["core/headline"]["rows"]
    assert headline and all(r["self_judged"] is (False if r["family"] in ("botchat", "mtbench101") else None)
                            for r in headline)
    assert not {"self_judged"} & {c for key in EXPECTED - JUDGED for c in found[key]["columns"]}
    text = format_all_leaderboards(lake, BOARD, families=registry.families())
    assert MARK not in text and LEGEND not in text


def test_a_headline_row_says_self_judged_only_where_a_judge_rates_its_family():
    """BotChat's and MT-Bench-101's numbers are a judge's (a metric with a protocol); GameEval's and the judge
    checks' are not: their headline rows get null, even where a judge column names the model."""
    judged = results.judged_families(families=registry.families())
    assert judged == {"botchat", "mtbench101"}
    rows = [{"family": "botchat", "model": "a", "judge": "j"}, {"family": "mtbench101", "model": "b", "judge": "j"},
            {"family": "gameeval", "model": "a", "judge": None}, {"family": "judge_checks", "model": "j", "judge": "j"}]
    known = {"a": ("weights", "org/m", ""), "j": ("weights", "org/m", ""), "b": ("name", "b")}
    columns, marked = results.with_self_judged(results.Leaderboard(*results.HEADLINE, ()), ["family", "model", "judge"],
                                               rows, judged=judged, known=known)
    assert columns[-1] == "self_judged" and [r["self_judged"] for r in marked] == [True, False, None, None]


def test_ordering_is_best_first_within_each_slice(lake):
    found = collect_results(lake, BOARD, families=registry.families())["leaderboards"]
    spy = found["gameeval/gameeval_spyfall"]["rows"]
    by_villager: dict[str, list[float]] = {}
    for r in spy:
        by_villager.setdefault(r["villager_model"], []).append(r["spy_win_rate"])
    assert all(v == sorted(v, reverse=True) for v in by_villager.values())
    rounds = [r for r in found["gameeval/gameeval_askguess"]["rows"] if r["setting"] == "with_description"]
    assert [r["st"] for r in rounds] == sorted((r["st"] for r in rounds), reverse=True)
    assert os.path.basename(results.RESULTS) == "results.json"
