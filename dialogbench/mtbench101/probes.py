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
  for MR and GR), its length within ±25% of the golden reply's (``LENGTH_BAND``) and never the same. Never the text
  of a reply of the item's own dialogue: an earlier one stands in the history the judge is shown, and spotting a
  copy would tell it unread (so the earlier replies of the dialogue, the closest in topic there are, are no wrong
  replies; SI's "please provide the sentence" recurs across dialogues and is left out where the history holds it).
  No item on the first turn of separate input (``ASKS_FIRST``): its reply only asks for the input, as other
  dialogues' do in words that may fit.
  The cues are balanced on every run of items a night can ask, so that cheap heuristics stay near chance. Each
  candidate has a cue vector (``CUES``): whether it is longer than the golden reply, and for each of ``closeness``'s
  five measures (words shared, content words shared, Jaccard index, words shared weighted by inverse document
  frequency, TF-IDF cosine), against the turn's user message and against the whole dialogue shown (earlier turns
  and the user message), whether it is ahead of the golden reply, behind it or level. Every held-out dialogue gives
  one item (the wrong reply close to the dialogue or far from it, as the balance needs): ``_balance`` picks each
  item's cue vector over the whole pool so that every cue has the wrong reply ahead in as near half of the items as
  the candidates allow and behind in the rest (the length exactly half), and ``_interleave`` orders the pool, the
  tasks round-robin, so that every run of items keeps the pool's balance: a rotation window
  (``judge_checks/rotation.py``: ``probes`` items in a row of the pool, round its end) is off it by a few items. So
  "longer is better", "more words in common with the dialogue (or the question) is better" and their opposites are
  each right on about half of any night's items. On the default reserve's 130 items, over all 130 windows of 54:
  longer / shorter is better 46–54% each; more / fewer words shared with the dialogue 41–57% / 39–52% (level pairs
  count as wrong both ways); the TF-IDF cosine with the dialogue, the measure the candidates balance least (46 of
  the 130 wrong replies are ahead of the golden one: few replies of other dialogues are), 59–70% / 30–41%; every
  heuristic of tests/mtbench101/test_hard_probes.py at most 70%, so none passes the 80% gate on any night (before:
  the close/far split, filled for 25 of the 130 items, let the dialogue-overlap judges reach 94% of a later
  window). Within a cue vector the wrong reply is the one ``keys.fingerprint`` of the item's id picks among the
  candidates with it of the item's last judged turn that has one, in file order. The items are the same for the same
  dataset, and the first ``n`` items of ``k`` are the items of ``n`` (the pool's first ``n``).
  Limits: the right answer is known by construction (the wrong reply answers another question), yet a close reply
  may now and then read as an acceptable answer (advice for anxiety given to a question about stress); and for MR and
  GR the protocol shows the golden reply itself in the reference (at the end of the golden dialogue, or alone:
  ``mtbench101.reference``), so a judge rating overlap with the reference's last reply is right on every MR and GR
  item.
  Held out: the items come from each task's reserved dialogues (``selection.reserved``: its last
  ``mtbench101.reserve_for_probes`` in file order, default 10), its last one first, and no run evaluates those
  (``selection.selected_dialogues`` leaves them out, whatever the limit): 130 dialogues, a pool of 130 items, ten a
  task, the first 54 (``judge_checks.probes``' default) four or five a task; ``judge_checks.pool`` beyond that
  rotates through the 130 (``judge_checks/rotation.py``). The wrong replies may come from any dialogue of the task,
  evaluated ones too: a golden reply shown as an answer to another question. With ``reserve_for_probes: 0`` every
  dialogue is evaluated and the items come from each task's dialogues from its last one backwards, never from the
  first ``HOLD_FIRST`` (all that a run with ``mtbench101.limit`` up to ``HOLD_FIRST`` evaluates), so a run without a
  limit evaluates them too: the probes then ask a different question of evaluated dialogues (is the golden reply
  rated above a wrong one, not how good a model's answer is). A task that runs out of dialogues gives fewer items.
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
from typing import Iterable, NamedTuple

from dialogbench.judge_checks.probe_stage import Probe, ProbeStage, longer_side
from dialogbench.cells.keys import fingerprint
from dialogbench.mtbench101 import prompts
from dialogbench.mtbench101.config import agreement_judges, judge as mtbench101_judge
from dialogbench.mtbench101.dataset import Dialogue, read_dialogues
from dialogbench.mtbench101.judge_stage import judge_sampling, task_prompt_version
from dialogbench.mtbench101.rating import output_format, parse_rating
from dialogbench.mtbench101.scoring import is_judged
from dialogbench.mtbench101.selection import reserved
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
MEASURES = ("words shared", "content words shared", "Jaccard index", "IDF-weighted words shared", "TF-IDF cosine")
# the cues a cheap judge could rate by, each balanced over the pool: the length, then each of ``closeness``'s
# measures against the turn's user message and against the whole dialogue shown (earlier turns and the user message)
CUES = ("longer", *(f"{m}, {target}" for target in ("question", "dialogue") for m in MEASURES))
CUE_WEIGHTS = (4, *(1,) * 2 * len(MEASURES))  # the length weighs most: the verbosity check wants it half and half


def words(text: str) -> frozenset[str]:
    """The lowercased alphanumeric words of ``text``."""
    return frozenset(_WORD.findall(text.lower()))


def content_words(text: str) -> frozenset[str]:
    """``words`` less ``STOPWORDS``."""
    return words(text) - STOPWORDS


class Bag(NamedTuple):
    """A text as the topic cues read it: its ``words``, and its TF-IDF vector (each word's count times its ``idf``)
    with the vector's norm."""

    words: frozenset[str]
    weights: dict[str, float]
    norm: float


def bag(text: str, idf: dict[str, float]) -> Bag:
    """``text`` as a ``Bag``, its words in the order they first come (what ``closeness`` sums in)."""
    counts = Counter(_WORD.findall(text.lower()))
    weights = {w: n * idf.get(w, 0.0) for w, n in counts.items()}
    return Bag(frozenset(counts), weights, math.sqrt(math.fsum(v * v for v in weights.values())))


def closeness(reply: Bag, target: Bag, idf: dict[str, float]) -> tuple[float, ...]:
    """How close a reply is to a text by the topic cues' five measures (``MEASURES``): words shared, content words
    shared, the Jaccard index of their words, the shared words weighted by ``idf`` (rare words count more: a shared
    topic) and the cosine of their TF-IDF vectors. Summed in the reply's word order, not a set's: the same floats
    whatever the process's hash seed."""
    shared = content = 0
    rare = dot = 0.0
    for w, weight in reply.weights.items():
        if w in target.words:
            shared, content = shared + 1, content + (w not in STOPWORDS)
            rare, dot = rare + idf.get(w, 0.0), dot + weight * target.weights[w]
    union = len(reply.words) + len(target.words) - shared
    return (shared, content, shared / union if union else 0.0, rare,
            dot / (reply.norm * target.norm) if reply.norm and target.norm else 0.0)


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
    found = (hard_probes(dialogues, k, reserve=settings.reserve_for_probes) if settings_of(config).items == "hard"
             else basic_probes(dialogues, k))

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
    """The basic items: the first judged turn of each task's first dialogue (evaluated by every run, whatever
    ``reserve_for_probes``: they catch a grossly broken judge and no more), golden against ``USELESS_ANSWER``."""
    first = {}
    for dialogue in dialogues:
        first.setdefault(dialogue.task, dialogue)
    found = []
    for task in [t for t in TASK_CODES if t in first][:k]:
        dialogue = first[task]
        turn = next(i for i in range(len(dialogue.turns)) if is_judged(task=task, turn=i))
        found.extend(_pair(dialogue, turn, "golden_vs_useless", "useless", USELESS_ANSWER))
    return found


def hard_probes(dialogues: Iterable[Dialogue], k: int, *, reserve: int) -> list[Probe]:
    return [p for dialogue, turn, wrong in hard_items(dialogues, k, reserve=reserve)
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


def held_out(dialogues: Iterable[Dialogue], *, reserve: int) -> dict[str, list[Dialogue]]:
    """Each task's held-out dialogues, in the order the items take them, its last one first: its ``reserve`` last
    (``selection.reserved``, which no run evaluates); with ``reserve`` 0, down to (not into) its first
    ``HOLD_FIRST``."""
    if reserve:
        return {task: list(reversed(found)) for task, found in reserved(dialogues, reserve=reserve).items()}
    by_task: dict[str, list[Dialogue]] = defaultdict(list)
    for dialogue in dialogues:
        by_task[dialogue.task].append(dialogue)
    return {task: list(reversed(found[HOLD_FIRST:])) for task, found in by_task.items()}


def hard_items(dialogues: Iterable[Dialogue], k: int, *, reserve: int) -> list[tuple[Dialogue, int, str]]:
    """The first ``k`` items (dialogue, judged turn, wrong reply) of the held-out dialogues' pool (``_pool``, built as
    the module docstring says), so that the items of ``n`` are the first ``n`` of ``k`` and a rotation window
    (``judge_checks/rotation.py``: ``k`` in a row of the pool, round its end) meets the cues as balanced as the
    pool."""
    return list(_pool(tuple(dialogues), reserve)[:k])


@functools.lru_cache(maxsize=8)  # the probes are built by every plan of a run; the dialogues are read once a version
def _pool(dialogues: tuple[Dialogue, ...], reserve: int) -> tuple[tuple[Dialogue, int, str], ...]:
    """One item for each held-out dialogue (``held_out``) with a candidate: its wrong reply chosen by ``_balance``
    over the whole pool, the items put in order by ``_interleave``."""
    pools, candidates = held_out(dialogues, reserve=reserve), _Candidates(dialogues)
    found = [(dialogue, options) for dialogue in _round_robin([pools[t] for t in TASK_CODES if pools.get(t)])
             if (options := candidates.options(dialogue))]
    chosen = _balance([options for _, options in found])
    by_task: dict[str, list] = defaultdict(list)
    for (dialogue, options), cues in zip(found, chosen):
        by_task[dialogue.task].append(((dialogue, *options[cues]), cues))
    return tuple(_interleave([by_task[t] for t in TASK_CODES if by_task.get(t)]))


def _round_robin(lists: list[list]) -> list:
    """The lists' members one of each in turn (the first of each, then the second of each, ...)."""
    return [found[n] for n in range(max(map(len, lists), default=0)) for found in lists if n < len(found)]


def _balance(options: list[dict[tuple[int, ...], tuple[int, str]]], rounds: int = 20) -> list[tuple[int, ...]]:
    """One cue vector of each item's ``options`` (``_Candidates.options``) such that every cue (``CUES``) has the
    wrong reply ahead in as near half of the items as it can and behind in the other half: the choices that minimise
    the sum over the cues of ``CUE_WEIGHTS`` times (items ahead − half)² + (items behind − half)², a tie counting
    neither way (so a tie costs: it leaves both counts short). Found by coordinate descent (each item in turn takes
    its best option given the others', until none changes or after ``rounds``), in integers, the first option on a
    tie: the same choices on every machine."""
    n = len(options)
    ahead, behind = [0] * len(CUES), [0] * len(CUES)
    chosen: list[tuple[int, ...] | None] = [None] * n

    def count(cues: tuple[int, ...], step: int) -> None:
        for c, side in enumerate(cues):
            if side > 0:
                ahead[c] += step
            elif side < 0:
                behind[c] += step

    for _ in range(rounds):
        changed = False
        for i, found in enumerate(options):
            if chosen[i] is not None:
                count(chosen[i], -1)
            # what one more item ahead (behind) adds to a cue's (count - n / 2)²: 2 * count - n + 1, an integer
            up = [w * (2 * a - n + 1) for w, a in zip(CUE_WEIGHTS, ahead)]
            down = [w * (2 * b - n + 1) for w, b in zip(CUE_WEIGHTS, behind)]
            best = min(found, key=lambda cues: sum(u if s > 0 else d if s < 0 else 0
                                                   for s, u, d in zip(cues, up, down)))
            changed |= best != chosen[i]
            chosen[i] = best
            count(best, 1)
        if not changed:
            break
    return chosen


def _interleave(tasks: list[list[tuple[object, tuple[int, ...]]]]) -> list:
    """The items of each task (item, its cue vector), in an order that keeps every run of them near the pool's own
    balance: the tasks round-robin (``TASK_CODES``' order, a task that has run out skipped), each slot taking the
    task's item that keeps the running counts of the items ahead and of those behind on each cue nearest their
    shares of the pool's counts (the weighted sum of squared distances, the first on a tie). A window of consecutive
    items (round the end too, where the distances are back to nought) is then off the pool's balance by at most
    twice the largest distance."""
    def sides(cues: tuple[int, ...]) -> tuple[int, ...]:
        return (*(s > 0 for s in cues), *(s < 0 for s in cues))

    weights = (*CUE_WEIGHTS, *CUE_WEIGHTS)
    total = sum(map(len, tasks))
    share = [sum(col) for col in zip(*(sides(cues) for items in tasks for _, cues in items))]
    left = [[(item, sides(cues)) for item, cues in items] for items in tasks]
    running, order = [0] * len(share), []
    while any(left):
        for items in left:
            if not items:
                continue
            place = len(order) + 1  # distances times ``total``: integers

            def cost(i: int) -> int:
                return sum(w * ((r + s) * total - t * place) ** 2
                           for w, r, s, t in zip(weights, running, items[i][1], share))

            item, taken = items.pop(min(range(len(items)), key=cost))
            running = [r + s for r, s in zip(running, taken)]
            order.append(item)
    return order


def _similar(one: frozenset[str], other: frozenset[str]) -> bool:
    """Two user messages that may ask the same: the Jaccard index of their ``content_words`` at least ``SIMILAR``."""
    return len(one & other) >= SIMILAR * len(one | other) > 0


def _side(one: float, other: float) -> int:
    return (one > other) - (one < other)


class _Candidates:
    """The wrong-reply candidates of a judged turn, in file order: the golden replies to the turns of the task's
    other dialogues that share no user message with the item's, to a user message not ``_similar`` to the item's,
    within ``LENGTH_BAND`` of the golden reply's length and not of its very length (the golden text itself is not
    one), none the same text as a reply of the item's own dialogue (SI's "please provide the sentence" recurs: a copy
    of the history shown would be spotted unread), each with its cue vector (``CUES``): +1 where the candidate is
    ahead of the golden reply (longer, closer to the user message or to the dialogue shown by a ``closeness``
    measure), −1 where behind, 0 on a tie."""

    def __init__(self, dialogues: tuple[Dialogue, ...]) -> None:
        self.idf = inverse_document_frequency(dialogues)
        replies: dict[str, list] = defaultdict(list)  # task -> (length, file order, dialogue, reply, bag, asked)
        for dialogue in dialogues:
            found = replies[dialogue.task]
            found.extend((len(t.bot), len(found) + i, dialogue, t.bot, bag(t.bot, self.idf), content_words(t.user))
                         for i, t in enumerate(dialogue.turns))
        self.replies = {task: sorted(found, key=lambda r: r[:2]) for task, found in replies.items()}
        self.lengths = {task: [r[0] for r in found] for task, found in self.replies.items()}
        self.asked = {d.id: {t.user for t in d.turns} for d in dialogues}

    def fits(self, dialogue: Dialogue, turn: int) -> list[tuple[str, tuple[int, ...]]]:
        """The candidates of ``dialogue``'s ``turn`` (reply, cue vector), in file order."""
        golden, user = dialogue.turns[turn].bot, dialogue.turns[turn].user
        asked, own = content_words(user), {t.bot for t in dialogue.turns}
        targets = (bag(user, self.idf),
                   bag(" ".join(f"{t.user} {t.bot}" for t in dialogue.turns[:turn]) + " " + user, self.idf))
        said = bag(golden, self.idf)
        bar = [m for target in targets for m in closeness(said, target, self.idf)]
        low, high = (1 - LENGTH_BAND) * len(golden), (1 + LENGTH_BAND) * len(golden)
        lengths, replies = self.lengths[dialogue.task], self.replies[dialogue.task]
        found = []
        for length, order, other, reply, reply_bag, other_asked in replies[bisect_left(lengths, low):
                                                                           bisect_right(lengths, high)]:
            if other is dialogue or length == len(golden) or self.asked[dialogue.id] & self.asked[other.id] \
                    or reply in own or _similar(other_asked, asked):
                continue
            close = [m for target in targets for m in closeness(reply_bag, target, self.idf)]
            found.append((order, reply, (_side(length, len(golden)), *map(_side, close, bar))))
        return [(reply, cues) for _, reply, cues in sorted(found, key=lambda f: f[0])]

    def options(self, dialogue: Dialogue) -> dict[tuple[int, ...], tuple[int, str]]:
        """Each cue vector ``dialogue``'s candidates offer, with one (judged turn, reply) that has it: its last judged
        turn that offers it (none on the first turn of ``ASKS_FIRST``), the candidate the item id's fingerprint picks
        among that turn's with it."""
        found: dict[tuple[int, ...], tuple[int, str]] = {}
        for turn in reversed(range(len(dialogue.turns))):
            if turn == 0 and dialogue.task in ASKS_FIRST or not is_judged(task=dialogue.task, turn=turn):
                continue
            by_cues: dict[tuple[int, ...], list[str]] = defaultdict(list)
            for reply, cues in self.fits(dialogue, turn):
                by_cues[cues].append(reply)
            pick = int(fingerprint(f"{dialogue.task}/{dialogue.id}:{turn}"), 16)
            for cues, fits in by_cues.items():
                found.setdefault(cues, (turn, fits[pick % len(fits)]))
        return found
