"""The report's honesty checks (dialogbench/report/checks.py): n and Wilson 95% intervals beside the rates, the
header, and each warning on a hand-made lake where it must appear and one where it must not."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest

from tests.fakes.synthetic_lake import pairwise_row
from dialogbench.run.registry import open_lake
from dialogbench.botchat.tables import ELO, GENERATIONS, LENGTHS
from dialogbench.run.config import ReportConfig
from dialogbench.history.tables import RUN_CONFIGS
from dialogbench.lake import Lake
from dialogbench.lake.catalog import connect, data_tests
from dialogbench.lake.schemas import PLANS, RUNS
from dialogbench.report.build import render
from dialogbench.report.checks import FLAG
from dialogbench.run import registry
from tests.verdicts import write_verdicts

T0 = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
JUDGE = "judge-x"


def lake_of(root: Path, *, passes=(True, True, True, False), judged: int | None = None, tokens=(10, 12),
            max_tokens: int | None = 40, arena: tuple[str, ...] = (), elo_ci=(990.0, 1010.0),
            config: str | None = None, run_config: str | None = None, provenance: dict | None = None) -> Lake:
    """Models a and b: a dialogue per seed (generated utterances' model tokens ``tokens``, recorded max_tokens),
    UniEval judgments of the first ``judged`` of them (``passes``: "No" passes, "Yes" at utterance 3 fails), the
    plans of every seed, Arena verdicts (one per seed, a first) and Elo rows with interval ``elo_ci``."""
    lake, run = open_lake(root), "run-1"
    seeds = [f"S-{k}" for k in range(len(passes))]
    judged = len(seeds) if judged is None else judged
    gens, plans, unieval, lengths = [], [], [], []
    for model in ("a", "b"):
        for k, (item, ok) in enumerate(zip(seeds, passes)):
            gkey, jkey = f"g-{model}-{item}", f"u-{model}-{item}"
            gens.append({"cell_key": gkey, "dialogue_key": gkey, "protocol": "botchat", "item_id": item, "model": model,
                         "model_fp": f"fp-{model}", "n_target": 2 + len(tokens),
                         "utterances": ["s1", "s2", *(f"u{i}" for i in range(len(tokens)))],
                         "completion_tokens": list(tokens), "empty_utterances": 0, "trimmed_steps": 0,
                         "max_tokens": max_tokens, "run_id": run, "created_at": T0})
            lengths.extend({"generation_key": gkey, "model": model, "model_fp": f"fp-{model}", "item_id": item,
                            "utterance": 3 + i, "tokens": t, "created_at": T0} for i, t in enumerate(tokens))
            plans.append({"run_id": run, "stage": "botchat_unieval", "cell_key": jkey, "item_id": item, "model": model,
                          "judge": JUDGE, "created_at": T0, "roles": [("model", model)], "scope": [model]})
            if k < judged:
                unieval.append({"cell_key": jkey, "protocol": "botchat_unieval", "protocol_version": "v2",
                                "item_id": item, "model": model, "judge": JUDGE, "judge_fp": "j", "generation_key": gkey,
                                "n_judged": 4, "raw_output": "…", "parsed": True, "choice": "No" if ok else "Yes",
                                "ai_index": None if ok else 3, "reason": "r", "run_id": run, "created_at": T0})
    verdicts = {"conversation_1": "model_b", "conversation_2": "model_a", "both": "tie", "neither": "tie"}
    pairwise = []
    for item, verdict in zip(seeds, arena):
        key = f"a-{item}"
        pairwise.append(pairwise_row(key, "botchat_arena", item, "a", "b", 1, verdict, verdicts[verdict], 4, JUDGE, run))
        plans.append({"run_id": run, "stage": "botchat_arena", "cell_key": key, "item_id": item, "model": None,
                      "judge": JUDGE, "created_at": T0, "roles": [("first", "a"), ("second", "b")], "scope": ["a", "b"]})
    elo = [{"run_id": run, "judge": JUDGE, "n": 4, "model": m, "elo": 1000.0, "elo_std": 0.0, "ci_low": elo_ci[0],
            "ci_high": elo_ci[1], "bt": 1000.0, "bt_ci_low": elo_ci[0], "bt_ci_high": elo_ci[1], "games": len(arena),
            "settings": "{}", "created_at": T0} for m in ("a", "b")] if arena else []
    runs = [{"run_id": run, "stage": "botchat_unieval", "planned": 8, "cached": 0, "computed": 8, "failed": 0,
             "seconds": 60.0, "started_at": T0, "finished_at": T0 + dt.timedelta(minutes=1),
             "config": config or "configs/nightly.yaml", "detail": "{}", **(provenance or {})}]
    configs = [{"run_id": run, "created_at": T0, "config_path": config or "configs/nightly.yaml", "config_fp": "c",
                "config": run_config}] if run_config is not None else []
    for table, rows, schema in (("generations", gens, GENERATIONS), ("plans", plans, PLANS), ("elo", elo, ELO),
                                ("runs", runs, RUNS), ("utterance_lengths", lengths, LENGTHS),
                                ("run_configs", configs, RUN_CONFIGS)):
        if rows:
            lake.write(table, pa.Table.from_pylist(rows, schema=schema))
    write_verdicts(lake, unieval + pairwise, judge=JUDGE)
    return lake


def md(lake: Lake, min_cells: int | None = 1) -> str:
    """The Markdown page, its escaped underscores read back."""
    page = render(lake, settings=None if min_cells is None else ReportConfig(min_cells=min_cells),
                  families=registry.families())["md"]
    return page.replace("\\_", "_")


def warnings_of(page: str) -> str:
    """The leaderboard section's Warnings list (Markdown), '' when it has none."""
    section = page.split("## Leaderboard")[1].split("\n## ")[0]
    return section.split("**Warnings**")[1].split("\n\n|")[0] if "**Warnings**" in section else ""


def test_wilson_interval_and_n_beside_pass_rate(tmp_path):
    lake = lake_of(tmp_path / "lake")  # 3 of 4 dialogues pass at N=4
    with connect(lake) as con:
        row = con.sql("select * from botchat_unieval where model = 'a' and n = 4").fetchall()[0]
        cols = [d[0] for d in con.sql("select * from botchat_unieval").description]
    r = dict(zip(cols, row))
    # Wilson 95% for 3/4: (3 + z²/2 ∓ z·sqrt(3·1/4 + z²/4)) / (4 + z²), z = 1.96
    assert (r["passed"], r["dialogues"], r["pass_rate"]) == (3, 4, 0.75)
    assert r["pass_ci_low"] == pytest.approx(0.3006, abs=1e-4) and r["pass_ci_high"] == pytest.approx(0.9544, abs=1e-4)
    assert "75.0% [30.1%, 95.4%] n=4" in md(lake)
    assert data_tests(lake) == {}


def test_wilson_interval_of_pair_rates_and_the_data_test(tmp_path):
    lake = lake_of(tmp_path / "lake", arena=("conversation_2", "conversation_2", "conversation_2", "both"))
    with connect(lake) as con:
        r = con.sql("select win_rate_a, win_a_ci_low, win_a_ci_high, tie_rate, tie_ci_low, win_rate_b, win_b_ci_low "
                    "from botchat_pair_rates").fetchall()[0]
    assert r[:3] == (0.75, pytest.approx(0.3006, abs=1e-4), pytest.approx(0.9544, abs=1e-4))
    assert r[3:] == (0.25, pytest.approx(0.0456, abs=1e-4), 0.0, 0.0)  # 1/4: [4.6%, 69.9%]; 0/4 from 0
    assert "rate_intervals_contain_rates" not in data_tests(lake)  # (one order only: arena_mirror_planned fails)


def test_all_tie_ratings_warn(tmp_path):
    tied = md(lake_of(tmp_path / "tied", arena=("both", "neither", "both", "both")))
    assert "Arena @N=4: all 4 parsed verdicts are ties" in warnings_of(tied)
    assert f"1000.0 ± 0.0 {FLAG}" in tied  # the Elo cell is marked
    decided = md(lake_of(tmp_path / "decided", arena=("both", "conversation_1", "both", "both")))
    assert "are ties" not in decided


def test_zero_width_intervals_warn(tmp_path):
    flat = md(lake_of(tmp_path / "flat", arena=("conversation_1", "conversation_2"), elo_ci=(1000.0, 1000.0)))
    assert "Intervals of zero width" in warnings_of(flat) and "a @N=4 (Elo and BT)" in warnings_of(flat)
    spread = md(lake_of(tmp_path / "spread", arena=("conversation_1", "conversation_2"), elo_ci=(990.0, 1010.0)))
    assert "zero width" not in spread


def test_few_cells_warn_and_mark_under_the_threshold(tmp_path):
    lake = lake_of(tmp_path / "lake", arena=("conversation_1", "conversation_2"))
    few = md(lake, min_cells=10)
    assert "Fewer than 10 cells" in warnings_of(few)
    assert "pass@4 of a (n=4)" in few and "Elo@4 of a (2 games)" in few and "a vs b @N=4 (2 games)" in few
    assert f"75.0% {FLAG} [30.1%, 95.4%] n=4" in few
    enough = md(lake, min_cells=2)
    table = [line for line in enough.split("## Leaderboard")[1].split("## UniEval")[0].splitlines()
             if line.startswith("|")]
    assert "Fewer than" not in enough and table and not any(FLAG in line for line in table)


def test_the_threshold_comes_from_the_latest_runs_config(tmp_path):
    """The effective config the board's latest run recorded (run_configs), not the file as it is now."""
    config = tmp_path / "run.yaml"
    config.write_text("report:\n  min_cells: 2\n")  # edited since the run: not read
    lake = lake_of(tmp_path / "lake", passes=(True, False), config=str(config),  # 2 dialogues
                   run_config="report:\n  min_cells: 3\n")
    page = md(lake, min_cells=None)
    assert "Fewer than 3 cells" in page and "report.min_cells, as set in run run-1's config" in page
    lake = lake_of(tmp_path / "lake2", passes=(True, False), run_config="report:\n  min_cells: 2\n")
    assert "Fewer than" not in md(lake, min_cells=None)
    with pytest.raises(ValueError):
        ReportConfig(min_cells=0)


def test_utterances_cut_at_max_tokens_warn(tmp_path):
    cut = md(lake_of(tmp_path / "cut", tokens=(40, 40), max_tokens=40))
    assert "a: 8 of 8 generated utterances (100.0%) reached max_tokens = 40" in warnings_of(cut)
    assert f"8 (100.0%) {FLAG} max_tokens 40" in cut  # the lengths table's column, marked
    fine = md(lake_of(tmp_path / "fine", tokens=(12, 39), max_tokens=40))
    assert "reached max_tokens" not in fine and "0 (0.0%) max_tokens 40" in fine
    unknown = md(lake_of(tmp_path / "unknown", tokens=(40, 40), max_tokens=None))  # written before it was kept
    assert "reached max_tokens" not in unknown


def test_models_short_of_their_plan_warn(tmp_path):
    short = md(lake_of(tmp_path / "short", judged=2))  # 2 of 4 planned dialogues judged
    assert ("a: numbers rest on part of the plan, cells computed of planned: botchat_unieval (judge judge-x) "
            "2 of 4") in warnings_of(short)
    assert f"| 1 | a {FLAG} |" in short or f"| 2 | a {FLAG} |" in short
    assert "part of the plan" not in md(lake_of(tmp_path / "whole"))


def test_header_fields(tmp_path):
    page = render(lake_of(tmp_path / "lake"), settings=ReportConfig(), families=registry.families())
    head = page["md"].split("## ")[0]
    for field in ("**Board**: nightly", "**Config**: configs/nightly.yaml", "**Models**: a, b", "**Judge**: judge-x",
                  "**Dates**: latest run run-1: started 2026-01-02 03:04:05 UTC, finished 2026-01-02 03:05:05 UTC",
                  "**Warnings**:", "report.min\\_cells, as set in the config the report was rendered with",
                  "**Code**: not recorded", "**Engines**: not recorded"):  # a run written before they were recorded
        assert field in head, field
    assert '<dl class="meta">' in page["html"] and "<dt>Code</dt>" in page["html"]


def test_the_header_shows_what_ran_the_run_it_reports(tmp_path):
    """The commit, versions, host and GPU the run recorded: not the code rendering the report."""
    lake = lake_of(tmp_path / "lake", provenance={"commit": "abc123def456", "host": "gpu-box-7", "gpu": "8 x H100",
                                                  "versions": [("vllm", "0.33.0"), ("torch", "2.14.0"),
                                                               ("prefect", "3.7.7")]})
    head = render(lake, settings=ReportConfig(), families=registry.families())["md"].split("## ")[0]
    assert "**Code**: abc123def456" in head and "**Host**: gpu-box-7; GPU: 8 x H100" in head
    assert "**Engines**: vllm 0.33.0, torch 2.14.0, prefect 3.7.7" in head
