"""The MT-Bench-101 judge stage: a judgment per stored answer of a judged turn, judged in chunks.

The judge sees the dialogue as the answer saw it (golden history, or in self mode the model's own
earlier answers), the user message and the answer, plus for MR and GR a reference solution
(``mtbench101.reference``: the golden dialogue through the turn's golden reply, or that reply alone;
``prompts.reference_text``). The cell key is fingerprint("mtbench101_judge", the task's prompt
version, judge config, answer cell key): editing one task's judge prompt, or the reference form of
MR and GR, re-judges that task only.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, replace

from dialogbench.backends import Sampling, sampling_for
from dialogbench.backends.formats import format_key
from dialogbench.cells import Cell, Emit, Planned
from dialogbench.cells.missing import missing
from dialogbench.run.config import ModelConfig
from dialogbench.cells.judging import JudgeStage, judge_chunk
from dialogbench.cells.keys import fingerprint, model_fingerprint
from dialogbench.lake import Lake
from dialogbench.mtbench101 import prompts
from dialogbench.mtbench101.answer_cells import answer_key, history, item_id, key_max_tokens, stored_answers
from dialogbench.mtbench101.config import judge as mtbench101_judge
from dialogbench.mtbench101.config import answerers
from dialogbench.mtbench101.dataset import Dialogue
from dialogbench.mtbench101.rating import output_format, parse_rating
from dialogbench.mtbench101.scoring import is_judged
from dialogbench.mtbench101.selection import selected_dialogues
from dialogbench.mtbench101.tables import JUDGE_STAGE, RATINGS_TABLE

log = logging.getLogger("dialogbench.mtbench101.judge")
KEY_TAG = "mtbench101_judge"  # leads every judgment's cell key: in every stored key, so it never changes
RATING_VERSION = "mtbench101-rating-v1"   # bump when rating.parse_rating changes its rules
# bump when prompts.judge_messages' user message changes (v2: DIALOGUE_FRAMING before the dialogue)
RENDER_VERSION = "mtbench101-render-v2"
# the MR / GR reference forms (prompts.reference_text); bump one when its text changes
REFERENCE_VERSIONS = {"dialogue": "mtbench101-reference-dialogue-v1", "turn": "mtbench101-reference-turn-v1"}


def task_prompt_version(task: str, reference: str = "dialogue") -> str:
    """What judging one task's turns depends on besides the judge and the answer: its rubric (read
    through ``prompts.system_prompt`` at call time), the dialogue rendering, the rating parser and, for
    MR and GR, the ``reference`` form (``mtbench101.reference``)."""
    parts = [prompts.system_prompt(task), task in prompts.REFERENCE_TASKS, RENDER_VERSION, RATING_VERSION]
    return fingerprint(*parts, *([REFERENCE_VERSIONS[reference]] if task in prompts.REFERENCE_TASKS else []))


def reference_form(config, task: str) -> str | None:
    """The reference form a ``task`` turn is judged with (``mtbench101.reference``), None for a task without one."""
    return config.mtbench101.reference if task in prompts.REFERENCE_TASKS else None


def judge_sampling(judge: ModelConfig, max_tokens: int | None) -> Sampling:
    sampling = sampling_for(judge)
    return dataclasses.replace(sampling, max_tokens=max_tokens) if max_tokens else sampling


@dataclass(frozen=True)
class Turn:
    """What the judge sees of one answered turn."""

    model: str
    generation_key: str              # the answer's cell key
    version: str                     # task_prompt_version(task)
    task: str
    history: tuple[tuple[str, str], ...]  # what the answer saw before the turn
    user_message: str
    answer: str
    reference: str                   # the reference solution shown (MR, GR: prompts.reference_text)
    reference_form: str | None       # which (mtbench101.reference): 'dialogue' or 'turn'; None for other tasks


class JudgeTurns(JudgeStage):
    """A cell per judged turn of the selected dialogues per model (current config, context mode). The
    plan holds every such turn, answered or not (so the metrics see missing turns); only turns with a
    stored answer (and, in self mode, stored earlier answers) are computed."""

    name = JUDGE_STAGE
    formerly = ("mtbench101",)
    table = RATINGS_TABLE

    def __init__(self, config, *, judge: str | None = None) -> None:
        """``judge``: another judge than the protocol's (an agreement judge's stage: ``agreement()``)."""
        super().__init__(judge=config.model(judge) if judge else mtbench101_judge(config),
                         chunk_size=config.mtbench101.judge_chunk_size)

    def tokens_per_cell(self, config) -> int:
        return judge_sampling(self.judge, config.mtbench101.judge_max_tokens).max_tokens  # one verdict

    def _planned(self, config) -> list[tuple[Cell, Dialogue, int, str]]:
        """Every judged turn of the selected dialogues per model: (cell, dialogue, turn, answer key)."""
        settings, judge = config.mtbench101, self.judge
        dialogues, context = selected_dialogues(config), settings.context
        judge_fp = model_fingerprint(judge)
        fmt = format_key(judge, output_format(max_tokens=judge_sampling(judge, settings.judge_max_tokens).max_tokens))
        versions = {d.task: task_prompt_version(d.task, settings.reference) for d in dialogues}
        planned: list[tuple[Cell, Dialogue, int, str]] = []
        for model in answerers(config):
            model_fp, limit = model_fingerprint(model), key_max_tokens(config, model)
            for d in dialogues:
                for i in range(len(d.turns)):
                    if not is_judged(task=d.task, turn=i):
                        continue
                    a_key = answer_key(dialogue=d, turn=i, model_fp=model_fp, context=context, max_tokens=limit)
                    key = fingerprint(KEY_TAG, versions[d.task], judge_fp, settings.judge_max_tokens, a_key, *fmt)
                    planned.append((Cell(key, item_id(d.id, i), {"model": model.name}, judge=judge.name, task=d.task),
                                    d, i, a_key))
        return planned

    def _with_payloads(self, config, lake: Lake, planned: list[tuple[Cell, Dialogue, int, str]],
                       keys: set[str]) -> tuple[list[Cell], int]:
        """The cells of ``keys`` whose answers (and, in self mode, earlier answers) are stored, with their payloads;
        and how many of ``keys`` are not answered yet."""
        context, form = config.mtbench101.context, config.mtbench101.reference
        answer_keys = {(cell.model, str(d.id), i): a_key for cell, d, i, a_key in planned}
        answers = stored_answers(lake, list(answer_keys.values()))
        cells, unanswered = [], 0
        for cell, d, i, a_key in planned:
            if cell.key not in keys:
                continue
            earlier = {t: answers.get(answer_keys[(cell.model, str(d.id), t)]) for t in range(i)
                       if context == "self" and is_judged(task=d.task, turn=t)}
            if a_key not in answers or any(a is None for a in earlier.values()):
                unanswered += 1
                continue
            cells.append(replace(cell, payload=Turn(
                model=cell.model, generation_key=a_key, version=task_prompt_version(d.task, form), task=d.task,
                history=tuple(history(d, i, context=context, answers=earlier)), user_message=d.turns[i].user,
                answer=answers[a_key], reference=prompts.reference_text(form, d.turns[:i + 1]),
                reference_form=reference_form(config, d.task))))
        return cells, unanswered

    def plan(self, config, lake: Lake) -> Planned:
        planned = self._planned(config)
        todo_keys = {c.key for c in missing(lake, self.table, [p[0] for p in planned])}
        todo, unanswered = self._with_payloads(config, lake, planned, todo_keys)
        log.info("%s: %d turns not answered yet", JUDGE_STAGE, unanswered)
        return Planned([p[0] for p in planned], detail={"unanswered": unanswered}, todo=todo, blocked=unanswered)

    def repeatable(self, config, lake: Lake) -> list[Cell]:
        """Every planned turn whose answer is stored, with its payload (the plan's cells carry none)."""
        planned = self._planned(config)
        return self._with_payloads(config, lake, planned, {p[0].key for p in planned})[0]

    def compute(self, config, cells: list[Cell], emit: Emit) -> None:
        judge, max_tokens = self.judge, config.mtbench101.judge_max_tokens
        sampling = judge_sampling(judge, max_tokens)

        def parse(cell: Cell, text: str) -> dict:
            rating = parse_rating(text)
            return {"protocol_version": cell.payload.version, "parsed": rating.parsed, "parse_error": rating.error,
                    "score": rating.score, "reference": cell.payload.reference_form}

        judge_chunk(judge=judge, cells=cells, emit=emit, protocol=JUDGE_STAGE, sampling=sampling, parse=parse,
                    prompt=lambda c: prompts.judge_messages(task=c.payload.task, history_turns=c.payload.history,
                                                            user_message=c.payload.user_message,
                                                            answer=c.payload.answer, reference=c.payload.reference),
                    output_format=lambda c: output_format(max_tokens=sampling.max_tokens))
