"""MT-Bench-101's known-answer probes (dialogbench/judge_checks/probe_stage.py), judged with each task's own prompt
(its rubric, the reference shown as the protocol shows it, in the form ``mtbench101.reference`` names, its rating
parser). ``judge_checks.items`` picks them:

* ``basic``: the first judged turn of the first dialogue of ``k`` tasks (in Table 3's order), judged twice: once with
  the dataset's golden reply as the answer, once with ``USELESS_ANSWER``, a reply that answers nothing. Right: the
  golden answer rates above the useless one. A grossly broken judge fails them; a cheap one passes (any answer over 40
  characters rated 7, the rest 2, is right on every pair).
* ``hard`` (``hard_items``): ``k`` independent items (one judged turn of one dialogue each) over the 13 tasks
  round-robin (Table 3's order), judged twice: with the golden reply (variant ``golden``, expected higher) and with a
  fluent wrong reply (variant ``wrong``, expected lower): the golden reply to a turn of another dialogue of the same
  task that shares no user message with the item's dialogue and whose user message is no near copy of the item's
  (``SIMILAR``), so that it answers another question; never the golden text (also the reference the protocol shows
  for MR and GR), its length within ±25% of the golden reply's and never the same. No earlier reply of the item's own
  dialogue: it stands in the history the judge is shown, and spotting a copy would tell it unread. No item on the
  first turn of separate input (``ASKS_FIRST``): its reply only asks for the input, as other dialogues' do in words
  that may fit.
  Two controls hold over the ``k`` items so that cheap heuristics stay near chance. *Length*: the wrong reply is the
  longer one in half of the items (±1), so "longer is better" and "shorter is better" are each right on about half.
  *Topic*: in about half of the items the wrong reply is *close*, at least as close as the golden reply to the turn's
  user message and to the whole dialogue shown (earlier turns and the user message) by each of ``closeness``'s four
  word measures (words shared, content words shared, Jaccard index, shared words weighted by inverse document
  frequency); in the rest it is not. So "more overlap with the question, the dialogue or the reference is better"
  and their opposites cannot tell the pair apart (a task short of close candidates leaves the balance to the others).
  Within the controls the wrong reply is picked by ``keys.fingerprint`` of the item's id among the candidates in file
  order. The items are the same for the same dataset, and the first ``n`` items of ``k`` are the items of ``n``.
  Limits: the right answer is known by construction (the wrong reply answers another question), yet a close reply
  may now and then read as an acceptable answer (advice for anxiety given to a question about stress); and for MR and
  GR the protocol shows the golden reply itself in the reference (at the end of the golden dialogue, or alone:
  ``mtbench101.reference``), so a judge rating overlap with the reference's last reply is right on every MR and GR
  item.
  Held out: the items come from each task's dialogues from its last one backwards, never from the first
  ``HOLD_FIRST`` of a task in file order, all that a run with ``mtbench101.limit`` up to ``HOLD_FIRST`` evaluates
  (``selection.selected_dialogues``: the first ``limit`` of each task; configs/demo.yaml has ``limit: 1``). A run
  without a limit (configs/nightly.yaml: all 1,388 dialogues) does evaluate them; the probes ask a different question
  of them (is the golden reply rated above a wrong one, not how good a model's answer is). The dataset holds 61 to
  143 such dialogues a task, enough for ``judge_checks.probes`` up to its maximum (500: 39 a task); a task that runs
  out gives fewer items.
Either way a pair is graded in the ``judge_probes`` view (right: the ``expected: higher`` answer rates above the
``lower`` one), as a kind of its own (``golden_vs_useless``, ``golden_vs_wrong``); both cells of a pair record which
reply is the longer (``Probe.longer``), so the ``judge_verbosity`` view can tell a judge that rates the longer reply
higher whatever it says (``judge_checks``' ``verbosity`` check: on the hard items, where each side is the longer in
half of them)."""

from __future__ import annotations

import functools
import math
import re
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from typing import Iterable

from dialogbench.judge_checks.probe_stage import Probe, ProbeStage, longer_side
from dialogbench.cells.keys import fingerprint
from dialogbench.mtbench101 import prompts
from dialogbench.mtbench101.config import agreement_judges, judge as mtbench101_judge
from dialogbench.mtbench101.dataset import Dialogue, read_dialogues
from dialogbench.mtbench101.judge_stage import judge_sampling, task_prompt_version
from dialogbench.mtbench101.rating import output_format, parse_rating
from dialogbench.mtbench101.scoring import is_judged
from dialogbench.mtbench101.tables import JUDGE_STAGE
from dialogbench.mtbench101.taxonomy import TASK_CODES

USELESS_ANSWER = "I don't know."  # answers nothing, whatever the question
PROBE_KEY_TAG = "judge_probe:mtbench101"  # leads every probe's cell key: the stage's name before lake format 5

HARD_KIND = "golden_vs_wrong"
HOLD_FIRST = 10  # the hard items never come from the first 10 dialogues of a task (a run with limit <= 10 uses them)
SIMILAR = 0.4  # a reply to a user message this close to the item's (Jaccard index of content words) may be right
LENGTH_BAND = 0.25  # the wrong reply's length is within ±25% of the golden reply's
ASKS_FIRST = frozenset({"SI"})  # separate input: its first reply asks for the input, as other dialogues' first do
STOPWORDS = frozenset(
    "a an the and or but nor of to in on at for with by from as into over about than then so if is are was were be "
    "been being am it its this that these those there here i you he she we they me him her us them my your his our "
    "their what which who whom whose how why when where do does did can could would should will shall may might must "
    "have has had not no yes just also very too please".split())
_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> frozenset[str]:
    """The lowercased alphanumeric words of ``text``."""
    return frozenset(_WORD.findall(text.lower()))


def content_words(text: str) -> frozenset[str]:
    """``words`` less ``STOPWORDS``."""
    return words(text) - STOPWORDS


def closeness(reply: frozenset[str], target: frozenset[str], idf: dict[str, float]) -> tuple[float, ...]:
    """How close a reply is to a text, both as ``words``, by the topic control's four measures: words shared, content
    words shared, the Jaccard index, the shared words weighted by ``idf`` (rare words count more: a shared topic)."""
    shared = reply & target
    return (len(shared), len(shared - STOPWORDS), len(shared) / len(reply | target) if reply | target else 0.0,
            math.fsum(idf.get(w, 0.0) for w in shared))  # fsum: exact, whatever order the set iterates in


def inverse_document_frequency(dialogues: Iterable[Dialogue]) -> dict[str, float]:
    """Each word's log(dialogues / dialogues holding it), over the dataset's dialogues."""
    dialogues = tuple(dialogues)
    holding = Counter(w for d in dialogues for w in words(" ".join(f"{t.user} {t.bot}" for t in d.turns)))
    return {w: math.log(len(dialogues) / n) for w, n in holding.items()}


def probes(config, k: int) -> list[ProbeStage]:
    """The probe stage of the config's MT-Bench-101 judge, then each agreement judge's (``JudgeStage.agreement``)."""
    return [judge_probes(config, k, mtbench101_judge(config)),
            *(judge_probes(config, k, judge).agreement() for judge in agreement_judges(config))]


def judge_probes(config, k: int, judge) -> ProbeStage:
    """``judge``'s probes of MT-Bench-101, ``k`` items per kind (``judge_checks.items``: basic or hard)."""
    from dialogbench.judge_checks.check import settings_of  # here: judge_checks reads the families

    settings = config.mtbench101
    sampling = judge_sampling(judge, settings.judge_max_tokens)
    dialogues = read_dialogues(settings.dataset)
    found = hard_probes(dialogues, k) if settings_of(config).items == "hard" else basic_probes(dialogues, k)

    def grade(probe: Probe, text: str) -> dict:
        rating = parse_rating(text)
        return {"parsed": rating.parsed, "answer": None if rating.score is None else str(rating.score),
                "score": rating.score}

    version = fingerprint([task_prompt_version(t, settings.reference) for t in TASK_CODES])
    return ProbeStage(protocol=JUDGE_STAGE, key_tag=PROBE_KEY_TAG, version=version, judge=judge, probes=found,
                       sampling=sampling,
                       prompt=lambda p: prompts.judge_messages(
                           task=p.content[0], history_turns=p.content[1], user_message=p.content[2],
                           answer=p.content[3],
                           reference=prompts.reference_text(settings.reference, [*p.content[1], (p.content[2],
                                                                                                 p.content[4])])),
                       output_format=lambda p: output_format(max_tokens=sampling.max_tokens), grade=grade)


def basic_probes(dialogues: Iterable[Dialogue], k: int) -> list[Probe]:
    first = {}
    for dialogue in dialogues:
        first.setdefault(dialogue.task, dialogue)
    found = []
    for task in [t for t in TASK_CODES if t in first][:k]:
        dialogue = first[task]
        turn = next(i for i in range(len(dialogue.turns)) if is_judged(task=task, turn=i))
        found.extend(_pair(dialogue, turn, "golden_vs_useless", "useless", USELESS_ANSWER))
    return found


def hard_probes(dialogues: Iterable[Dialogue], k: int) -> list[Probe]:
    return [p for dialogue, turn, wrong in hard_items(dialogues, k)
            for p in _pair(dialogue, turn, HARD_KIND, "wrong", wrong)]


def _pair(dialogue: Dialogue, turn: int, kind: str, variant: str, answer: str) -> list[Probe]:
    """The pair of one item: the golden reply (expected higher) and ``answer`` (expected lower), the golden reply the
    reference either way (shown for MR and GR); both cells record which reply is the longer (``Probe.longer``)."""
    history = tuple((t.user, t.bot) for t in dialogue.turns[:turn])
    golden, pair = dialogue.turns[turn].bot, f"{dialogue.task}/{dialogue.id}:{turn}"
    longer = longer_side(golden, answer)
    return [Probe(f"{pair}/{v}", kind, v, expected, (dialogue.task, history, dialogue.turns[turn].user, a, golden),
                  pair_id=pair, longer=longer)
            for v, a, expected in (("golden", golden, "higher"), (variant, answer, "lower"))]


def held_out(dialogues: Iterable[Dialogue]) -> dict[str, list[Dialogue]]:
    """Each task's held-out dialogues, in the order the items take them: its last one first, down to (not into) its
    first ``HOLD_FIRST``."""
    by_task: dict[str, list[Dialogue]] = defaultdict(list)
    for dialogue in dialogues:
        by_task[dialogue.task].append(dialogue)
    return {task: list(reversed(found[HOLD_FIRST:])) for task, found in by_task.items()}


def hard_items(dialogues: Iterable[Dialogue], k: int) -> list[tuple[Dialogue, int, str]]:
    """``k`` items (dialogue, judged turn, wrong reply), built as the module docstring says: slot ``n`` goes to the
    ``n``-th task round-robin and wants the wrong reply longer when no more items so far have it longer than shorter
    (close alike); it takes the first unused held-out dialogue of its task (its last judged turn first) with a
    candidate that meets both wants, else one that meets the length want (the topic want waits for a later slot),
    else the other length. A task whose held-out dialogues have nothing left is skipped."""
    return list(_hard_items(tuple(dialogues), k))


@functools.lru_cache(maxsize=8)  # the probes are built by every plan of a run; the dialogues are read once a version
def _hard_items(dialogues: tuple[Dialogue, ...], k: int) -> tuple[tuple[Dialogue, int, str], ...]:
    pools, candidates = held_out(dialogues), _Candidates(dialogues)
    tasks = [t for t in TASK_CODES if pools.get(t)]
    used: set[int | str] = set()
    counts = {"longer": 0, "shorter": 0, "close": 0, "far": 0}
    items: list[tuple[Dialogue, int, str]] = []
    exhausted: set[str] = set()
    n = 0
    while len(items) < k and len(exhausted) < len(tasks):
        task = tasks[n % len(tasks)]
        n += 1
        if task in exhausted:
            continue
        longer, close = counts["longer"] <= counts["shorter"], counts["close"] <= counts["far"]
        found = next((fit for want in ((longer, close), (longer, not close), (not longer, close),
                                       (not longer, not close))
                      for fit in [candidates.first_fit(pools[task], used, *want)] if fit), None)
        if found is None:
            exhausted.add(task)
            continue
        dialogue, turn, wrong, is_longer, is_close = found
        used.add(dialogue.id)
        counts["longer" if is_longer else "shorter"] += 1
        counts["close" if is_close else "far"] += 1
        items.append((dialogue, turn, wrong))
    return tuple(items)


def _similar(one: frozenset[str], other: frozenset[str]) -> bool:
    """Two user messages that may ask the same: the Jaccard index of their ``content_words`` at least ``SIMILAR``."""
    return len(one & other) >= SIMILAR * len(one | other) > 0


class _Candidates:
    """The wrong-reply candidates of a judged turn, by (longer, close), in file order: the golden replies to the
    turns of the task's other dialogues that share no user message with the item's, to a user message not
    ``_similar`` to the item's, within ``LENGTH_BAND`` of the golden reply's length and not of its very length (the
    golden text itself is not one). Close: at least as close as the golden reply to the turn's user message and to
    the dialogue shown, by each of ``closeness``'s measures."""

    def __init__(self, dialogues: tuple[Dialogue, ...]) -> None:
        replies: dict[str, list] = defaultdict(list)  # task -> (length, file order, dialogue, reply, words, asked)
        for dialogue in dialogues:
            found = replies[dialogue.task]
            found.extend((len(t.bot), len(found) + i, dialogue, t.bot, words(t.bot), content_words(t.user))
                         for i, t in enumerate(dialogue.turns))
        self.replies = {task: sorted(found, key=lambda r: r[:2]) for task, found in replies.items()}
        self.lengths = {task: [r[0] for r in found] for task, found in self.replies.items()}
        self.asked = {d.id: {t.user for t in d.turns} for d in dialogues}
        self.idf = inverse_document_frequency(dialogues)
        self.kept: dict[tuple[int | str, int], dict[tuple[bool, bool], list[str]]] = {}

    def of(self, dialogue: Dialogue, turn: int) -> dict[tuple[bool, bool], list[str]]:
        key = (dialogue.id, turn)
        if key not in self.kept:
            golden, user = dialogue.turns[turn].bot, dialogue.turns[turn].user
            question, asked = words(user), content_words(user)
            shown = words(" ".join(f"{t.user} {t.bot}" for t in dialogue.turns[:turn])) | question
            bar = [closeness(words(golden), target, self.idf) for target in (question, shown)]
            low, high = (1 - LENGTH_BAND) * len(golden), (1 + LENGTH_BAND) * len(golden)
            lengths, replies = self.lengths[dialogue.task], self.replies[dialogue.task]
            found: dict[tuple[bool, bool], list[tuple[int, str]]] = defaultdict(list)
            for length, order, other, reply, said, other_asked in replies[bisect_left(lengths, low):
                                                                          bisect_right(lengths, high)]:
                if other is dialogue or length == len(golden) or self.asked[dialogue.id] & self.asked[other.id] \
                        or _similar(other_asked, asked):
                    continue
                close = all(a >= b for target, least in zip((question, shown), bar)
                            for a, b in zip(closeness(said, target, self.idf), least))
                found[(length > len(golden), close)].append((order, reply))
            self.kept[key] = defaultdict(list, {side: [r for _, r in sorted(fits)] for side, fits in found.items()})
        return self.kept[key]

    def first_fit(self, pool: list[Dialogue], used: set, longer: bool, close: bool
                  ) -> tuple[Dialogue, int, str, bool, bool] | None:
        """The first unused dialogue of ``pool`` (its judged turns last first) with a candidate on the ``longer``
        side of the length control and the ``close`` side of the topic control, and the candidate the item id's
        fingerprint picks among them."""
        for dialogue in pool:
            if dialogue.id in used:
                continue
            for turn in reversed(range(len(dialogue.turns))):
                if turn == 0 and dialogue.task in ASKS_FIRST or not is_judged(task=dialogue.task, turn=turn):
                    continue
                if fits := self.of(dialogue, turn)[(longer, close)]:
                    pick = int(fingerprint(f"{dialogue.task}/{dialogue.id}:{turn}"), 16) % len(fits)
                    return dialogue, turn, fits[pick], longer, close
        return None
