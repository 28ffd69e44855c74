"""BotChat's known-answer probes (judge_checks/probe_stage.py), built from human MuTual-Test dialogues, so the
right answer is known by construction:

- UniEval: the human dialogue (right: no AI) and its twin with one utterance, at a known index k >= 3 (after the
  seed), replaced by an AI's self-identification (``AI_SELF_IDENTIFICATION``, a line no human in a chat says; right:
  AI found; ``index_right``: found at k);
- Arena and GTEval: the human dialogue against its AI-marked twin, in both orders (right: the human one wins);
  ``Probe.longer`` records which side is the longer (mostly the twin), though these items are not length-controlled.

The dialogues are the last ``k`` of the dataset with at least 6 utterances (so a limited run rarely evaluates them
too), each cut to at most the protocol's judged length; k is drawn from the dialogue's id, so the probes are the same
every night.

Those are the ``basic`` items (``judge_checks.items``), which a grossly broken judge fails but a cheap heuristic passes
("AI" when a line starts with "As an AI language model", the longer side wins). The ``hard`` items are drawn from
MuTual's *dev* split only (``mutual_dev.py``; BotChat's seeds are MuTual-Test dialogues, so no model ever continues a
dev dialogue, and dev conversations that repeat a seed's lines are left out): held out by construction. Each item is
a different dev conversation (MuTual cuts one conversation into several items; one of them at most is used per
protocol), so the ``k`` items of a protocol are independent:

- Arena (kind ``right_vs_wrong``): a dev context continued with its right response against the same context
  continued with one of MuTual's wrong options (a human-written turn that does not follow), in both orders
  (``right_first`` / ``wrong_first``); right: the judge finds the wrong continuation AI involved, so the right one
  wins. Each conversation is its last ``PAIRWISE_LENGTH`` turns, ending with the response (at least 2 before it).
  Length-controlled: the wrong option is chosen (from the item id) so that over the ``k`` items the longer side is
  the wrong one as often as the right one (within one), so "the longer one wins" is right about half the time; each
  cell records which side is the longer (``Probe.longer``), so the ``judge_verbosity`` view can tell a judge that
  prefers the longer side (``judge_checks``' ``verbosity`` check). Not for GTEval: its prompt says one of the two
  conversations contains AI, and both of these are human-written, so their known answer does not hold there.
- GTEval (kind ``human_vs_marked``): a human dev dialogue (its first ``PAIRWISE_LENGTH`` turns) against its AI-marked
  twin, the twin marked as UniEval's are (``MARKS``, length-matched, at an index 3..len), in both orders
  (``human_first`` / ``marked_first``); right, as GTEval grades its own cells (``arena.winner_for``): the judge names
  the twin the AI one, so the human one wins, which is what GTEval's prompt asks (exactly one contains AI).
  Length-controlled: the mark is chosen on the side (longer or shorter than the turn it replaces) that keeps the
  twin the longer side in half the items (within one).
- UniEval: ``k`` human dev dialogues (kind ``human``; right: no AI) and ``k`` others (kind ``ai_marked``) with one
  turn, at an index 3..len drawn from the item id, replaced by an assistant's artefact (``MARKS``: eleven kinds, from
  self-identification in several wordings to "I hope this helps!", a markdown list, a knowledge-cutoff remark, taken
  in turn) blended with the replaced turn's own words to within ``LENGTH_MATCH`` of its length (the variant names
  the kind); right: AI found, ``index_right``: at that index. No single string and no length cue finds them all."""

from __future__ import annotations

import re
from collections import Counter

from dialogbench.botchat import arena, unieval
from dialogbench.botchat.mutual_dev import DEV_FILE, DevItem, dev_items
from dialogbench.botchat.seeds import read_seeds
from dialogbench.judge_checks.check import settings_of
from dialogbench.judge_checks.probe_stage import AI_SELF_IDENTIFICATION, Probe, ProbeStage, longer_side
from dialogbench.cells.keys import fingerprint

MIN_UTTERANCES = 6
PAIRWISE_LENGTH = 8  # utterances of each conversation an Arena / GTEval probe shows (the demo's and paper's N = 8)


def human_dialogues(config, k: int, length: int) -> list[tuple[str, tuple[str, ...], int]]:
    """(seed id, the human dialogue cut to ``length``, the index 3..len of its AI-marked utterance) of the last
    ``k`` dialogues with at least ``MIN_UTTERANCES``."""
    seeds = [r for r in read_seeds(config.botchat.dataset).to_pylist() if r["n_utterances"] >= MIN_UTTERANCES]
    found = []
    for row in seeds[-k:] if k else []:
        dialogue = tuple(row["dialogue"][:length])
        index = 3 + int(fingerprint("probe-index", row["seed_id"])[:8], 16) % (len(dialogue) - 2)
        found.append((row["seed_id"], dialogue, index))
    return found


def marked(dialogue: tuple[str, ...], index: int) -> tuple[str, ...]:
    return tuple(AI_SELF_IDENTIFICATION if i == index else u for i, u in enumerate(dialogue, 1))


def pairwise_grade(first: str):
    """The grade of a pairwise probe, as the Arena and GTEval stages read their own cells
    (``arena.parse_arena_verdict``, then ``arena.winner_for``: the side not named AI involved wins): right when the
    side that should win does, which is ``model_a`` (shown first) in the probe's ``first`` variant, ``model_b`` in the
    other."""
    def grade(probe: Probe, text: str) -> dict:
        verdict = arena.parse_arena_verdict(text)
        wins = "model_a" if probe.variant == first else "model_b"
        return {"parsed": verdict.parsed, "answer": verdict.verdict,
                "correct": verdict.parsed and arena.winner_for(verdict.verdict) == wins}
    return grade


def unieval_probes(config, k: int, judge) -> ProbeStage:
    probes = []
    for seed_id, dialogue, index in human_dialogues(config, k, config.botchat.n_max):
        probes += [Probe(f"{seed_id}/human", "human", "human", "no AI", dialogue),
                   Probe(f"{seed_id}/ai@{index}", "ai_marked", "ai_marked", f"AI at {index}", marked(dialogue, index))]
    return unieval_stage(config, judge, probes)


def unieval_stage(config, judge, probes: list[Probe]) -> ProbeStage:
    """UniEval's probe stage: ``human`` probes are right on No, ``ai_marked`` ones (``expected``: "AI at <index>")
    on Yes, and ``index_right`` at that index."""
    examples = unieval.load_examples(config.botchat.unieval_examples)

    def grade(probe: Probe, text: str) -> dict:
        verdict = unieval.parse_verdict(text, n_utterances=len(probe.content))
        answer = None if not verdict.parsed else ("No" if verdict.choice == "No" else f"Yes {verdict.index}")
        if probe.kind == "human":
            return {"parsed": verdict.parsed, "answer": answer, "correct": verdict.parsed and verdict.choice == "No"}
        index = int(probe.expected.rsplit(" ", 1)[1])
        return {"parsed": verdict.parsed, "answer": answer, "correct": verdict.parsed and verdict.choice == "Yes",
                "index_right": verdict.parsed and verdict.index == index}

    return ProbeStage(protocol="botchat_unieval", version=unieval.protocol_version(examples), judge=judge,
                      probes=probes, prompt=lambda p: unieval.build_prompt(p.content, examples),
                      output_format=lambda p: unieval.output_format(n_utterances=len(p.content),
                                                                    max_tokens=judge.max_tokens),
                      grade=grade)


def pairwise_probes(config, k: int, judge, kind: arena.Kind) -> ProbeStage:
    probes = []
    for seed_id, dialogue, index in human_dialogues(config, k, PAIRWISE_LENGTH):
        twin = marked(dialogue, index)
        longer = longer_side(dialogue, twin)  # mostly the twin: the AI line is longer than most chat turns
        probes += [Probe(f"{seed_id}/ai@{index}/human_first", "human_vs_ai", "human_first", "the human one wins",
                         (dialogue, twin), longer=longer),
                   Probe(f"{seed_id}/ai@{index}/ai_first", "human_vs_ai", "ai_first", "the human one wins",
                         (twin, dialogue), longer=longer)]
    return pairwise_stage(judge, kind, probes, pairwise_grade("human_first"))


def pairwise_stage(judge, kind: arena.Kind, probes: list[Probe], grade) -> ProbeStage:
    """An Arena or GTEval probe stage: the protocol's own prompt and format, ``grade`` (``pairwise_grade``)."""
    return ProbeStage(protocol=f"botchat_{kind}", version=arena.protocol_version(kind), judge=judge, probes=probes,
                      prompt=lambda p: arena.build_prompt(*p.content, kind=kind),
                      output_format=lambda p: arena.output_format(max_tokens=judge.max_tokens), grade=grade)


# --- hard items (judge_checks.items: hard) -------------------------------------------------------------------------

LENGTH_MATCH = 0.2  # a marked turn's length is within this share of the turn it replaces (characters)
# An assistant's artefacts, each in a short, a middle and a long form; "{w}" takes the replaced turn's first words (as
# many as keep the length matched), "{list}" the same words as an inline markdown list. None holds "As an AI language
# model".
MARKS: dict[str, tuple[str, ...]] = {
    "language_model": ("As an LLM, {w}", "I'm just a language model, but {w}",
                       "As a large language model developed to assist users, {w}"),
    "ai_assistant": ("As an AI, {w}", "As an AI assistant, {w}",
                     "I'm an AI assistant and can't share views of my own, but {w}"),
    "no_experiences": ("I don't have feelings, but {w}", "I don't have personal experiences, but {w}",
                       "I don't have personal experiences or feelings of my own, but in general {w}"),
    "markdown_list": ("**Points:** {list}", "Here are the key points: {list}", "**Key points to consider:** {list}"),
    "sure_heres": ("Sure! Here it is: {w}", "Sure! Here's what I think: {w}",
                   "Sure! Here's a quick summary of the situation: {w}"),
    "hope_this_helps": ("{w} Hope this helps!", "{w} I hope this helps!",
                        "{w} I hope this helps! Let me know if you have any other questions."),
    "disclaimer": ("{w} (Not professional advice.)", "{w} (Note: this is not professional advice.)",
                   "{w} Please note that this is general information only and should not be taken as professional "
                   "advice."),
    "knowledge_cutoff": ("As of my last update, {w}", "As of my last knowledge update, {w}",
                         "As of my last knowledge update, which may not reflect the latest changes, {w}"),
    "no_browsing": ("I can't browse, but {w}", "I can't browse the internet, but {w}",
                    "I'm unable to access real-time information or browse the web, but {w}"),
    "great_question": ("Great question! {w}", "That's a great question! {w}",
                       "That's a great question! Let me break it down for you. {w}"),
    "happy_to_help": ("Happy to help! {w}", "Certainly! I'd be happy to help. {w}",
                      "Certainly! As a helpful assistant, I'd be happy to help with that. {w}"),
}
_KEEPS_CASE = re.compile(r"^(?:I\b|I'|[A-Z]{2})")  # "I", "I'm", "OK", "TV": never lower-cased


def _words(words: list[str], *, ends: bool) -> str:
    """Some of a turn's words as a phrase: trailing commas dropped, a full stop added where it ends a sentence
    (``ends``) and has none."""
    text = " ".join(words).rstrip(",;:- ")
    return text + "." if ends and text and text[-1] not in ".?!\"" else text


def _fill(form: str, words: list[str]) -> str:
    if "{list}" in form:
        half = (len(words) + 1) // 2
        items = [_words(part, ends=False) for part in (words[:half], words[half:]) if part]
        return form.replace("{list}", " ".join(f"- {i[:1].upper()}{i[1:]}" for i in items))
    before, after = form.split("{w}")
    text = _words(words, ends=True)
    if before and not re.search(r"[.?!:]\s*$", before) and not _KEEPS_CASE.match(text):
        text = text[:1].lower() + text[1:]  # the words go on the artefact's sentence
    return f"{before}{text}{after}"


def mark_turn(turn: str, mark: str, *, longer: bool | None = None) -> str | None:
    """``turn`` replaced by the artefact ``mark`` (a key of MARKS) blended with the turn's first words, its length
    within LENGTH_MATCH of the turn's: whole sentences of the turn where some fit, else cut at a word; the closest
    length; the most words. None where no blend is that close (a turn too short for any form of the mark). With
    ``longer`` (True or False) only blends longer (shorter) than the turn count."""
    words, fits = turn.split(), []
    for form in MARKS[mark]:
        for n in range(min(2, len(words)), len(words) + 1):  # two words of the turn at least
            text = _fill(form, words[:n])
            gap = abs(len(text) - len(turn))
            if gap <= LENGTH_MATCH * len(turn) and (longer is None or len(text) != len(turn)
                                                    and (len(text) > len(turn)) == longer):
                fits.append((n < len(words) and words[n - 1][-1] not in ".?!", gap, -n, text))
    return min(fits)[-1] if fits else None


def mark_dialogue(item_id: str, dialogue: tuple[str, ...], used: Counter, made: int, *,
                  longer: bool | None = None) -> tuple[int, str, tuple[str, ...]] | None:
    """(index, mark, twin): ``dialogue`` with one turn marked (``mark_turn``, ``longer`` as there). The index is
    drawn among 3..len from ``item_id`` (the next one where the turn is too short for any mark); the mark is the least
    ``used`` so far that fits the turn (in turn among those used as often, from the ``made``-th). None where no turn
    takes a mark."""
    names = sorted(MARKS, key=lambda m: (used[m], (list(MARKS).index(m) - made) % len(MARKS)))
    indices = list(range(3, len(dialogue) + 1))
    start = _draw("botchat-hard-index", item_id, len(indices)) if indices else 0
    found = next(((index, mark, text) for index in indices[start:] + indices[:start] for mark in names
                  if (text := mark_turn(dialogue[index - 1], mark, longer=longer))), None)
    if found is None:
        return None
    index, mark, text = found
    return index, mark, tuple(text if i == index else u for i, u in enumerate(dialogue, 1))


def _draw(tag: str, item_id: str, n: int) -> int:
    """A number in 0..n-1 drawn from the item id (the same every night)."""
    return int(fingerprint(tag, item_id)[:8], 16) % n


def _conversations(config, tag: str) -> list[list[DevItem]]:
    """The held-out dev conversations, in an order drawn from their first item's id."""
    return sorted(dev_items(DEV_FILE, config.botchat.dataset), key=lambda group: fingerprint(tag, group[0].id))


def hard_unieval_items(config, k: int, length: int) -> tuple[list, list]:
    """(human, marked): ``k`` human dev dialogues (id, dialogue), and ``k`` AI-marked ones from other dev
    conversations (id, dialogue, index, mark, marked dialogue), each conversation's longest item with at least
    ``MIN_UTTERANCES`` turns, cut to ``length``. A conversation is a human or a marked one as its id draws. The index
    is drawn among 3..len (the next one where the turn is too short for any mark); the mark is the least used so far
    that fits the turn (in turn among those used as often)."""
    human, marked = [], []
    for group in _conversations(config, "botchat-hard-unieval") if k else []:
        item = max(group, key=lambda i: len(i.dialogue))
        if len(item.dialogue) < MIN_UTTERANCES:
            continue
        dialogue = item.dialogue[:length]
        if _draw("botchat-hard-role", item.id, 2) == 0:
            if len(human) < k:
                human.append((item.id, dialogue))
        elif len(marked) < k:
            found = mark_dialogue(item.id, dialogue, Counter(mark for *_, mark, _ in marked), len(marked))
            if found:
                marked.append((item.id, dialogue, *found))
        if len(human) == len(marked) == k:
            break
    return human, marked


def hard_pairwise_items(config, k: int) -> list[tuple[str, tuple[str, ...], tuple[str, ...], bool]]:
    """``k`` (probe id, right conversation, wrong conversation, wrong is longer) from different dev conversations:
    an item's context (its last PAIRWISE_LENGTH - 1 turns, at least 2) continued with its right response and with one
    wrong option, of another length. The side the longer one is on alternates as the counts need it (drawn from the
    item id when they are even), the option drawn among those on that side."""
    found, longer = [], 0
    for group in _conversations(config, "botchat-hard-pairwise") if k else []:
        if len(found) == k:
            break
        shorter = len(found) - longer
        if longer != shorter:
            sides = [longer < shorter]
        else:
            first = _draw("botchat-hard-side", group[0].id, 2) == 0
            sides = [first, not first]
        choice = None
        for want_longer in sides:
            for item in sorted(group, key=lambda i: fingerprint("botchat-hard-item", i.id)):
                if len(item.utterances) < 2:
                    continue
                options = [j for j, w in enumerate(item.wrong)
                           if len(w) != len(item.right) and (len(w) > len(item.right)) == want_longer]
                if options:
                    choice = item, options[_draw("botchat-hard-option", item.id, len(options))], want_longer
                    break
            if choice:
                break
        if choice:
            item, j, is_longer = choice
            context = item.utterances[-(PAIRWISE_LENGTH - 1):]
            found.append((f"{item.id}/right_vs_wrong{j + 1}", (*context, item.right), (*context, item.wrong[j]),
                          is_longer))
            longer += is_longer
    return found


def hard_gteval_items(config, k: int) -> list[tuple[str, tuple[str, ...], int, str, tuple[str, ...]]]:
    """``k`` (id, human dialogue, index, mark, marked twin) from different dev conversations (in an order of their
    own), each conversation's longest item with at least ``MIN_UTTERANCES`` turns, cut to ``PAIRWISE_LENGTH``, its
    twin marked as UniEval's are (``mark_dialogue``) on the length side the counts need: the twin longer when it has
    been so less often than shorter, shorter when more often, and when as often the side drawn from the item id, the
    other if none fits. A conversation whose turns take no mark on a side it may take is passed over."""
    found, longer = [], 0
    for group in _conversations(config, "botchat-hard-gteval") if k else []:
        if len(found) == k:
            break
        item = max(group, key=lambda i: len(i.dialogue))
        if len(item.dialogue) < MIN_UTTERANCES:
            continue
        dialogue, shorter = item.dialogue[:PAIRWISE_LENGTH], len(found) - longer
        if longer != shorter:
            sides = [longer < shorter]
        else:
            first = _draw("botchat-hard-side", item.id, 2) == 0
            sides = [first, not first]
        used = Counter(mark for *_, mark, _ in found)
        marking = next(((side, m) for side in sides if (m := mark_dialogue(item.id, dialogue, used, len(found),
                                                                           longer=side))), None)
        if marking:
            side, (index, mark, twin) = marking
            found.append((item.id, dialogue, index, mark, twin))
            longer += side
    return found


def hard_unieval_probes(config, k: int, judge) -> ProbeStage:
    human, marked = hard_unieval_items(config, k, config.botchat.n_max)
    probes = [Probe(f"{item_id}/human", "human", "human", "no AI", dialogue) for item_id, dialogue in human]
    probes += [Probe(f"{item_id}/{mark}@{index}", "ai_marked", mark, f"AI at {index}", twin)
               for item_id, _, index, mark, twin in marked]
    return unieval_stage(config, judge, probes)


def hard_pairwise_probes(config, k: int, judge, kind: arena.Kind) -> ProbeStage:
    probes = []
    for probe_id, right, wrong, wrong_is_longer in hard_pairwise_items(config, k):
        longer = "other" if wrong_is_longer else "expected"  # never as long (the same context, responses that differ)
        probes += [Probe(f"{probe_id}/right_first", "right_vs_wrong", "right_first", "the right continuation wins",
                         (right, wrong), longer=longer),
                   Probe(f"{probe_id}/wrong_first", "right_vs_wrong", "wrong_first", "the right continuation wins",
                         (wrong, right), longer=longer)]
    return pairwise_stage(judge, kind, probes, pairwise_grade("right_first"))


def hard_gteval_probes(config, k: int, judge) -> ProbeStage:
    """GTEval's hard probes (``hard_gteval_items``): the human dialogue against its marked twin, both orders."""
    probes = []
    for item_id, human, index, mark, twin in hard_gteval_items(config, k):
        longer = longer_side(human, twin)  # never None: the marked turn is never as long as the one it replaces
        probes += [Probe(f"{item_id}/{mark}@{index}/human_first", "human_vs_marked", "human_first",
                         "the human one wins", (human, twin), longer=longer),
                   Probe(f"{item_id}/{mark}@{index}/marked_first", "human_vs_marked", "marked_first",
                         "the human one wins", (twin, human), longer=longer)]
    return pairwise_stage(judge, "gteval", probes, pairwise_grade("human_first"))


def probes(config, k: int) -> list[ProbeStage]:
    """The probe stages of the BotChat protocols the config runs, ``k`` dialogues each (``judge_checks.items``:
    the basic items or the hard ones), for its judge and then each agreement judge (``JudgeStage.agreement``)."""
    settings = config.botchat
    return [*judge_probes(config, k, config.model(settings.judge)),
            *(stage.agreement() for name in settings.agreement_judges
              for stage in judge_probes(config, k, config.model(name)))]


def judge_probes(config, k: int, judge) -> list[ProbeStage]:
    """``judge``'s probe stages of the BotChat protocols the config runs."""
    settings = config.botchat
    if settings_of(config).items == "hard":
        return [hard_unieval_probes(config, k, judge),
                *([hard_pairwise_probes(config, k, judge, "arena")] if settings.arena.enabled else []),
                *([hard_gteval_probes(config, k, judge)] if settings.gteval.enabled else [])]
    return [unieval_probes(config, k, judge),
            *([pairwise_probes(config, k, judge, "arena")] if settings.arena.enabled else []),
            *([pairwise_probes(config, k, judge, "gteval")] if settings.gteval.enabled else [])]
