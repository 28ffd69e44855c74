"""Judge agreement: Cohen's kappa against hand-computed values (a textbook 2x2 table, identical judges, independent
judges, quadratic weights on ratings), Spearman's rho of a known ranking, and the judge_pairs view on a lake where two
scripted judges (one config each, same board) judged the same BotChat and MT-Bench-101 items; the explorer's panel
of their disagreements."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
import yaml

from dialogbench.run import registry
from dialogbench.backends import clear_backends
from dialogbench.backends.base import Completion
from dialogbench.cells.runner import run_stage
from dialogbench.explorer import disagreements as panel_module
from dialogbench.explorer.records import Source
from dialogbench.judge_checks import agreement
from dialogbench.judge_checks.agreement import disagreements, kappa, ranking_agreement, ranks, spearman
from dialogbench.lake.catalog import connect
from dialogbench.run.registry import load_config
from tests.conftest import REPO_ROOT, config_dict, scripted_calls_patched

BOARD = "config"
MODELS = ("bot-a", "bot-b", "bot-c")


# --- synthetic pairs -----------------------------------------------------------------------------------------------

def pair(a, b, *, cluster, protocol="botchat_unieval", side="m", other=None, judges=("ja", "jb"), item=None,
         item_id=None, score_a=None, score_b=None) -> dict:
    return {"protocol": protocol, "item": item or f"{cluster}:{side}", "judge_a": judges[0], "judge_b": judges[1],
            "cluster": str(cluster), "item_id": item_id or str(cluster), "side": side, "other": other, "shown_first": None,
            "n": None, "output_key": None, "parsed_a": a is not None, "parsed_b": b is not None, "answer_a": a,
            "answer_b": b, "category_a": a, "category_b": b, "score_a": score_a, "score_b": score_b,
            "agree": None if a is None or b is None else a == b, "cell_key_a": f"ka{cluster}", "cell_key_b": f"kb{cluster}"}


def table(counts: dict[tuple[str, str], int], **kw) -> list[dict]:
    """Items from a contingency table: counts[(answer of A, answer of B)], one cluster per item."""
    rows, i = [], 0
    for (a, b), count in counts.items():
        for _ in range(count):
            rows.append(pair(a, b, cluster=f"s{i}", **kw))
            i += 1
    return rows


def test_kappa_of_a_textbook_two_by_two_table():
    # Yes/Yes 20, Yes/No 5, No/Yes 10, No/No 15: p_o = 0.7, p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5, kappa = 0.4
    [k] = kappa(pairs=table({("Yes", "Yes"): 20, ("Yes", "No"): 5, ("No", "Yes"): 10, ("No", "No"): 15}))
    assert (k.protocol, k.judge_a, k.judge_b, k.n, k.items, k.weighted) == ("botchat_unieval", "ja", "jb", 50, 50, False)
    assert k.kappa == pytest.approx(0.4) and k.observed == pytest.approx(0.7)
    assert k.low < 0.4 < k.high and -1 <= k.low and k.high <= 1 and k.reason is None and k.clusters == 50
    # the interval is seeded: the same every time
    assert kappa(pairs=table({("Yes", "Yes"): 20, ("Yes", "No"): 5, ("No", "Yes"): 10, ("No", "No"): 15}))[0] == k


def test_identical_judges_have_kappa_one_and_unparsed_items_are_left_out():
    rows = table({("Yes", "Yes"): 7, ("No", "No"): 5})
    rows.append(pair(None, "Yes", cluster="u1"))  # unparsed by A: not counted
    [k] = kappa(pairs=rows)
    assert (k.kappa, k.low, k.high, k.observed, k.n, k.items) == (1.0, 1.0, 1.0, 1.0, 12, 13)
    # every item the same answer from both: kappa is undefined, said so
    [same] = kappa(pairs=table({("No", "No"): 8}))
    assert same.kappa is None and same.observed == 1.0 and "undefined" in same.reason


def test_independent_random_judges_have_kappa_near_zero_with_an_interval_covering_it():
    rng = np.random.default_rng(7)
    a, b = rng.choice(["win", "lose", "tie"], 600), rng.choice(["win", "lose", "tie"], 600)
    rows = [pair(x, y, cluster=f"s{i}", protocol="botchat_gteval") for i, (x, y) in enumerate(zip(a, b))]
    [k] = kappa(pairs=rows)
    assert abs(k.kappa) < 0.06 and k.low < 0 < k.high and k.high - k.low < 0.2


def test_few_clusters_give_no_interval_and_say_why():
    [k] = kappa(pairs=table({("Yes", "Yes"): 2, ("Yes", "No"): 1, ("No", "No"): 1}))
    assert k.kappa == pytest.approx(0.5) and k.low is None and "too few clusters" in k.reason


def test_weighted_kappa_on_ratings():
    # a = 1..5, b swaps the last two: mean (a - b)^2 = 0.4; chance: sum_ij (i - j)^2 / 25 = 100 / 25 = 4; 1 - 0.4 / 4
    rows = [pair(str(x), str(y), cluster=f"d{i}", protocol="mtbench101_judge", score_a=x, score_b=y)
            for i, (x, y) in enumerate(zip([1, 2, 3, 4, 5], [1, 2, 3, 5, 4]))]
    [k] = kappa(pairs=rows)
    assert k.weighted and k.kappa == pytest.approx(0.9) and k.observed == pytest.approx(0.6)
    # the same exact agreement, far apart: b = 1, 2, 3, 1, 10. mean (a - b)^2 = (9 + 25) / 5 = 6.8; chance:
    # E[a^2] + E[b^2] - 2 E[a] E[b] = 11 + 23 - 2 * 3 * 3.4 = 13.6; kappa = 1 - 6.8 / 13.6
    far = [dict(r) for r in rows]
    far[3].update(score_b=1.0, category_b="1")
    far[4].update(score_b=10.0, category_b="10")
    [k] = kappa(pairs=far)
    assert k.kappa == pytest.approx(0.5) and k.observed == pytest.approx(0.6)


def ratings(scores_a: dict[str, list[float]], scores_b: dict[str, list[float]], *, judges=("ja", "jb")) -> list[dict]:
    rows = []
    for model in scores_a:
        for i, (x, y) in enumerate(zip(scores_a[model], scores_b[model])):
            rows.append(pair(str(x), str(y), cluster=f"d{i}", protocol="mtbench101_judge", side=model,
                             item=f"d{i}:0:{model}", item_id=f"d{i}:0", score_a=x, score_b=y, judges=judges))
    return rows


def test_spearman_of_a_known_ranking():
    # A ranks m1 < m2 < m3 < m4, B swaps m1 and m2: rho = 1 - 6 * 2 / (4 * 15) = 0.8
    base = {"m1": 1.0, "m2": 2.0, "m3": 3.0, "m4": 4.0}
    swapped = {"m1": 2.0, "m2": 1.0, "m3": 3.0, "m4": 4.0}
    rng = np.random.default_rng(3)
    noise = {m: rng.normal(0, 0.3, 8) for m in base}
    a = {m: list(np.clip(np.round(base[m] * 2 + noise[m]), 1, 10)) for m in base}
    b = {m: list(np.clip(np.round(swapped[m] * 2 + noise[m]), 1, 10)) for m in base}
    [r] = ranking_agreement(pairs=ratings(a, b))
    assert (r.models, r.items, r.clusters) == (4, 32, 8)
    assert [m for m in sorted(r.scores_a, key=r.scores_a.get)] == ["m1", "m2", "m3", "m4"]
    assert [m for m in sorted(r.scores_b, key=r.scores_b.get)] == ["m2", "m1", "m3", "m4"]
    assert r.rho == pytest.approx(0.8) and r.low is not None and r.low <= 0.8 <= r.high <= 1.0
    same = ranking_agreement(pairs=ratings(a, a))[0]
    assert same.rho == 1.0


def test_rank_correlation_needs_three_models_and_varying_scores():
    two = ranking_agreement(pairs=ratings({"m1": [1, 2], "m2": [3, 4]}, {"m1": [1, 2], "m2": [3, 4]}))[0]
    assert two.rho is None and "at least 3" in two.reason and two.models == 2
    flat = ranking_agreement(pairs=ratings({m: [5, 5] for m in ("x", "y", "z")}, {"x": [1, 1], "y": [2, 2], "z": [3, 3]}))[0]
    assert flat.rho is None and "alike" in flat.reason


def test_ranks_average_ties_and_spearman_matches_the_formula():
    assert ranks(np.array([10.0, 20.0, 20.0, 5.0])).tolist() == [2.0, 3.5, 3.5, 1.0]
    assert spearman(np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 1.0]))[0] == pytest.approx(-1.0)
    assert np.isnan(spearman(np.array([1.0, 1.0, 1.0]), np.array([1.0, 2.0, 3.0]))[0])


def test_disagreements_list_the_items_answered_differently_farthest_first():
    rows = ratings({"m1": [5, 5, 5]}, {"m1": [5, 7, 1]})
    rows.append(pair(None, "3", cluster="u", protocol="mtbench101_judge", side="m1", item="u:0:m1", score_b=3.0))
    found = disagreements(pairs=rows)
    assert [(d.item, d.distance) for d in found] == [("d2:0:m1", 4.0), ("d1:0:m1", 2.0)]
    assert found[0].href == "explorer.html#protocol=mtbench101&model=m1&key=d2%3A0"
    assert len(disagreements(pairs=rows, unparsed=True)) == 3


# --- a lake two scripted judges judged ----------------------------------------------------------------------------

def verdict(judge: str, conversation: list[dict]) -> str:
    """A judge's reply, a function of what it reads (so two runs answer an item alike); judge-b differs from judge-a
    on about a third of the items (judge-a2 never)."""
    text = conversation[-1]["content"]
    h = int(hashlib.sha256(text.encode()).hexdigest(), 16)
    flip = int(judge == "judge-b" and (h >> 8) % 3 == 0)
    if "Rating: [[" in " ".join(m["content"] for m in conversation) or "[[rating]]" in text.lower():
        return f"Rating: [[{(h + flip) % 10 + 1}]]"
    if "Conversation 2:" in text:
        return ["Choice: Conversation 1\nReason: x", "Choice: Conversation 2\nReason: x", "Choice: Neither\nReason: x",
                "Choice: Both\nReason: x"][(h + flip) % 4]
    return ["Choice: Yes\nIndex: 3\nReason: x", "Choice: No\nIndex: None\nReason: x"][(h + flip) % 2]


def judged_lake(root: Path, judges: tuple[str, ...], *, together: bool = False) -> tuple[Path, object]:
    """A lake where each of ``judges`` judged (its own config, all named config.yaml: one board) three seeds of three
    scripted chatbots in UniEval, Arena (N=6) and GTEval, and one MT-Bench-101 dialogue; the last config. ``together``:
    one config and run instead, the first judge the protocols' judge and the others their ``agreement_judges``."""
    def generate(backend, conversations, script):
        if not backend.model.name.startswith("judge"):
            return script(conversations)
        return [Completion(text=verdict(backend.model.name, c), prompt_tokens=1, completion_tokens=1)
                for c in conversations]

    lake_dir = root / "lake"
    config = None
    with scripted_calls_patched() as calls:
        calls.instead = generate
        for i, judge in enumerate(judges[:1] if together else judges):
            data = config_dict(lake_dir, judge_script=["unused"], n=[6], limit=3,
                               models=[{"name": m, "backend": "scripted", "script": [f"{m} says {{n}}"]} for m in MODELS],
                               arena={"enabled": True, "n": [6]}, gteval={"enabled": True})
            data["judges"][0]["name"] = judge
            data["botchat"]["judge"] = judge
            data["mtbench101"] = {"enabled": True, "judge": judge, "tasks": ["CM"], "limit": 1}
            if together:
                data["judges"] += [{**data["judges"][0], "name": other} for other in judges[1:]]
                data["botchat"]["agreement_judges"] = data["mtbench101"]["agreement_judges"] = list(judges[1:])
                data["judge_checks"]["probes"] = 2  # every judge is probed
            path = root / f"config-{i}" / "config.yaml"
            path.parent.mkdir(parents=True)
            path.write_text(yaml.safe_dump(data, sort_keys=False))
            config = load_config(path, None, root=REPO_ROOT)
            clear_backends()
            lake = registry.open_lake(config.lake)
            for stage in registry.stages(config):
                run_stage(stage, config, f"run-{i}", lake=lake)
            clear_backends()
    assert config.board == BOARD
    return lake_dir, config


def rows_of(con, sql: str) -> list[dict]:
    relation = con.execute(sql)
    columns = [d[0] for d in relation.description]
    return [dict(zip(columns, values)) for values in relation.fetchall()]


@pytest.fixture(scope="module")
def two_judges(tmp_path_factory) -> Path:
    lake_dir, _ = judged_lake(tmp_path_factory.mktemp("agreement"), ("judge-a", "judge-b"))
    return lake_dir


def test_judge_pairs_pair_two_judges_cells_of_the_same_items(two_judges):
    lake = registry.open_lake(two_judges)
    with connect(lake, board=BOARD) as con:
        items = rows_of(con, "select * from judge_agreement_items")
        pairs = rows_of(con, "select * from judge_pairs")
        unieval = rows_of(con, "select item_id, model, judge, n_judged, choice from unieval_judgments")
        arena = rows_of(con, "select judge, item_id, model_a, model_b, verdict from botchat_arena")
    # both judges' cells are current on the board, one row per (protocol, item, judge)
    per = {}
    for r in items:
        per.setdefault((r["protocol"], r["judge"]), set()).add(r["item"])
    assert set(per) == {(p, j) for p in ("botchat_unieval", "botchat_arena", "botchat_gteval", "mtbench101_judge")
                        for j in ("judge-a", "judge-b")}
    assert len(items) == len({(r["protocol"], r["item"], r["judge"]) for r in items})
    for protocol in ("botchat_unieval", "botchat_arena", "botchat_gteval", "mtbench101_judge"):
        assert per[(protocol, "judge-a")] == per[(protocol, "judge-b")]  # the item leaves the judge out
    # 3 seeds x 3 models (UniEval), x 3 pairs x 2 orders (Arena), x 3 models x 2 orders (GTEval); the judged turns
    counts = {p: sum(1 for r in pairs if r["protocol"] == p) for p in {r["protocol"] for r in pairs}}
    assert counts["botchat_unieval"] == 9 and counts["botchat_arena"] == 18 and counts["botchat_gteval"] == 18
    assert counts["mtbench101_judge"] == len(per[("mtbench101_judge", "judge-a")]) > 0
    assert all((r["judge_a"], r["judge_b"]) == ("judge-a", "judge-b") and r["agree"] is not None for r in pairs)
    # the item names the length and, for a pair, the order shown: both orders of an Arena comparison are two items
    assert {r["item"] for r in pairs if r["protocol"] == "botchat_unieval"} == {
        f"{u['item_id']}:{u['model']}@6" for u in unieval}
    arena_items = {r["item"] for r in pairs if r["protocol"] == "botchat_arena"}
    assert "MT-1:bot-a vs bot-b@6" in arena_items and "MT-1:bot-b vs bot-a@6" in arena_items
    gteval_items = {r["item"] for r in pairs if r["protocol"] == "botchat_gteval"}
    human_length = {i.split("@")[1] for i in gteval_items if i.startswith("MT-1:")}
    assert len(human_length) == 1  # L: the human dialogue's length, the same for every model of a seed
    assert {f"MT-1:bot-a vs human@{n}" for n in human_length} | {f"MT-1:human vs bot-a@{n}" for n in human_length} \
        <= gteval_items
    # the answers are each judge's own verdict of the item
    choice = {(u["judge"], u["item_id"], u["model"]): u["choice"] for u in unieval}
    for r in (r for r in pairs if r["protocol"] == "botchat_unieval"):
        seed, model = r["item"].split("@")[0].split(":", 1)
        assert (r["category_a"], r["category_b"]) == (choice[("judge-a", seed, model)], choice[("judge-b", seed, model)])
    # Arena's category is the outcome of the alphabetically first model, whatever the order shown
    verdicts = {(a["judge"], a["item_id"], a["model_a"], a["model_b"]): a["verdict"] for a in arena}
    outcome = {"conversation_1": ("lose", "win"), "conversation_2": ("win", "lose"), "both": ("tie", "tie"),
               "neither": ("tie", "tie")}
    for r in (r for r in pairs if r["protocol"] == "botchat_arena"):
        seed, shown = r["item"].split("@")[0].split(":", 1)
        first, second = shown.split(" vs ")
        for judge, category in (("judge-a", r["category_a"]), ("judge-b", r["category_b"])):
            first_outcome, second_outcome = outcome[verdicts[(judge, seed, first, second)]]
            assert category == (first_outcome if first < second else second_outcome)
    # judge-b answers about a third of the items otherwise: disagreements, but not everywhere
    assert 0 < sum(1 for r in pairs if not r["agree"]) < len(pairs) * 0.6


def test_kappa_on_the_lake_matches_the_judges_answers(two_judges):
    lake = registry.open_lake(two_judges)
    with connect(lake, board=BOARD) as con:
        pairs = agreement.read_pairs(con=con)
        unieval = rows_of(con, "select item_id, model, judge, choice from unieval_judgments")
    found = {k.protocol: k for k in kappa(pairs=pairs)}
    assert set(found) == {"botchat_unieval", "botchat_arena", "botchat_gteval", "mtbench101_judge"}
    assert found["mtbench101_judge"].weighted and not found["botchat_arena"].weighted
    # UniEval's kappa by hand from the two judges' verdicts, paired by seed and model
    a = {(u["item_id"], u["model"]): u["choice"] for u in unieval if u["judge"] == "judge-a"}
    b = {(u["item_id"], u["model"]): u["choice"] for u in unieval if u["judge"] == "judge-b"}
    keys = sorted(a)
    p_o = np.mean([a[k] == b[k] for k in keys])
    p_e = sum(np.mean([a[k] == c for k in keys]) * np.mean([b[k] == c for k in keys]) for c in ("Yes", "No"))
    k = found["botchat_unieval"]
    assert k.n == 9 and k.observed == pytest.approx(p_o)
    assert k.kappa == pytest.approx((p_o - p_e) / (1 - p_e))
    assert k.low is None and "too few clusters" in k.reason  # three seeds
    rankings = {r.protocol: r for r in ranking_agreement(pairs=pairs)}
    assert all(r.models == 3 for r in rankings.values())
    assert set(rankings["botchat_unieval"].scores_a) == set(MODELS)
    assert rankings["botchat_unieval"].scores_a["bot-a"] == pytest.approx(
        np.mean([a[(s, m)] == "No" for s, m in keys if m == "bot-a"]))
    different = disagreements(pairs=pairs)
    assert len(different) == sum(1 for r in pairs if r["agree"] is False)
    arena = next(d for d in different if d.protocol == "botchat_arena")
    assert arena.href.startswith("explorer.html#protocol=botchat_arena&key=") and arena.href.endswith("&n=6")


def test_the_explorer_panel_lists_the_disagreements(two_judges):
    lake = registry.open_lake(two_judges)
    with connect(lake, board=BOARD) as con:
        found = panel_module.read(Source(con, 100), lake=lake)
    html = panel_module.panel(found)
    assert html.startswith('<details class="disagreements" id="disagreements">')
    assert "judge-a" in html and "judge-b" in html and "quadratic-weighted" in html
    total = sum(found.counts.values())
    assert f"{total} items answered differently" in html and html.count("both verdicts</a>") == total
    assert panel_module.panel(panel_module.Found()) == ""


def test_the_written_explorer_page_carries_the_panel(two_judges, tmp_path):
    from dialogbench.explorer.build import write_explorer

    page = write_explorer(registry.open_lake(two_judges), tmp_path, board=BOARD,
                          families=registry.families()).read_text()
    assert page.count('id="disagreements"') == 1 and "judge-a" in page and "κ" in page



def test_the_panel_escapes_the_names_it_shows():
    rows = table({("Yes", "No"): 3, ("No", "No"): 3}, judges=("<b>a</b>", "j&b"), side="<script>m")
    found = panel_module.Found(kappas=kappa(pairs=rows), rankings=ranking_agreement(pairs=rows))
    found.disagreements[("botchat_unieval", "<b>a</b>", "j&b")] = disagreements(pairs=rows)
    found.counts[("botchat_unieval", "<b>a</b>", "j&b")] = 3
    html = panel_module.panel(found)
    assert "<b>a</b>" not in html and "&lt;b&gt;a&lt;/b&gt;" in html and "j&amp;b" in html
    assert "<script>" not in html and "1 model: a rank correlation needs at least 3" in html


# --- agreement judges: several judges of a protocol in one config ---------------------------------------------------

@pytest.fixture(scope="module")
def one_run(tmp_path_factory) -> tuple[Path, object]:
    return judged_lake(tmp_path_factory.mktemp("agreement-judges"), ("judge-a", "judge-b"), together=True)


def test_agreement_judges_judge_the_same_items_in_one_run_as_two_runs_would(two_judges, one_run):
    lake_dir, config = one_run
    names = [s.name for s in registry.stages(config)]
    for stage in ("botchat_unieval", "botchat_arena", "botchat_gteval", "mtbench101_judge",
                  "judge_probe:botchat_unieval", "judge_probe:mtbench101_judge"):
        assert stage in names and f"{stage}@judge-b" in names  # run apart: their own chunks, progress, runs row
    assert len(names) == len(set(names))
    assert names.index("botchat_arena@judge-b") < names.index("botchat_elo")  # Elo rates every judge's games

    def compared(directory: Path) -> list[tuple]:
        with connect(registry.open_lake(directory), board=BOARD) as con:
            return sorted((r["protocol"], r["item"], r["judge_a"], r["judge_b"], r["category_a"], r["category_b"])
                          for r in rows_of(con, "select * from judge_pairs"))

    pairs = compared(lake_dir)
    assert pairs and pairs == compared(two_judges)  # one run with an agreement judge = a run per judge
    lake = registry.open_lake(lake_dir)
    # recorded as the protocol's stage with its own judge: each judge's plan in a file of its own
    with connect(lake, board=BOARD) as con:
        plans = rows_of(con, "select stage, judge, count(*) as cells from plans group by all order by all")
        [(run_id,)] = con.execute("select distinct run_id from plans where stage = 'botchat_unieval'").fetchall()
        elo = {r[0] for r in con.execute("select distinct judge from botchat_elo").fetchall()}
    by = {(r["stage"], r["judge"]): r["cells"] for r in plans}
    for stage in ("botchat_unieval", "botchat_arena", "botchat_gteval", "mtbench101_judge"):
        assert by[(stage, "judge-a")] == by[(stage, "judge-b")] > 0
    assert not any("@" in stage for stage, _ in by)
    for name in ("plan.parquet", "plan@judge-b.parquet"):  # a file in a folder lake, named rows in a Delta one
        stored = lake.read_named("plans", name, {"stage": "botchat_unieval", "run_id": run_id})
        assert stored is not None and stored.num_rows == by[("botchat_unieval", "judge-a")], name
    assert elo == {"judge-a", "judge-b"}
    # the headline is the protocol's judge's: the leaderboards read judge-a only
    boards = registry.leaderboards(config)
    assert {r["judge"] for r in boards["botchat"]} == {"judge-a"}
    assert {r["judge"] for r in boards["mtbench101"]} == {"judge-a"}
    # a rerun computes nothing: every cell of both judges is cached
    for stage in registry.stages(config):
        assert run_stage(stage, config, "rerun", lake=lake).computed == 0, stage.name


def test_agreement_judges_are_checked_at_validate_time(tmp_path):
    data = config_dict(tmp_path / "lake", judge_script=["unused"])
    judge = data["judges"][0]["name"]
    for listed, why in (([judge], "is the judge"), (["nobody"], "is not a configured model"),
                        ([MODELS[0], MODELS[0]], "each judge once")):
        data["models"] = [{"name": m, "backend": "scripted", "script": ["x"]} for m in MODELS]
        data["botchat"]["agreement_judges"] = listed
        path = tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        with pytest.raises(ValueError, match=f"botchat.agreement_judges: .*{why}"):
            load_config(path, None, root=REPO_ROOT)
