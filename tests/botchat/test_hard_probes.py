"""BotChat's hard probe items (``judge_checks.items: hard``, botchat/probes.py), built from MuTual's dev split
(botchat/mutual_dev.py), judged without a backend: cheap heuristic judges read each probe's prompt (the protocol's
own, ``ProbeStage.prompt``), answer in the protocol's format, and the stage's own ``grade`` marks them. Each heuristic
stays below 0.8 on some kind of every protocol, "the longer one wins" near chance on the pairwise items, while an
oracle (it knows the answer from the probe) is right on all; on GTEval (a human dialogue against its AI-marked twin,
as its prompt asks: exactly one contains AI) each heuristic fails the gates (a kind's or an order's 95% lower bound
under 80%, or a flip rate's upper bound over 20%), the oracle none. Also: the items are held out from the seeds,
independent, stable, length-controlled; the marks vary in kind, index and wording and match the replaced turn's
length."""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from pathlib import Path

import pytest
import yaml

from dialogbench.botchat import probes as botchat_probes
from dialogbench.botchat.mutual_dev import DEV_FILE, DatasetError, conversations, detokenize, dev_items, read_dev
from dialogbench.botchat import arena
from dialogbench.botchat.probes import (LENGTH_MATCH, MARKS, MIN_UTTERANCES, PAIRWISE_LENGTH, hard_gteval_items,
                                        hard_pairwise_items, hard_unieval_items)
from dialogbench.judge_checks.check import settings_of
from dialogbench.judge_checks.config import JudgeChecksConfig
from dialogbench.judge_checks.health import findings
from dialogbench.judge_checks.rotation import item_of
from dialogbench.run.registry import load_config
from tests.conftest import DATASET, REPO_ROOT, config_dict
from tests.judge_checks.test_hard_gates import wilson

K = 54
AI_LINE = "As an AI language model"
LINE = re.compile(r"^([AB]): (.*?)<chat_end>$", re.M)
PAIR = re.compile(r"Conversation 1:(.*)\nConversation 2:(.*)\n\nNow give your judgment", re.S)


def load(tmp: Path, items: str | None, name: str):
    data = config_dict(tmp / "lake", n=[8], limit=2, arena={"enabled": True, "n": [8]}, gteval={"enabled": True})
    data["judge_checks"] = {"probes": K, **({"items": items} if items else {})}
    path = tmp / name / "config.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return load_config(path, None, root=REPO_ROOT)


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    return load(tmp_path_factory.mktemp("hard"), "hard", "hard")


@pytest.fixture(scope="module")
def stages(config):
    return {stage.protocol: stage for stage in botchat_probes.probes(config, K)}


# --- the heuristic judges: prompt in, reply in the protocol's format out --------------------------------------------

def judged_lines(messages: list[dict]) -> list[str]:
    """The utterances of the conversation a UniEval prompt asks about (after its in-context examples)."""
    return [m.group(2) for m in LINE.finditer(messages[-1]["content"].split("Now judge this conversation:")[-1])]


def pair_lines(messages: list[dict]) -> tuple[list[str], list[str]]:
    first, second = PAIR.search(messages[-1]["content"]).groups()
    return [m.group(2) for m in LINE.finditer(first)], [m.group(2) for m in LINE.finditer(second)]


def unieval_reply(index: int | None) -> str:
    return "Choice: No\nIndex: None\nReason: human." if index is None else \
        f"Choice: Yes\nIndex: {index}\nReason: that line."


def arena_reply(winner: int | None) -> str:
    """The Arena / GTEval judge names the AI-involved conversation: the one that does not win (None: a tie)."""
    return "Choice: Neither\nReason: both human." if winner is None else \
        f"Choice: Conversation {3 - winner}\nReason: the other one."


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z']+", text.lower()))


def lexical_unieval(lines):
    return next((i for i, line in enumerate(lines, 1) if AI_LINE in line), None)


def lexical_pair(first, second):
    return 2 if any(AI_LINE in line for line in first) else 1 if any(AI_LINE in line for line in second) else None


def longer_unieval(lines):
    lengths = [len(line) for line in lines]
    longest = max(range(len(lines)), key=lambda i: lengths[i])
    return longest + 1 if lengths[longest] > 1.5 * statistics.median(lengths) else None


def longer_pair(first, second):
    a, b = sum(map(len, first)), sum(map(len, second))
    return None if a == b else 1 if a > b else 2


def overlap_unieval(lines):
    """The utterance (from the 3rd) sharing the fewest words with the others, when under a fifth of its own."""
    share = {}
    for i, line in enumerate(lines, 1):
        if i >= 3 and words(line):
            others = set().union(*(words(o) for j, o in enumerate(lines, 1) if j != i))
            share[i] = len(words(line) & others) / len(words(line))
    least = min(share, key=share.get) if share else None
    return least if least is not None and share[least] < 0.2 else None


def overlap_pair(first, second):
    def overlap(lines):
        return len(words(lines[-1]) & set().union(*map(words, lines[:-1])))
    a, b = overlap(first), overlap(second)
    return None if a == b else 1 if a > b else 2


HEURISTICS = {  # name: (UniEval judge: lines -> AI index or None, pairwise judge: two conversations -> winner or None)
    "lexical tell": (lexical_unieval, lexical_pair),
    "longer is better": (longer_unieval, longer_pair),
    "constant No / model_a": (lambda lines: None, lambda first, second: 1),
    "constant tie": (None, lambda first, second: None),
    "position first": (lambda lines: 1, lambda first, second: 2),  # the first line is AI / conversation 1 is AI
    "more overlap wins": (overlap_unieval, overlap_pair),
}


def oracle_reply(probe) -> str:
    if probe.kind == "human":
        return unieval_reply(None)
    if probe.kind == "ai_marked":
        return unieval_reply(int(probe.expected.rsplit(" ", 1)[1]))
    return arena_reply(1 if probe.variant in ("right_first", "human_first") else 2)


def reply(name: str, stage, probe) -> str | None:
    unieval, pair = HEURISTICS[name]
    messages = stage.prompt(probe)
    if stage.protocol == "botchat_unieval":
        return unieval_reply(unieval(judged_lines(messages))) if unieval else None
    return arena_reply(pair(*pair_lines(messages)))


def accuracy(stage, answer) -> dict[str, float]:
    """Share right per kind, graded by the stage's own ``grade``."""
    right, total = Counter(), Counter()
    for probe in stage.probes:
        graded = stage.grade(probe, answer(probe))
        right[probe.kind] += bool(graded["correct"])
        total[probe.kind] += 1
    return {kind: right[kind] / total[kind] for kind in total}


# --- what a judge scores on them -----------------------------------------------------------------------------------

def test_hard_items_are_the_default_and_basic_ones_are_selected_by_the_config(config, stages, tmp_path):
    basic = load(tmp_path, "basic", "basic")
    assert settings_of(basic).items == "basic" and settings_of(config).items == "hard"
    assert settings_of(load(tmp_path, None, "default")).items == "hard"
    assert sorted(stages) == ["botchat_arena", "botchat_gteval", "botchat_unieval"]
    assert {k: Counter(p.kind for p in s.probes) for k, s in stages.items()} == {
        "botchat_unieval": {"human": K, "ai_marked": K},
        "botchat_arena": {"right_vs_wrong": 2 * K}, "botchat_gteval": {"human_vs_marked": 2 * K}}
    old = {stage.protocol: stage for stage in botchat_probes.probes(basic, 4)}
    assert {p.kind for p in old["botchat_arena"].probes} == {"human_vs_ai"}
    assert all(p.probe_id.startswith("MT-") for s in old.values() for p in s.probes)
    assert all(p.probe_id.startswith("dev_") for s in stages.values() for p in s.probes)
    assert {k: s.version for k, s in old.items()} == {k: s.version for k, s in stages.items()}  # same protocols


def test_an_oracle_is_right_on_every_kind_and_finds_every_mark_at_its_index(stages):
    for stage in stages.values():
        assert set(accuracy(stage, oracle_reply).values()) == {1.0}, stage.protocol
    unieval = stages["botchat_unieval"]
    assert all(unieval.grade(p, oracle_reply(p))["index_right"] for p in unieval.probes if p.kind == "ai_marked")


@pytest.mark.parametrize("name", list(HEURISTICS))
def test_a_cheap_heuristic_judge_fails_some_kind_of_every_protocol(stages, name):
    for stage in stages.values():
        if stage.protocol == "botchat_unieval" and HEURISTICS[name][0] is None:
            continue
        scores = accuracy(stage, lambda probe: reply(name, stage, probe))
        assert min(scores.values()) < 0.8, (name, stage.protocol, scores)
        if name == "longer is better" and stage.protocol != "botchat_unieval":
            assert 0.35 <= scores["human_vs_marked" if stage.protocol == "botchat_gteval" else "right_vs_wrong"] \
                <= 0.65, scores


def gate_rows(stage, answer) -> tuple[list[dict], list[dict]]:
    """The judge_probes rows (per kind) and judge_probe_orders rows (per order, with the items that flip) of a
    pairwise stage's probes answered by ``answer``, graded by the stage's own ``grade``: what the gates read."""
    right = {p.probe_id: bool(stage.grade(p, answer(p))["correct"]) for p in stage.probes}
    base = {"judge": "j", "protocol": stage.protocol}

    def row(probes: list, **extra) -> dict:
        k, n = sum(right[p.probe_id] for p in probes), len(probes)
        low, high = wilson(k, n)
        return {**base, "kind": probes[0].kind, "probes": n, "correct": k, "accuracy": k / n, "ci_low": low,
                "ci_high": high, **extra}

    items: dict[str, list[bool]] = {}
    for p in stage.probes:
        items.setdefault(item_of(p), []).append(right[p.probe_id])
    flips = sum(sum(found) == 1 for found in items.values())
    low, high = wilson(flips, len(items))
    flip = {"items": len(items), "flips": flips, "flip_rate": flips / len(items), "flip_ci_low": low,
            "flip_ci_high": high}
    variants = sorted({p.variant for p in stage.probes})
    return [row(stage.probes)], [row([p for p in stage.probes if p.variant == v], variant=v, **flip)
                                 for v in variants]


@pytest.mark.parametrize("name", [n for n in HEURISTICS if n != "constant tie"] + ["constant tie", "oracle"])
def test_gteval_s_gates_fail_every_heuristic_and_pass_an_oracle(stages, name):
    """GTEval's hard items through the gates ``judge_checks.items: hard`` applies (health.hard_probe_findings: the
    kind's and each order's Wilson lower bound against 80%, the flip rate's upper bound against 20%): each heuristic
    judge fails at least one, the oracle none."""
    stage = stages["botchat_gteval"]
    answer = oracle_reply if name == "oracle" else (lambda probe: reply(name, stage, probe))
    kinds, orders = gate_rows(stage, answer)
    found = findings([], JudgeChecksConfig(items="hard"), kinds, orders)
    assert [r["variant"] for r in orders] == ["human_first", "marked_first"] and orders[0]["items"] == K
    if name == "oracle":
        assert found == [] and kinds[0]["accuracy"] == 1.0
    else:
        assert found and {f.check for f in found} <= {"probes", "position"}, (name, kinds, orders)
        assert kinds[0]["ci_low"] < 0.8 or any(r["ci_low"] < 0.8 for r in orders) or orders[0]["flip_ci_high"] > 0.2


def test_gteval_asks_about_a_human_dialogue_and_its_marked_twin_as_its_prompt_says(config, stages):
    """GTEval's prompt says exactly one conversation contains AI: its items pair a human dev dialogue with its
    AI-marked twin (one turn, at an index 3..len, replaced by a length-matched artefact of varied kind), never the
    Arena's two human continuations; in both orders, the twin the longer side in half the items (within one)."""
    stage = stages["botchat_gteval"]
    assert all(arena.GT_PROMPT.strip() in stage.prompt(p)[-1]["content"] for p in stage.probes)
    items = hard_gteval_items(config, K)
    assert len({i for i, *_ in items}) == K
    assert abs(sum(sum(map(len, twin)) > sum(map(len, human)) for _, human, _, _, twin in items) - K / 2) <= 1
    kinds = Counter(mark for _, _, _, mark, _ in items)
    assert len(kinds) >= 8 and max(kinds.values()) <= -(-K // 8), kinds
    assert len({index for _, _, index, _, _ in items}) >= 4
    for _, human, index, mark, twin in items:
        assert MIN_UTTERANCES <= len(human) == len(twin) <= PAIRWISE_LENGTH and 3 <= index <= len(human)
        assert [u for i, u in enumerate(twin, 1) if i != index] == [u for i, u in enumerate(human, 1) if i != index]
        before, after = human[index - 1], twin[index - 1]
        assert 0 < abs(len(after) - len(before)) <= LENGTH_MATCH * len(before) and AI_LINE not in after
    probes = stage.probes
    assert Counter(p.variant for p in probes) == {"human_first": K, "marked_first": K}
    for first, second in zip(probes[::2], probes[1::2]):
        assert first.content == second.content[::-1] and item_of(first) == item_of(second)
        human, twin = first.content
        assert first.longer == ("other" if sum(map(len, twin)) > sum(map(len, human)) else "expected")
    graded = stage.grade(probes[1], "Choice: Conversation 1\nReason: the first one has an AI line.")
    assert graded["correct"] and graded["answer"] == "conversation_1"  # marked first, named AI: the human one wins
    assert not stage.grade(probes[0], "Choice: Conversation 1\nReason: x.")["correct"]
    assert not {p.content for p in probes} & {p.content for p in stages["botchat_arena"].probes}


def test_the_basic_items_are_the_ones_a_heuristic_passes(tmp_path):
    """Why the hard items exist: on the basic ones the lexical tell is right on every kind."""
    basic = {s.protocol: s for s in botchat_probes.probes(load(tmp_path, "basic", "basic"), 10)}
    for stage in basic.values():
        assert set(accuracy(stage, lambda probe: reply("lexical tell", stage, probe)).values()) == {1.0}


# --- how the items are built ---------------------------------------------------------------------------------------

def norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def test_the_items_are_held_out_from_the_seeds_and_independent(config):
    human, marked = hard_unieval_items(config, K, config.botchat.n_max)
    pairs = hard_pairwise_items(config, K)
    gteval = [d for _, d, *_ in hard_gteval_items(config, K)]
    seeds = [json.loads(line)["conv-GT"] for line in DATASET.read_text().splitlines()]
    seed_dialogues = {tuple(map(norm, s)) for s in seeds}
    seed_lines = {norm(u) for s in seeds for u in s if len(norm(u)) >= 20}
    used = [d for _, d in human] + [d for _, d, *_ in marked] + [r for _, r, _, _ in pairs] + gteval
    assert len(used) == 4 * K
    for dialogue in used:
        assert tuple(map(norm, dialogue)) not in seed_dialogues
        assert not {norm(u) for u in dialogue} & seed_lines, dialogue  # not even one line of a seed
    # one dev conversation per item: no two items of a protocol share a line
    for dialogues in ([d for _, d in human] + [d for _, d, *_ in marked], [r for _, r, _, _ in pairs], gteval):
        lines = [{norm(u) for u in d if len(norm(u)) >= 20} for d in dialogues]
        assert all(not (a & b) for i, a in enumerate(lines) for b in lines[i + 1:])
    assert not {i for i, _ in human} & {i for i, *_ in marked}


def test_the_items_are_the_same_every_time_and_a_smaller_k_takes_the_first(config, tmp_path):
    first, second = botchat_probes.probes(config, K), botchat_probes.probes(load(tmp_path, "hard", "again"), K)
    assert [[(p.probe_id, p.content) for p in s.probes] for s in first] == \
        [[(p.probe_id, p.content) for p in s.probes] for s in second]
    small = {s.protocol: [p.probe_id for p in s.probes] for s in botchat_probes.probes(config, 10)}
    full = {s.protocol: [p.probe_id for p in s.probes] for s in botchat_probes.probes(config, K)}
    assert small["botchat_arena"] == full["botchat_arena"][:20]
    # the same in every process (drawn from fingerprints, never from Python's hash): a night's probes are cells
    assert full["botchat_arena"][:2] == ["dev_244/right_vs_wrong3/right_first", "dev_244/right_vs_wrong3/wrong_first"]
    assert full["botchat_unieval"][:2] == ["dev_270/human", "dev_162/human"]
    assert full["botchat_gteval"][:2] == ["dev_179/language_model@4/human_first",
                                          "dev_179/language_model@4/marked_first"]
    assert small["botchat_gteval"] == full["botchat_gteval"][:20]
    assert set(small["botchat_unieval"]) < set(full["botchat_unieval"])


def test_the_pairwise_items_are_length_controlled_and_end_with_the_response(config, stages):
    pairs = hard_pairwise_items(config, K)
    longer_wrong = sum(is_longer for *_, is_longer in pairs)
    assert abs(longer_wrong - K / 2) <= 1
    assert all((len(w[-1]) > len(r[-1])) == is_longer and len(r[-1]) != len(w[-1]) for _, r, w, is_longer in pairs)
    for _, right, wrong, _ in pairs:
        assert right[:-1] == wrong[:-1] and right[-1] != wrong[-1]
        assert 3 <= len(right) <= PAIRWISE_LENGTH
    dev = {item.id: item for item in read_dev(DEV_FILE)}
    for probe_id, right, wrong, _ in pairs:
        item = dev[probe_id.split("/")[0]]
        assert norm(right[-1]) == norm(item.right) and norm(wrong[-1]) in map(norm, item.wrong)
        assert [norm(u) for u in right[:-1]] == [norm(u) for u in item.utterances[-len(right) + 1:]]
    arena = stages["botchat_arena"].probes
    assert Counter(p.variant for p in arena) == {"right_first": K, "wrong_first": K}
    assert all(a.content == b.content[::-1] for a, b in zip(arena[::2], arena[1::2]))


def test_the_marks_vary_in_kind_index_and_wording_and_match_the_length_they_replace(config):
    _, marked = hard_unieval_items(config, K, config.botchat.n_max)
    kinds = Counter(mark for _, _, _, mark, _ in marked)
    assert len(kinds) >= 8 and max(kinds.values()) <= -(-K // 8), kinds
    assert len({index for _, _, index, _, _ in marked}) >= 4
    # no length cue to the index: the marked turn ranks by length among 3..len about as chance has it (the marks fit
    # short turns and long ones), and is the longest of them not much more often than chance
    ranks = [sorted(range(3, len(twin) + 1), key=lambda i: -len(twin[i - 1])).index(index) / (len(twin) - 3)
             for _, _, index, _, twin in marked]
    assert 0.35 <= statistics.mean(ranks) <= 0.65, statistics.mean(ranks)
    longest = sum(rank == 0 for rank in ranks)
    chance = sum(1 / (len(twin) - 2) for *_, twin in marked)
    assert longest <= 2 * chance, (longest, chance)
    for _, dialogue, index, mark, twin in marked:
        assert 3 <= index <= len(dialogue) == len(twin)
        assert [u for i, u in enumerate(twin, 1) if i != index] == [u for i, u in enumerate(dialogue, 1) if i != index]
        before, after = dialogue[index - 1], twin[index - 1]
        assert abs(len(after) - len(before)) <= LENGTH_MATCH * len(before), (before, after)
        assert AI_LINE not in after and after != before
        # the artefact is blended with the turn's own words
        assert words(after) & words(before)
        fixed = [part for form in MARKS[mark] for part in re.split(r"\{w\}|\{list\}", form)]
        assert any(part.strip() and part.strip()[:12] in after for part in fixed), (mark, after)
    # no string finds more than one kind's share of them: each artefact's own words are in few marked lines
    lines = [twin[index - 1] for _, _, index, _, twin in marked]
    for mark, forms in MARKS.items():
        for part in filter(None, (p.strip() for form in forms for p in re.split(r"\{w\}|\{list\}", form))):
            assert sum(part in line for line in lines) <= -(-K // 8), part


def test_dev_dialogues_are_written_as_the_seeds_are(config):
    assert detokenize("i 'm sorry , i ca n't come . do n't worry ! it 's $ 120 .") == \
        "I'm sorry, I can't come. Don't worry! It's $120."
    groups = dev_items(DEV_FILE, DATASET)
    tokenised = re.compile(r" [,.?!]( |$)| n't\b| '(s|m|re|ve|ll|d)\b|\bi\b|^[mf] : ")
    for group in groups:
        for item in group:
            for turn in (*item.dialogue, *item.wrong):
                assert not tokenised.search(turn) and not turn[:1].islower(), turn
    human, _ = hard_unieval_items(config, K, config.botchat.n_max)
    assert any("OK" in u or "John" in u for _, d in human for u in d)  # spelled as the seeds spell them


# --- the vendored split and its loader -----------------------------------------------------------------------------

def test_the_vendored_dev_split_is_whole_and_in_order():
    rows = [json.loads(line) for line in DEV_FILE.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == [f"dev_{i}" for i in range(1, 887)]
    assert all(list(r) == ["id", "article", "options", "answers"] for r in rows)
    items = read_dev(DEV_FILE)
    assert len(items) == 886 and all(len(i.wrong) == 3 for i in items)
    assert sum(len(g) for g in conversations(list(items))) == 886


def test_a_bad_row_is_named_by_file_and_line(tmp_path):
    good = {"id": "dev_1", "article": "m : hello . f : hi .", "options": ["m : a ."] * 4, "answers": "A"}
    path = tmp_path / "dev.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "dev_2", "answers": "E"}) + "\n")
    with pytest.raises(DatasetError, match=re.escape(f"{path}:2: row 'dev_2': 'answers' must be one of A, B, C, D")):
        read_dev(path)
    path.write_text(json.dumps({**good, "article": "hello there"}) + "\n")
    with pytest.raises(DatasetError, match=re.escape(f"{path}:1: row 'dev_1': 'article' must be a string starting")):
        read_dev(path)
    path.write_text(json.dumps(good) + "\n")
    (item,) = read_dev(path)
    assert (item.id, item.utterances, item.right, item.wrong) == ("dev_1", ("Hello.", "Hi."), "A.", ("A.",) * 3)
