"""MT-Bench-101's hard known-answer probes (``judge_checks.items: hard``, dialogbench/mtbench101/probes.py): k items
from the reserved dialogues no shipped config evaluates (``mtbench101.reserve_for_probes``), over the 13 tasks, each
a judged turn rated with its golden reply and with a fluent wrong one of similar length. Cheap heuristic judges
(length, a constant, word overlap with the reference, the question or the dialogue shown, TF-IDF and
character-trigram similarity, spotting a copied reply, and stacks of them), graded without a backend as the
``judge_probes`` view grades a pair (right: the golden reply's rating above the wrong one's), are right on under 80%
of the pairs (the length judges near half), while an oracle judge is right on all of them; with ``judge_checks.rotate``
the same holds on every night's window of the pool (the length and dialogue-overlap judges, both ways, near half),
so no heuristic passes the gate on any night; the basic items are the ones they always were."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from datetime import date, timedelta
from pathlib import Path
from typing import Callable

import pytest
import yaml

from dialogbench.run import registry
from dialogbench.cells.runner import run_stage
from dialogbench.judge_checks.check import settings_of
from dialogbench.judge_checks.health import hard_probe_findings
from dialogbench.judge_checks.rotation import item_of, rotated
from dialogbench.cells.keys import fingerprint
from dialogbench.lake.catalog import connect
from dialogbench.mtbench101 import probes as hard
from dialogbench.mtbench101.dataset import read_dialogues
from dialogbench.mtbench101.prompts import DIALOGUE_FRAMING, REFERENCE_TASKS
from dialogbench.mtbench101.scoring import is_judged
from dialogbench.mtbench101.selection import selected_dialogues
from dialogbench.mtbench101.taxonomy import TASK_CODES
from tests.conftest import REPO_ROOT, ScriptedCalls, config_dict

K = 54  # 4 items a task, 5 for the first two (CM, SI)
SHIPPED = sorted((REPO_ROOT / "configs").glob("*.yaml"))
REFERENCE = "\n\nThe reference solution is:\n###\n"
FRAMED = DIALOGUE_FRAMING + "\n***\n"
WORD = re.compile(r"[a-z0-9]+")


def hard_config_dict(lake: Path, k: int = K, **mtbench101) -> dict:
    data = config_dict(lake)
    data["mtbench101"] = {"enabled": True, "judge": "judge", **mtbench101}
    data["judge_checks"] = {"probes": k, "items": "hard", "max_unparsed": 1.0}
    return data


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    path = tmp_path_factory.mktemp("hard") / "config.yaml"
    path.write_text(yaml.safe_dump(hard_config_dict(path.parent / "lake"), sort_keys=False))
    return registry.load_config(path, None, root=REPO_ROOT)


@pytest.fixture(scope="module")
def stage(config):
    (found,) = hard.probes(config, K)
    return found


@pytest.fixture(scope="module")
def dialogues(config):
    return read_dialogues(config.mtbench101.dataset)


def pairs_of(stage) -> dict[str, dict]:
    found: dict[str, dict] = defaultdict(dict)
    for probe in stage.probes:
        found[probe.pair_id][probe.variant] = probe
    return dict(found)


# --- what a judge sees: the prompt, taken apart as prompts.render_dialogue and judge_messages put it together ------

def shown(messages: list[dict]) -> dict:
    """The answer, the user message it answers, the golden history before it, the reference (None unless shown) and
    the reply the reference ends with (``reference_reply``: the reference itself in the ``turn`` form; the last
    assistant reply of the golden dialogue in the ``dialogue`` form, which repeats the judged dialogue up to it)."""
    content, reference, reference_reply = messages[-1]["content"], None, None
    if REFERENCE in content:
        content, reference = content.rsplit(REFERENCE, 1)
        reference = reference.removesuffix("\n###")
    assert content.startswith(FRAMED) and content.endswith("\n***")
    head, answer = content[len(FRAMED):-4].rsplit("\n\nAssistant: ", 1)
    history, question = head.rsplit("Human: ", 1)
    if reference is not None:
        same = head + "\n\nAssistant: "
        reference_reply = reference[len(same):] if reference.startswith(same) else reference
    return {"answer": answer, "question": question, "history": history, "reference": reference,
            "reference_reply": reference_reply}


def words(text: str | None) -> set[str]:
    return set(WORD.findall((text or "").lower()))


def jaccard(one: set, other: set) -> float:
    return len(one & other) / len(one | other) if one | other else 0.0


# Measures a cheap judge rates by (the more, the better; each also tried the other way round).
MEASURES: dict[str, Callable[[dict], float]] = {
    "length": lambda s: len(s["answer"]),
    "reference words": lambda s: len(words(s["answer"]) & words(s["reference_reply"])),
    "whole reference words": lambda s: len(words(s["answer"]) & words(s["reference"])),
    "reference, else question, words": lambda s: len(words(s["answer"]) & words(s["reference_reply"]
                                                                                 or s["question"])),
    "question words": lambda s: len(words(s["answer"]) & words(s["question"])),
    "question content words": lambda s: len(hard.content_words(s["answer"]) & hard.content_words(s["question"])),
    "question Jaccard": lambda s: jaccard(words(s["answer"]), words(s["question"])),
    "dialogue words": lambda s: len(words(s["answer"]) & words(s["history"] + " " + s["question"])),
    "not a copy of the history": lambda s: float(s["answer"] not in s["history"]),
    "question character trigrams": lambda s: jaccard(trigrams(s["answer"]), trigrams(s["question"])),
    "dialogue character trigrams": lambda s: jaccard(trigrams(s["answer"]), trigrams(s["history"] + s["question"])),
    "question TF-IDF cosine": lambda s: tf_idf_cosine(s["answer"], s["question"]),
    "dialogue TF-IDF cosine": lambda s: tf_idf_cosine(s["answer"], s["history"] + " " + s["question"]),
    # stacks: a reply equal to the reference wins, then one that copies no earlier reply, then by overlap
    "reference verbatim, no copy, dialogue words": lambda s: (
        s["answer"] == s["reference_reply"], s["answer"] not in s["history"],
        len(words(s["answer"]) & words(s["history"] + " " + s["question"]))),
    "reference verbatim, no copy, question Jaccard": lambda s: (
        s["answer"] == s["reference_reply"], s["answer"] not in s["history"], jaccard(words(s["answer"]),
                                                                               words(s["question"]))),
}
ONE_WAY = ("reference verbatim, no copy, dialogue words", "reference verbatim, no copy, question Jaccard")


def trigrams(text: str) -> set[str]:
    return {text.lower()[i:i + 3] for i in range(len(text) - 2)}


def tf_idf_cosine(text: str, other: str) -> float:
    """Cosine of the two texts' TF-IDF vectors (IDF over the dataset's dialogues, probes.inverse_document_frequency)."""
    one, two = (Counter(WORD.findall(t.lower())) for t in (text, other))
    one, two = ({w: n * IDF.get(w, 0.0) for w, n in v.items()} for v in (one, two))
    dot = sum(v * two.get(w, 0.0) for w, v in one.items())
    norm = math.sqrt(sum(v * v for v in one.values()) * sum(v * v for v in two.values()))
    return dot / norm if norm else 0.0


IDF = hard.inverse_document_frequency(read_dialogues(REPO_ROOT / "data_lake/raw/mtbench101/mtbench101.jsonl"))


def reply(score: int) -> str:
    return f"A short explanation.\nRating: [[{score}]]"


def absolute(measure: Callable[[dict], float], scale: float) -> Callable[[list[dict]], str]:
    """A judge that rates each prompt alone: 1 + measure / scale, within 1..10."""
    return lambda messages: reply(max(1, min(10, 1 + int(measure(shown(messages)) / scale))))


def relative(measure: Callable[[dict], float], sign: int) -> Callable[[list[list[dict]]], list[str]]:
    """A batch judge (the stage sends its probes in one call) that ranks the answers to the same dialogue by
    ``sign`` * measure (equal measures, equal ratings): the heuristic at full resolution, no ties the scale made."""
    def judge(batch: list[list[dict]]) -> list[str]:
        seen = [shown(m) for m in batch]
        groups: dict[tuple, list[int]] = defaultdict(list)
        for i, s in enumerate(seen):
            groups[(s["history"], s["question"])].append(i)
        scores = [0] * len(batch)
        for members in groups.values():
            value = {i: measure(seen[i]) if sign > 0 else -measure(seen[i]) for i in members}
            ranks = sorted(set(value.values()))
            for i in members:
                scores[i] = 1 + ranks.index(value[i])
        return [reply(s) for s in scores]
    return judge


def rights(stage, replies: list[str]) -> dict[str, bool]:
    """The judge_probes view's grading, per pair: right when the ``higher`` probe's score is above the ``lower``
    one's (an unparsed or tied pair is wrong), graded with the stage's own ``grade``."""
    scores: dict[str, dict] = defaultdict(dict)
    for probe, text in zip(stage.probes, replies):
        scores[probe.pair_id][probe.expected] = stage.grade(probe, text)["score"]
    return {pair: s["higher"] is not None and s["lower"] is not None and s["higher"] > s["lower"]
            for pair, s in scores.items()}


def accuracy(stage, replies: list[str]) -> float:
    right = rights(stage, replies)
    return sum(right.values()) / len(right)


def ask(stage, judge) -> list[str]:
    return [judge(stage.prompt(p)) for p in stage.probes]


def ask_batch(stage, judge) -> list[str]:
    return judge([stage.prompt(p) for p in stage.probes])


def oracle(dialogues) -> Callable[[list[dict]], str]:
    """A judge that knows the dataset: the golden reply to the user message shown rates 9, anything else 2."""
    golden = {(t.user, t.bot) for d in dialogues for t in d.turns}
    return lambda messages: reply(9 if ((s := shown(messages))["question"], s["answer"]) in golden else 2)


# --- the items -----------------------------------------------------------------------------------------------------

def test_items_hard_is_the_default_and_basic_selects_the_basic_probes(config, stage, make_config, lake_dir):
    assert settings_of(config).items == "hard"
    assert (stage.name, stage.protocol) == ("judge_probe:mtbench101_judge", "mtbench101_judge")
    assert len(stage.probes) == 2 * K and len(pairs_of(stage)) == K
    assert {(p.kind, p.variant, p.expected) for p in stage.probes} == {
        ("golden_vs_wrong", "golden", "higher"), ("golden_vs_wrong", "wrong", "lower")}
    assert all(p.probe_id == f"{p.pair_id}/{p.variant}" for p in stage.probes)
    assert settings_of(make_config(hard_config_dict(lake_dir) | {"judge_checks": {"probes": K}})).items == "hard"
    basic = make_config(hard_config_dict(lake_dir) | {"judge_checks": {"probes": K, "items": "basic"}})
    assert settings_of(basic).items == "basic"
    assert {p.kind for p in hard.probes(basic, K)[0].probes} == {"golden_vs_useless"}


def test_the_basic_items_are_the_ones_they_always_were(make_config, lake_dir):
    """Byte for byte: the fingerprint of every basic probe (id, kind, variant, expected, content, pair) as the code
    before the hard items built them (13 tasks' first dialogues, golden vs "I don't know.")."""
    data = hard_config_dict(lake_dir)
    data["judge_checks"]["items"] = "basic"
    (basic,) = hard.probes(make_config(data), 13)
    assert fingerprint([(p.probe_id, p.kind, p.variant, p.expected, p.content, p.pair_id)
                        for p in basic.probes]) == "055e389126f9346b73d439826d80024b"


def item_dialogues(stage) -> list[int]:
    return [int(pair.split("/")[1].split(":")[0]) for pair in pairs_of(stage)]


def positions(dialogues) -> dict:
    """Each dialogue's place among its task's dialogues in file order, from the first (0) and from the last (0)."""
    found = {}
    for task in TASK_CODES:
        mine = [d for d in dialogues if d.task == task]
        found |= {d.id: (n, len(mine) - 1 - n) for n, d in enumerate(mine)}
    return found


def test_no_shipped_config_evaluates_an_item_and_the_pool_covers_the_13_tasks(config, dialogues, make_config,
                                                                               lake_dir):
    """The held-out slice: every item of the whole rotation pool (``judge_checks.pool``, 540 asked; the reserve gives
    130) is one of the last ``reserve_for_probes`` (10) dialogues of its task, and no configs/*.yaml evaluates any
    of them (configs/nightly.yaml: 1,388 less the 130, configs/demo.yaml: the first dialogue of CM, SI, MR). The pool
    still gives 54 independent items and more over all 13 tasks. With ``reserve_for_probes: 0`` a run without a limit
    evaluates all 1,388 dialogues, the items' too (the docs say so), and the items avoid the first ``HOLD_FIRST`` of
    each task."""
    assert config.mtbench101.reserve_for_probes == 10  # the default
    (pool,) = hard.probes(config, settings_of(config).pool)
    items = set(item_dialogues(pool))
    assert len(items) == len(pairs_of(pool)) == 130  # one item a dialogue, ten a task
    assert Counter(pair.split("/")[0] for pair in pairs_of(pool)) == {t: 10 for t in TASK_CODES}
    assert len(items) >= K and {p.content[0] for p in pool.probes} == set(TASK_CODES)
    place = positions(dialogues)
    assert max(place[i][1] for i in items) == 9  # each task's last ten
    full = 0
    for path in SHIPPED:
        shipped = registry.load_config(path, None, root=REPO_ROOT)
        picked = {d.id for d in selected_dialogues(shipped)}
        assert picked and not picked & items, path
        if not shipped.mtbench101.limit:
            full += 1
            assert len(picked) == 1388 - 130 == 1258, path
    assert full  # configs/nightly.yaml: every dialogue but the reserved ones
    assert {d.id for d in selected_dialogues(make_config(hard_config_dict(lake_dir)))} == \
        {d.id for d in dialogues} - items  # the reserve and the pool are one slice
    limited = hard_config_dict(lake_dir, limit=hard.HOLD_FIRST)
    assert len(selected_dialogues(make_config(limited))) == 13 * hard.HOLD_FIRST  # a limit counts the rest
    open_slice = make_config(hard_config_dict(lake_dir, reserve_for_probes=0))
    assert {d.id for d in selected_dialogues(open_slice)} == {d.id for d in dialogues}  # all 1,388
    (everything,) = hard.probes(open_slice, K)
    assert min(place[i][0] for i in item_dialogues(everything)) >= hard.HOLD_FIRST
    limited["mtbench101"]["reserve_for_probes"] = 0
    assert not {d.id for d in selected_dialogues(make_config(limited))} & set(item_dialogues(everything))


def test_the_rotation_moves_through_the_reserve_s_pool(config):
    """``judge_checks.rotate``: each night asks 54 of the pool's 130 items (``judge_checks.pool`` asks for 540, the
    reserve gives what it holds), a new window each night, all 130 met within three nights."""
    from datetime import date, timedelta

    from dialogbench.judge_checks.rotation import item_of, rotated

    (pool,) = hard.probes(config, settings_of(config).pool)
    met, nights = set(), []
    for n in range(3):
        tonight = rotated(pool, k=K, night=date(2026, 1, 1) + timedelta(days=n))
        found = {item_of(p) for p in tonight.probes}
        assert len(found) == K and len(tonight.probes) == 2 * K
        nights.append(found)
        met |= found
    assert nights[0] != nights[1] and met == {item_of(p) for p in pool.probes}


def test_the_items_cover_the_13_tasks_round_robin_with_stable_ids(stage, config):
    pairs = list(pairs_of(stage))
    assert [p.split("/")[0] for p in pairs] == [TASK_CODES[n % 13] for n in range(K)]
    assert Counter(p.split("/")[0] for p in pairs) == {t: 5 if t in ("CM", "SI") else 4 for t in TASK_CODES}
    # the ids and contents changed when the wrong replies came to be chosen over the whole pool, each cue balanced,
    # and the pool ordered so that every rotation window is balanced (before: the first 54 only, the topic by a
    # close/far split the reserve could not fill; CM/1224:3, SI/1144:2, AR/372:1, ... and 49bd1d4e...)
    assert pairs[:13] == ["CM/1220:3", "SI/1144:2", "AR/374:2", "TS/786:2", "CC/700:1", "CR/917:2", "FR/448:2",
                          "SC/1380:1", "SA/987:1", "MR/554:1", "GR/66:0", "IC/220:1", "PI/1309:3"]
    # every item's id and content (what its cells' keys hold), whatever the process's hash seed: a change here
    # changes the cells of every hard probe
    assert fingerprint([(p.probe_id, p.content) for p in stage.probes]) == "a0f146b380c333514f2ef143e100669c"
    hard._pool.cache_clear()  # built afresh: the same items
    (again,) = hard.probes(config, K)
    assert again.probes == stage.probes
    (fewer,) = hard.probes(config, 20)
    assert fewer.probes == stage.probes[:40]  # the first n items of k are the items of n


def test_each_wrong_reply_answers_another_dialogue_at_a_similar_length_under_both_controls(stage, dialogues):
    by_id = {d.id: d for d in dialogues}
    replies = defaultdict(list)  # (task, reply) -> (dialogue, turn)
    for d in dialogues:
        for i, t in enumerate(d.turns):
            replies[(d.task, t.bot)].append((d, i))
    longer, ahead, behind = 0, Counter(), Counter()  # per cue: items where the wrong reply is ahead, behind
    for pair_id, pair in pairs_of(stage).items():
        golden, wrong = pair["golden"], pair["wrong"]
        task, history, question, answer, reference = golden.content
        dialogue = by_id[int(pair_id.split("/")[1].split(":")[0])]
        turn = int(pair_id.split(":")[1])
        assert dialogue.task == task and is_judged(task=task, turn=turn) and not (task == "SI" and turn == 0)
        assert history == tuple((t.user, t.bot) for t in dialogue.turns[:turn])
        assert question == dialogue.turns[turn].user
        assert answer == reference == dialogue.turns[turn].bot  # the golden reply, shown as the reference (MR, GR)
        assert wrong.content[:3] == golden.content[:3] and wrong.content[4] == reference  # only the answer differs
        text = wrong.content[3]
        assert text not in (answer, reference) and 0.75 * len(answer) <= len(text) <= 1.25 * len(answer)
        assert len(text) != len(answer) and text not in {bot for _, bot in history}
        longer += len(text) > len(answer)
        sources = replies[(task, text)]
        assert sources  # the golden reply to a turn of the same task...
        for source, i in sources:  # ...of another dialogue, to a question of its own
            assert source is not dialogue and not {t.user for t in source.turns} & {t.user for t in dialogue.turns}
            assert jaccard(hard.content_words(source.turns[i].user), hard.content_words(question)) < hard.SIMILAR
        shown_text = " ".join(f"{u} {b}" for u, b in history) + " " + question  # the dialogue shown

        def measured(said: str) -> list[float]:  # the module's measures, against the question, then the dialogue
            return [m for target in (question, shown_text)
                    for m in hard.closeness(hard.bag(said, IDF), hard.bag(target, IDF), IDF)]

        for cue, a, b in zip(hard.CUES[1:], measured(text), measured(answer)):
            ahead[cue] += a > b
            behind[cue] += a < b
    assert abs(longer - K / 2) <= 1  # the length control
    # the topic cues: words shared with the dialogue shown (a context-overlap judge) ahead and behind in about half
    # the items each; every measure against the question or the dialogue ahead in at least a quarter and behind in at
    # least a quarter (the reserve holds few replies ahead of the golden one by TF-IDF cosine or IDF weight: those
    # stay under half, about 20 of the 54)
    assert abs(ahead["words shared, dialogue"] - K / 2) <= 4 and abs(behind["words shared, dialogue"] - K / 2) <= 4
    assert set(ahead) == set(hard.CUES[1:]) and all(ahead[c] >= K / 4 and behind[c] >= K / 4 for c in ahead), (
        ahead, behind)


# --- the heuristics ------------------------------------------------------------------------------------------------

def test_an_oracle_judge_is_right_on_every_pair(stage, dialogues):
    assert accuracy(stage, ask(stage, oracle(dialogues))) == 1.0


def test_a_length_judge_and_a_constant_one_cannot_tell(stage):
    over_40 = ask(stage, lambda m: reply(7 if len(shown(m)["answer"]) > 40 else 2))
    assert accuracy(stage, over_40) < 0.35  # every reply is over 40 characters: the pairs tie, and a tie is wrong
    for sign in (1, -1):  # longer is better, shorter is better: by length rank within the pair
        assert 0.35 <= accuracy(stage, ask_batch(stage, relative(MEASURES["length"], sign))) <= 0.65
    assert accuracy(stage, ask(stage, lambda m: reply(7))) == 0.0


@pytest.mark.parametrize("name", [n for n in MEASURES if n != "length"])
def test_an_overlap_or_similarity_judge_is_right_on_under_80_percent(stage, name):
    measure = MEASURES[name]
    for sign in (1,) if name in ONE_WAY else (1, -1):  # the more the better, and the less
        assert accuracy(stage, ask_batch(stage, relative(measure, sign))) < 0.8, (name, sign)
    if name not in ONE_WAY:  # alone, on a 1..10 scale
        scale = {"question words": 1, "question content words": 1, "not a copy of the history": 1}.get(
            name, 4 if "words" in name else 0.05)
        assert accuracy(stage, ask(stage, absolute(measure, scale))) < 0.8, name


@pytest.mark.parametrize("form", ["dialogue", "turn"])
def test_the_reference_overlap_judge_wins_exactly_where_the_reference_is_the_golden_reply(form, tmp_path):
    """MR and GR show the turn's golden reply in the reference (prompts.reference_text: at the end of the golden
    dialogue, the default, or alone), so a judge rating overlap with it is right on every MR and GR item, and on
    nothing else (no reference shown: a tie). Nothing in the protocol lets an item show another reference; the other
    11 tasks keep this judge at their share."""
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(hard_config_dict(tmp_path / "lake", reference=form), sort_keys=False))
    (stage,) = hard.probes(registry.load_config(path, None, root=REPO_ROOT), K)
    pairs = pairs_of(stage)
    share = sum(p.split("/")[0] in REFERENCE_TASKS for p in pairs) / len(pairs)
    assert accuracy(stage, ask_batch(stage, relative(MEASURES["reference words"], 1))) == share < 0.2
    seen = [shown(stage.prompt(p)) for p in stage.probes]
    shown_golden = [(s["reference_reply"], s["answer"]) for s, p in zip(seen, stage.probes) if p.variant == "golden"]
    assert len([r for r, _ in shown_golden if r is not None]) == round(share * len(pairs))  # one a MR / GR item
    assert all(r == a for r, a in shown_golden if r is not None)  # the reference's reply is the golden one
    if form == "dialogue":  # the golden dialogue so far: the history shown, then the question with its golden reply
        assert all(s["reference"].startswith(s["history"] + "Human: " + s["question"]) for s in seen if s["reference"])
    else:
        assert all(s["reference"] == s["reference_reply"] for s in seen if s["reference"])


# --- every night: the rotation's windows of the pool are balanced as the first 54 ---------------------------------

@pytest.fixture(scope="module")
def pool(config):
    """The whole rotation pool: ``judge_checks.pool`` (540) asked, the reserve's 130 given, in the pool's order."""
    (found,) = hard.probes(config, settings_of(config).pool)
    return found


@pytest.fixture(scope="module")
def nightly():
    """configs/nightly.yaml's judge_checks settings: hard items, rotated, 54 a night, gated at 80%."""
    settings = settings_of(registry.load_config(REPO_ROOT / "configs" / "nightly.yaml", None, root=REPO_ROOT))
    assert (settings.items, settings.rotate, settings.probes, settings.min_probe_accuracy) == ("hard", True, K, 0.8)
    return settings


def windows(pool, k: int) -> list[list[str]]:
    """Every window a night can ask: ``k`` pairs in a row of the pool from each start, round its end, as
    rotation.window cuts them (a night's start is drawn from the protocol and kind and moves by ``k`` a night)."""
    pairs = list(pairs_of(pool))
    return [[pairs[(start + i) % len(pairs)] for i in range(k)] for start in range(len(pairs))]


def fails_the_gate(right: int, n: int, settings) -> bool:
    """Whether a judge right on ``right`` of ``n`` golden-vs-wrong pairs fails ``probes`` under ``settings``, as
    health.hard_probe_findings decides it from the judge_probes row (its Wilson 95% interval)."""
    z = 1.959963984540054
    centre, spread = right + z * z / 2, z * (right * (n - right) / n + z * z / 4) ** 0.5
    row = {"judge": "j", "protocol": "mtbench101_judge", "kind": hard.HARD_KIND, "probes": n, "correct": right,
           "accuracy": right / n, "ci_low": (centre - spread) / (n + z * z), "ci_high": (centre + spread) / (n + z * z)}
    return any(f.check == "probes" for f in hard_probe_findings([row], settings))


def test_the_nights_ask_runs_of_the_pool_over_all_13_tasks(pool, nightly):
    """Nights 1 to 6 (of 2026) as rotation.rotated cuts them under the nightly settings are windows of 54 pairs in a
    row of the pool (so the windows below are every night's), and every window holds all 13 tasks, four or more
    each."""
    runs = [set(w) for w in windows(pool, nightly.probes)]
    for n in range(6):
        night = date(2026, 1, 1) + timedelta(days=n)
        tonight = {item_of(p) for p in rotated(pool, k=nightly.probes, night=night).probes}
        assert tonight in runs
    for window in windows(pool, nightly.probes):
        assert min(Counter(pair.split("/")[0] for pair in window)[t] for t in TASK_CODES) >= 4


CHEAP = {"context overlap (dialogue words)": ("dialogue words", 1), "anti-overlap": ("dialogue words", -1),
         "longer is better": ("length", 1), "shorter is better": ("length", -1)}


@pytest.mark.parametrize("name", CHEAP)
def test_on_every_night_s_window_the_cue_judges_score_about_half_and_fail_the_gate(pool, nightly, name):
    """On each of the 130 windows (any night's, whatever its start): the judge preferring the reply with more words
    in common with the dialogue shown, its opposite, longer-is-better and shorter-is-better are each right on
    50% ± 15% of the 54 pairs, far under the gate: the pool chooses the wrong replies so that each cue has the wrong
    reply ahead in half the items, and orders them so that every run of 54 keeps that balance (before, the overlap
    judge was right on up to 94% of a later night's window)."""
    measure, sign = CHEAP[name]
    right = rights(pool, ask_batch(pool, relative(MEASURES[measure], sign)))
    for window in windows(pool, nightly.probes):
        correct = sum(right[pair] for pair in window)
        assert 0.35 <= correct / len(window) <= 0.65 and fails_the_gate(correct, len(window), nightly), (name, correct)


def test_on_every_night_s_window_an_oracle_passes_the_gate(pool, nightly, dialogues):
    right = rights(pool, ask(pool, oracle(dialogues)))
    assert all(right.values())
    assert not any(fails_the_gate(sum(right[p] for p in w), len(w), nightly) for w in windows(pool, nightly.probes))


@pytest.mark.parametrize("name", [n for n in MEASURES if n != "length"])
def test_on_every_night_s_window_no_overlap_or_similarity_judge_passes_the_gate(pool, nightly, name):
    """Every heuristic of ``MEASURES``, both ways, fails the gate on every window (right on at most 72% of one)."""
    for sign in (1,) if name in ONE_WAY else (1, -1):
        right = rights(pool, ask_batch(pool, relative(MEASURES[name], sign)))
        for window in windows(pool, nightly.probes):
            correct = sum(right[pair] for pair in window)
            assert correct / len(window) <= 0.75 and fails_the_gate(correct, len(window), nightly), (name, sign)


# --- through the lake: the judge_probes view grades the new kind as the tests above do ----------------------------

def night(config, scripted_calls: ScriptedCalls, judge: Callable[[list[dict]], str]) -> dict:
    scripted_calls.answer("judge", judge)
    (found,) = hard.probes(config, 13)
    report = run_stage(found, config, "r1", lake=registry.open_lake(config.lake))
    assert report.computed == 26
    with connect(registry.open_lake(config.lake), board=config.board) as con:
        rel = con.execute("select * from judge_probes")
        cols = [d[0] for d in rel.description]
        rows = [dict(zip(cols, row)) for row in rel.fetchall()]
    assert [(r["protocol"], r["kind"], r["probes"]) for r in rows] == [("mtbench101_judge", "golden_vs_wrong", 13)]
    return rows[0] | {"stage": found}


def test_the_view_grades_an_oracle_right_on_every_hard_pair(make_config, lake_dir, scripted_calls, dialogues):
    row = night(make_config(hard_config_dict(lake_dir, 13)), scripted_calls, oracle(dialogues))
    assert (row["correct"], row["accuracy"], row["unparsed"], row["mean_gap"]) == (13, 1.0, 0, 7.0)


def test_the_view_grades_a_heuristic_judge_as_the_tests_do(make_config, lake_dir, scripted_calls):
    judge = absolute(MEASURES["question words"], 1)
    row = night(make_config(hard_config_dict(lake_dir, 13)), scripted_calls, judge)
    assert row["accuracy"] == accuracy(row["stage"], ask(row["stage"], judge)) < 0.8


def test_a_wrong_reply_is_never_the_golden_one_nor_a_reply_to_the_same_question():
    """On a made-up task of 11 dialogues (the 11th, the only held-out one, holds the item, its last turn): the golden
    text itself, the item's own earlier reply, a reply to the very same question and one to a near copy of it are
    left out, as are replies outside ±25% of the golden reply's length or of its very length; the one left is the
    wrong reply."""
    from dialogbench.mtbench101.dataset import Dialogue, Turn

    golden = "Feed the starter, mix flour and water, let it rise overnight, shape the loaf, then bake it hot. " * 2

    def one(i, user, bot, *before):
        return Dialogue(id=i, task="GR", line=i, turns=(*before, Turn(user, bot)))

    question = "How do I bake sourdough bread at home?"
    fine = "Tides come from the moon's pull on the oceans; the side nearest the moon bulges, as does the far side. " \
        "Two highs and two lows a day follow as the Earth turns beneath them, a little later each day."
    made_up = [one(1, question, "x" * 200), one(2, "How can I bake sourdough bread at home quickly?", "y" * 200),
               one(3, "What is a good name for a cat?", golden), one(4, "Why is the sky blue?", "z" * 300),
               one(5, "Which planet is the largest?", "w" * len(golden)), one(6, "What causes the tides?", fine),
               *(one(i, f"Question number {i}?", "short") for i in range(7, 11)),
               one(11, question, golden, Turn("Any tips for a first loaf?", "e" * 190))]
    assert 0.75 * len(golden) <= len(fine) <= 1.25 * len(golden) and len(fine) != len(golden)
    candidates = hard._Candidates(tuple(made_up)).fits(made_up[-1], 1)
    assert [r for r, _ in candidates] == [fine]
    for reserve in (1, 0):  # the 11th is the one reserved, or the only one past the first HOLD_FIRST
        (item,) = hard.hard_items(made_up, 3, reserve=reserve)  # one held-out dialogue: one item
        assert item[0] is made_up[-1] and item[2] not in {t.bot for t in made_up[-1].turns}
