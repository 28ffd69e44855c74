"""``judge_checks.rotate``: each night asks a new window of the probe pool, in a seeded rotation that comes round
again after ``pool / probes`` nights (a repeated item reuses its cell), and ``judge_probe_history`` pools the
evidence night after night for an unchanged judge (a changed one starts afresh)."""

from __future__ import annotations

from datetime import date

import pytest

from dialogbench.run import registry
from dialogbench.judge_checks.probe_stage import Probe
from dialogbench.judge_checks.rotation import item_of, rotated, window
from dialogbench.lake.catalog import connect
from tests.conftest import VERDICT_NO, config_dict
from tests.judge_checks.test_probes import night, probe_config

NIGHT = date(2026, 11, 1)


def test_a_window_moves_by_k_a_night_and_comes_round_again():
    items = [f"i{n}" for n in range(10)]
    nights = [window(items, k=4, night=date(2026, 11, d), tag="t") for d in range(1, 4)]
    assert all(len(w) == 4 and len(set(w)) == 4 for w in nights)
    start = items.index(nights[0][0])
    assert nights[1][0] == items[(start + 4) % 10] and nights[2][0] == items[(start + 8) % 10]
    assert set(nights[0]).isdisjoint(nights[1])
    assert window(items, k=10, night=NIGHT, tag="t") == items  # a pool no larger than k: all of it
    offsets = {window(items, k=1, night=NIGHT, tag=f"t{n}")[0] for n in range(20)}
    assert len(offsets) > 3


def test_rotation_keeps_an_items_cells_together():
    """Both orders of a pairwise item, both cells of a pair, go in or out together; kinds rotate apart."""
    probes = [Probe(f"d{n}/{o}", "right_vs_wrong", o, "right", (n, o)) for n in range(6) for o in ("a", "b")]
    probes += [Probe(f"p{n}/{v}", "golden_vs_wrong", v, "higher", (n, v), pair_id=f"p{n}") for n in range(6)
               for v in ("golden", "wrong")]

    class Stage:
        protocol = "x"

    stage = Stage()
    stage.probes = probes
    kept = rotated(stage, k=2, night=NIGHT).probes
    assert stage.probes is probes and len(probes) == 24  # the original is left alone
    by_item: dict[str, int] = {}
    for p in kept:
        by_item[item_of(p)] = by_item.get(item_of(p), 0) + 1
    assert len(kept) == 8 and set(by_item.values()) == {2}
    assert sum(1 for i in by_item if i.startswith("d")) == 2 and sum(1 for i in by_item if i.startswith("p")) == 2


def rotating(make_config, lake_dir, day: int, *, pool: int = 8):
    data = config_dict(lake_dir, judge_script=[VERDICT_NO], n=[6], limit=2, arena={"enabled": True, "n": [6]},
                       gteval={"enabled": True})
    data["mtbench101"] = {"enabled": True, "judge": "judge", "tasks": ["CM"], "limit": 1}
    data["judge_checks"] = {"probes": 2, "fail": [], "rotate": True, "pool": pool, "night": f"2026-11-{day:02d}"}
    return make_config(data)


def history(config) -> dict[tuple[str, str, str], dict]:
    with connect(registry.open_lake(config.lake), board=config.board) as con:
        rel = con.execute("select * from judge_probe_history")
        cols = [d[0] for d in rel.description]
        return {(r["run_id"], r["protocol"], r["kind"]): r for r in (dict(zip(cols, row)) for row in rel.fetchall())}


def asked(config) -> dict[str, set[str]]:
    return {s.name: {p.probe_id for p in s.probes} for s in registry.stages(config) if s.name.startswith("judge_probe:")}


def test_nights_ask_new_items_and_the_history_pools_them(make_config, lake_dir):
    """Pool 8, 2 a night: nights 1 and 2 ask different items (new cells), night 5 asks night 1's again (all cached);
    the history's pooled count grows 2 -> 4 and stays 4 when the items come round, and its interval narrows."""
    first, second, again = (rotating(make_config, lake_dir, d) for d in (1, 2, 5))
    one, two, five = asked(first), asked(second), asked(again)
    assert one.keys() == two.keys() and len(one) == 4
    for name in one:
        assert one[name].isdisjoint(two[name]), name
        assert five[name] == one[name], name
    night(first, "r1")
    night(second, "r2")
    reports = night(again, "r3")
    assert all(r.computed == 0 and r.planned == r.cached for n, r in reports.items() if n.startswith("judge_probe:"))
    found = history(again)
    unieval = [found[(run, "botchat_unieval", "human")] for run in ("r1", "r2", "r3")]
    assert [r["probes"] for r in unieval] == [2, 2, 2]
    assert [r["pooled_probes"] for r in unieval] == [2, 4, 4]
    assert unieval[1]["pooled_ci_high"] - unieval[1]["pooled_ci_low"] < unieval[0]["ci_high"] - unieval[0]["ci_low"]
    mtbench = [found[(run, "mtbench101_judge", "golden_vs_wrong")] for run in ("r1", "r2")]
    assert [r["probes"] for r in mtbench] == [2, 2] and [r["pooled_probes"] for r in mtbench] == [2, 4]
    # a night's own numbers are those of judge_probes for the items it asked
    with connect(registry.open_lake(again.lake), board=again.board) as con:
        (current,) = con.execute("select probes, correct from judge_probes where protocol = 'botchat_unieval' "
                                 "and kind = 'human'").fetchall()
    assert current == (unieval[2]["probes"], unieval[2]["correct"])
    # the report's chart and table of the pooled evidence: one chart per (judge, protocol), a line per kind
    from dialogbench.judge_checks import history as report_history

    with connect(registry.open_lake(again.lake), board=again.board) as con:
        rel = con.execute(report_history.SQL)
        rows = [dict(zip([d[0] for d in rel.description], row)) for row in rel.fetchall()]
    drawn = report_history.charts(rows, threshold=0.8)
    assert [caption.split(":")[0] for caption, _ in drawn] == [
        "judge on botchat_arena", "judge on botchat_gteval", "judge on botchat_unieval", "judge on mtbench101_judge"]
    assert all(svg.startswith("<svg") and "of 4 items so far" in svg for _, svg in drawn)
    table = report_history.table(rows)
    unieval_human = next(r for r in table.rows if r[1:3] == ["botchat_unieval", "human"])
    assert unieval_human[3] == "3" and unieval_human[5].startswith(f"{unieval[2]['pooled_correct']} / 4")
    # ... in the report's "Can the judge tell?" section
    from dialogbench.report.build import render

    html = render(registry.open_lake(again.lake), board=again.board, families=registry.families())["html"]
    judge_section = html.split('id="judge-checks"')[1].split("<section")[0]
    assert "judge on botchat_unieval: accuracy on its known-answer probes, pooled" in judge_section
    assert "pooled so far" in judge_section


def test_without_rotate_every_night_asks_the_same_items(make_config, lake_dir):
    config = probe_config(make_config, lake_dir, probes=2)
    assert asked(config) == asked(config)
    assert all(len({item_of(p) for p in s.probes if p.kind == k}) <= 2
               for s in registry.stages(config) if s.name.startswith("judge_probe:")
               for k in {p.kind for p in s.probes})


@pytest.mark.parametrize("night_value", [None])
def test_the_night_defaults_to_the_runs_utc_date(night_value):
    from dialogbench.judge_checks.rotation import tonight

    assert tonight(NIGHT) == NIGHT
    assert isinstance(tonight(night_value), date)
