"""MT-Bench-101's known-answer probes (dialogbench/judge_checks/probe_stage.py): the first judged turn of the first
dialogue of ``k`` tasks (in Table 3's order), judged twice with the task's own prompt: once with the dataset's golden
reply as the answer, once with ``USELESS_ANSWER``, a reply that answers nothing. Right: the golden answer rates above
the useless one (the pair is graded in the ``judge_probes`` view)."""

from __future__ import annotations

from dialogbench.judge_checks.probe_stage import Probe, ProbeStage
from dialogbench.keys import fingerprint
from dialogbench.mtbench101 import prompts
from dialogbench.mtbench101.config import judge as mtbench101_judge
from dialogbench.mtbench101.dataset import read_dialogues
from dialogbench.mtbench101.judge_stage import judge_sampling, task_prompt_version
from dialogbench.mtbench101.rating import output_format, parse_rating
from dialogbench.mtbench101.scoring import is_judged
from dialogbench.mtbench101.tables import JUDGE_STAGE
from dialogbench.mtbench101.taxonomy import TASK_CODES

USELESS_ANSWER = "I don't know."  # answers nothing, whatever the question
PROBE_KEY_TAG = "judge_probe:mtbench101"  # leads every probe's cell key: the stage's name before lake format 5


def probes(config, k: int) -> list[ProbeStage]:
    judge, settings = mtbench101_judge(config), config.mtbench101
    sampling = judge_sampling(judge, settings.judge_max_tokens)
    first = {}
    for dialogue in read_dialogues(settings.dataset):
        first.setdefault(dialogue.task, dialogue)
    found = []
    for task in [t for t in TASK_CODES if t in first][:k]:
        dialogue = first[task]
        turn = next(i for i in range(len(dialogue.turns)) if is_judged(task=task, turn=i))
        history = tuple((t.user, t.bot) for t in dialogue.turns[:turn])
        golden, pair = dialogue.turns[turn].bot, f"{task}/{dialogue.id}:{turn}"
        for variant, answer, expected in (("golden", golden, "higher"), ("useless", USELESS_ANSWER, "lower")):
            found.append(Probe(f"{pair}/{variant}", "golden_vs_useless", variant, expected,
                               (task, history, dialogue.turns[turn].user, answer, golden), pair_id=pair))

    def grade(probe: Probe, text: str) -> dict:
        rating = parse_rating(text)
        return {"parsed": rating.parsed, "answer": None if rating.score is None else str(rating.score),
                "score": rating.score}

    version = fingerprint([task_prompt_version(t) for t in TASK_CODES])
    return [ProbeStage(protocol=JUDGE_STAGE, key_tag=PROBE_KEY_TAG, version=version, judge=judge, probes=found,
                       sampling=sampling,
                       prompt=lambda p: prompts.judge_messages(task=p.content[0], history_turns=p.content[1],
                                                               user_message=p.content[2], answer=p.content[3],
                                                               reference=p.content[4]),
                       output_format=lambda p: output_format(max_tokens=sampling.max_tokens), grade=grade)]
