"""A failed run's message (dialogbench/commands/run_failures.py, exit 4): a short headline counting the reasons,
then one detail line per reason, the command that lists the failed cells (with the run's lake and ad-hoc board), and
the report."""

from __future__ import annotations

from dialogbench.commands.run_failures import HEADLINE_MAX, failures_command, run_failed_lines
from dialogbench.run.runs import StageReport, failure_lines


CANARY = ("judge canary: judge on botchat_unieval gave the first night's answer in 3 of 10 judgments (30% < 80%, "
          "canary.min_agreement): the judge drifted (see canary_judgments)")
JUDGE_CHECK = ("judge checks: judge on botchat_unieval cannot tell: right on 4 of 12 known-answer probes (33%; "
               "unieval 2/6; arena 2/6), under judge_checks.min_probe_accuracy 70%: its numbers are not measured")


def _stages() -> list[dict]:
    long = "botchat_generate_" + "x" * 40
    return [StageReport(long, planned=400, computed=300, failed=100).__dict__,
            StageReport("botchat_unieval", planned=100, computed=90, failed=10).__dict__,
            StageReport("mtbench101_answer", planned=50, computed=50).__dict__]


def _result(make_config, lake: str, board: str, problems: list[str]) -> tuple[dict, object]:
    config = make_config()
    stages = _stages()
    failed = "; ".join(failure_lines(stages, config.fail_on, problems))
    return {"run_id": "20260102T030405Z-abc123", "lake": lake, "board": board, "stages": stages, "failed": failed,
            "report": {"html": f"{lake}/reports/runs/x/report.html"}}, config


def test_a_failed_run_says_a_short_headline_then_one_line_per_reason(make_config, tmp_path):
    lake = str(tmp_path / "my lake")
    result, config = _result(make_config, lake, "config+limit=3", [JUDGE_CHECK, JUDGE_CHECK.replace("4 of", "5 of"),
                                                                    CANARY])
    assert len(result["failed"]) > 500  # what the message was: one line
    lines = run_failed_lines(result, config, result["failed"])
    headline, details = lines[0], lines[1:]
    assert len(headline) <= HEADLINE_MAX
    assert headline == ("error: run 20260102T030405Z-abc123 failed: 110 failed cells in 2 stages, 2 judge checks, "
                        "1 judge canary (details below)")
    assert all(line.startswith("  ") for line in details)
    assert details[0].strip() == f"{'botchat_generate_' + 'x' * 40}: 100 of 400 cells failed (25%)"
    assert details[1].strip() == "botchat_unieval: 10 of 100 cells failed (10%)"
    assert details[2].strip() == JUDGE_CHECK  # its own '; ' stays inside it
    assert details[3].strip() == JUDGE_CHECK.replace("4 of", "5 of")
    assert details[4].strip() == CANARY
    assert f"--lake '{lake}' --board config+limit=3 \"select * from failures\"" in details[5]
    assert details[6].strip() == f"report: {lake}/reports/runs/x/report.html"


def test_reasons_of_no_known_kind_are_counted_and_a_long_headline_still_fits(make_config, tmp_path):
    problems = [f"check number {i} of a family: failed" for i in range(12)]
    result, config = _result(make_config, str(tmp_path / "lake"), "config", problems)
    # reasons of no known kind are told apart by the flow's own list (joined, '; ' may be inside one)
    result["failed_lines"] = failure_lines(result["stages"], config.fail_on, problems)
    lines = run_failed_lines(result, config, result["failed"])
    assert lines[0] == ("error: run 20260102T030405Z-abc123 failed: 110 failed cells in 2 stages, 12 other reasons "
                        "(details below)")
    assert [line.strip() for line in lines[3:15]] == problems
    result["run_id"] = "r" * 90
    headline = run_failed_lines(result, config, result["failed"])[0]
    assert len(headline) <= HEADLINE_MAX and headline.startswith(f"error: run {'r' * 90} failed: ")


def test_only_family_checks_failing_needs_no_stage_line(make_config, tmp_path):
    config = make_config()
    result = {"run_id": "r1", "lake": str(tmp_path / "lake"), "board": "config",
              "stages": [StageReport("s", planned=3, computed=3).__dict__], "failed": CANARY, "report": None}
    lines = run_failed_lines(result, config, CANARY + " Report: http://box:8765/runs/r1/report.html")
    assert lines[0] == "error: run r1 failed: 1 judge canary (details below)"
    assert lines[1:] == [f"  {CANARY}", "  served report: http://box:8765/runs/r1/report.html"]


def test_the_failures_hint_keeps_the_runs_lake_and_ad_hoc_board(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert failures_command({"lake": str(tmp_path / "data_lake"), "board": "nightly"}) == \
        'dialogbench query "select * from failures"'
    assert failures_command({"lake": str(tmp_path / "lakes" / "a"), "board": "nightly"}) == \
        'dialogbench query --lake lakes/a "select * from failures"'
    assert failures_command({"lake": "/elsewhere/lake", "board": "demo+models=a,b"}) == \
        "dialogbench query --lake /elsewhere/lake --board demo+models=a,b \"select * from failures\""
    assert failures_command({"lake": "/my lakes/x", "board": "a+judge=j k"}) == \
        "dialogbench query --lake '/my lakes/x' --board 'a+judge=j k' \"select * from failures\""
