"""The judge checks' report section shows each order of a pairwise kind (judge_probe_orders): per judge, protocol and
order, the probes right with the accuracy's Wilson 95% interval, and the kind's flip rate with its interval, flagged
where the judge fails the gate; and its intro and the config's docstring describe the hard items, the default."""

from __future__ import annotations

from dialogbench.botchat import probes as botchat_probes
from dialogbench.cells.runner import run_stage
from dialogbench.judge_checks.config import JudgeChecksConfig
from dialogbench.judge_checks.report import QUERIES, derive, orders_table, sections
from dialogbench.judge_checks.health import rows_of
from dialogbench.lake.catalog import connect
from dialogbench.report import markdown
from dialogbench.report.section import Context
from dialogbench.run import registry
from tests.conftest import VERDICT_NO, config_dict
from tests.judge_checks.test_hard_gates import kind, order, wilson

HARD = JudgeChecksConfig(items="hard")
HEADERS = "| Judge | protocol | probe | order | right | accuracy [95% CI] | flip with the order [95% CI] |"


def probe_row(*args) -> dict:
    """A judge_probes row (test_hard_gates.kind, with the view's other columns)."""
    return {**kind(*args), "unparsed": 0, "index_right": None, "index_accuracy": None, "mean_gap": None}


def block(rows: dict, settings: JudgeChecksConfig) -> str:
    """The section as the report's Markdown shows it, from the views' rows."""
    context = Context(read=lambda sql, params=(): [], judge=None, examples_per_model=0, judge_checks=settings)
    (section,) = sections(derive(rows, context))
    return markdown.section(section)


def test_each_order_and_the_flip_rate_are_shown_with_their_intervals():
    """Arena, 54 items: right first all right, wrong first 40 of 54, 14 flips (26%): the wrong-first order's lower
    end (61%) is under 80% and the flips' upper end (38%) over 20%, both flagged; the right-first order is not."""
    probes = [probe_row("botchat_arena", "right_vs_wrong", 94, 108)]
    orders = [order("botchat_arena", "right_first", 54, 54, 14), order("botchat_arena", "wrong_first", 40, 54, 14)]
    md = block({"health": [], "probes": probes, "orders": orders, "verbosity": [], "history": []}, HARD)
    assert HEADERS in md
    low, high = wilson(40, 54)
    flip_low, flip_high = wilson(14, 54)
    flips = f"14 / 54 25.9% ⚠ [{flip_low * 100:.1f}%, {flip_high * 100:.1f}%]"
    assert (f"| j | botchat\\_arena | right next response vs a wrong one (held out, length-controlled): the right one "
            f"wins | right one first | 54 / 54 | 100.0% [93.4%, 100.0%] | {flips} |") in md
    assert (f"| j | botchat\\_arena | right next response vs a wrong one (held out, length-controlled): the right one "
            f"wins | wrong one first | 40 / 54 | 74.1% ⚠ [{low * 100:.1f}%, {high * 100:.1f}%] | {flips} |") in md
    assert "cannot tell on right\\_vs\\_wrong, wrong\\_first order" in md and "swayed by position" in md  # warnings
    # the table sits after the per-kind one, before the verbosity one
    assert md.index("| probe | probes | right |") < md.index(HEADERS)


def test_a_judge_that_passes_shows_no_flag_and_basic_items_are_not_gated():
    good = [order("botchat_gteval", v, 52, 54, 2) for v in ("right_first", "wrong_first")]
    table = orders_table(good, set(), HARD)
    assert [row[3] for row in table.rows] == ["right one first", "wrong one first"]
    assert all("⚠" not in cell for row in table.rows for cell in row)
    assert "under 80.0% (judge_checks.min_probe_accuracy)" in table.caption
    assert "over 20.0% (judge_checks.max_probe_flip_rate)" in table.caption
    basic = orders_table(good, set(), JudgeChecksConfig(items="basic"))
    assert "gated with judge_checks.items: hard only" in basic.caption
    assert orders_table([], set(), HARD) is None
    md = block({"health": [], "probes": [probe_row("botchat_gteval", "right_vs_wrong", 104, 108)], "orders": [],
                "verbosity": [], "history": []}, HARD)
    assert HEADERS not in md  # no pairwise probes on the board: no table


def test_the_report_shows_a_position_first_judge_s_orders_from_the_view(make_config, lake_dir, scripted_calls):
    """Real hard probe stages of Arena and GTEval, a judge that always names the second conversation AI (the first
    wins): one order all right, the other all wrong, every item a flip, read from judge_probe_orders and rendered."""
    data = config_dict(lake_dir, judge_script=[VERDICT_NO], n=[6], limit=2, arena={"enabled": True, "n": [6]},
                       gteval={"enabled": True})
    data["judge_checks"] = {"probes": 10, "items": "hard", "max_unparsed": 1.0}
    config = make_config(data)
    scripted_calls.answer("judge", lambda c: "Choice: Conversation 2\nReason: the second one.")
    lake = registry.open_lake(config.lake)
    for stage in botchat_probes.probes(config, 10):
        if stage.protocol != "botchat_unieval":
            assert run_stage(stage, config, "r1", lake=lake).computed == 20
    with connect(lake, board=config.board) as con:
        rows = {name: rows_of(con, sql) for name, sql in QUERIES.items() if name != "run_config"}
    assert len(rows["orders"]) == 4
    md = block(rows, HARD)
    assert HEADERS in md
    low, high = wilson(10, 10)
    every = f"10 / 10 100.0% ⚠ [{low * 100:.1f}%, 100.0%]"
    # right on all 10 in its order, yet flagged: 10 items put the lower end at 72.2%, under 80%
    assert f"| right one first | 10 / 10 | 100.0% ⚠ [{low * 100:.1f}%, 100.0%] | {every} |" in md
    assert f"| wrong one first | 0 / 10 | 0.0% ⚠ [0.0%, {(1 - low) * 100:.1f}%] | {every} |" in md
    assert f"| human one first | 10 / 10 | 100.0% ⚠ [{low * 100:.1f}%, 100.0%] | {every} |" in md
    assert f"| AI-marked one first | 0 / 10 | 0.0% ⚠ [0.0%, {(1 - low) * 100:.1f}%] | {every} |" in md


def test_the_intro_and_the_config_describe_the_hard_items_first():
    """The hard items are the default: the section's intro and JudgeChecksConfig's docstring describe them, and the
    basic ones as the opt-in they are."""
    rows = {"health": [], "probes": [probe_row("botchat_unieval", "human", 54, 54)], "orders": [], "verbosity": [],
            "history": []}
    hard = block(rows, HARD)
    assert "held-out items that cheap heuristics fail (judge\\_checks.items: hard, the default)" in hard
    assert "length-matched AI artefact" in hard and "mtbench101.reserve\\_for\\_probes" in hard
    assert "As an AI language model" not in hard
    basic = block(rows, JudgeChecksConfig(items="basic"))
    assert "the basic items (judge\\_checks.items: basic)" in basic and "As an AI language model" in basic
    doc = JudgeChecksConfig.__doc__
    assert doc.index("``hard`` (the default") < doc.index("``basic`` (opt in")
    assert "reserve_for_probes" in doc
