"""The MT-Bench-101 judge stage: plan a judgment per stored answer of a judged turn, judge in chunks.

The judge sees the dialogue as the answer saw it (golden history, or in self mode the model's own
earlier answers), the user message and the answer, plus the golden reply of the turn as the
reference solution (MR, GR). The cell key is fingerprint("mtbench101_judge", the task's prompt
version, judge config, answer cell key): editing one task's judge prompt re-judges that task only.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass

import pyarrow as pa

from dialogbench.backends import Sampling, get_backend, sampling_for
from dialogbench.backends.formats import format_key
from dialogbench.backends.provenance import provenance
from dialogbench.botchat.generate_stage import model_fingerprint
from dialogbench.config import ModelConfig
from dialogbench.keys import fingerprint
from dialogbench.lake import Lake
from dialogbench.lake.schemas import FAILURES, JUDGMENTS, PLANS
from dialogbench.mtbench101 import prompts
from dialogbench.mtbench101.answer_stage import PROTOCOL, answer_key, history, item_id, stored_answers
from dialogbench.mtbench101.dataset import Dialogue
from dialogbench.mtbench101.rating import output_format, parse_rating
from dialogbench.mtbench101.scoring import is_judged
from dialogbench.runs import StageReport, now

log = logging.getLogger("dialogbench.mtbench101.judge")
JUDGE_PROTOCOL = "mtbench101_judge"
RATING_VERSION = "mtbench101-rating-v1"   # bump when rating.parse_rating changes its rules
RENDER_VERSION = "mtbench101-render-v1"   # bump when prompts.render_dialogue / the reference block change


def task_prompt_version(task: str) -> str:
    """What judging one task's turns depends on besides the judge and the answer: its rubric (read
    through ``prompts.system_prompt`` at call time), the dialogue rendering and the rating parser."""
    return fingerprint(prompts.system_prompt(task), task in prompts.REFERENCE_TASKS, RENDER_VERSION, RATING_VERSION)


def judge_sampling(judge: ModelConfig, max_tokens: int | None) -> Sampling:
    sampling = sampling_for(judge)
    return dataclasses.replace(sampling, max_tokens=max_tokens) if max_tokens else sampling


@dataclass(frozen=True)
class JudgeCell:
    cell_key: str
    item_id: str                     # "<dialogue_id>:<turn>"
    task: str
    model: str
    generation_key: str              # the answer's cell key
    version: str                     # task_prompt_version(task)
    history: tuple[tuple[str, str], ...]  # what the answer saw before the turn
    user_message: str
    answer: str
    reference: str                   # the golden reply of the turn


def plan_judging(*, lake: Lake, dialogues: list[Dialogue], models: list[ModelConfig], judge: ModelConfig,
                 context: str, judge_max_tokens: int | None, run_id: str) -> tuple[list[JudgeCell], dict[str, int]]:
    """A cell per judged turn of ``dialogues`` per model (current config, ``context`` mode). The plan
    (every such turn, answered or not, so the metrics see missing turns) is recorded in ``plans``;
    returns the cells with a stored answer and no judgment yet, and the counts."""
    judge_fp = model_fingerprint(judge)
    fmt = format_key(judge, output_format(max_tokens=judge_sampling(judge, judge_max_tokens).max_tokens))
    versions = {d.task: task_prompt_version(d.task) for d in dialogues}
    planned: list[tuple[str, str, str, str, Dialogue, int, str]] = []  # key, item, task, model, dialogue, turn, answer key
    answer_keys: dict[tuple[str, str, int], str] = {}
    for model in models:
        model_fp = model_fingerprint(model)
        for d in dialogues:
            for i in range(len(d.turns)):
                if not is_judged(task=d.task, turn=i):
                    continue
                a_key = answer_key(dialogue=d, turn=i, model_fp=model_fp, context=context)
                answer_keys[(model.name, str(d.id), i)] = a_key
                key = fingerprint(JUDGE_PROTOCOL, versions[d.task], judge_fp, judge_max_tokens, a_key, *fmt)
                planned.append((key, item_id(d.id, i), d.task, model.name, d, i, a_key))
    answers = stored_answers(lake, list(answer_keys.values()))
    with lake.connect() as con:
        con.register("planned", pa.table({"cell_key": pa.array([p[0] for p in planned], pa.string())}))
        missing = {r[0] for r in con.sql(f"""SELECT cell_key FROM planned ANTI JOIN
            {lake.relation_sql('judgments', JUDGMENTS)} j USING (cell_key)""").fetchall()}
    todo, unanswered = [], 0
    for key, item, task, model_name, d, i, a_key in planned:
        if key not in missing:
            continue
        if a_key not in answers:
            unanswered += 1
            continue
        earlier = {t: answers.get(answer_keys[(model_name, str(d.id), t)]) for t in range(i)
                   if context == "self" and is_judged(task=task, turn=t)}
        if any(a is None for a in earlier.values()):
            unanswered += 1
            continue
        todo.append(JudgeCell(cell_key=key, item_id=item, task=task, model=model_name, generation_key=a_key,
                              version=versions[task], history=tuple(history(d, i, context=context, answers=earlier)),
                              user_message=d.turns[i].user, answer=answers[a_key], reference=d.turns[i].bot))
    created = now()
    lake.write("plans", pa.Table.from_pylist(
        [{"run_id": run_id, "stage": PROTOCOL, "cell_key": key, "item_id": item, "model": model_name,
          "judge": judge.name, "created_at": created, "task": task} for key, item, task, model_name, *_ in planned],
        schema=PLANS), partition={"stage": PROTOCOL, "run_id": run_id}, name=f"{judge.name}.parquet")
    cached = len(planned) - len(missing)
    return todo, {"planned": len(planned), "cached": cached, "unanswered": unanswered}


def judge_chunk(*, lake: Lake, cells: list[JudgeCell], judge: ModelConfig, judge_max_tokens: int | None,
                run_id: str) -> StageReport:
    """One backend call for the chunk. Parsed and unparseable ratings are both cells (raw output kept,
    score null when unparsed); backend errors go to ``failures`` and are retried on the next run."""
    start = time.perf_counter()
    conversations = [prompts.judge_messages(task=c.task, history_turns=c.history, user_message=c.user_message,
                                            answer=c.answer, reference=c.reference) for c in cells]
    sampling = judge_sampling(judge, judge_max_tokens)
    completions = get_backend(judge).generate(conversations, sampling=sampling,
                                              formats=output_format(max_tokens=sampling.max_tokens))
    created, judge_fp = now(), model_fingerprint(judge)
    rows, failures = [], []
    for cell, completion in zip(cells, completions):
        if not completion.ok:
            failures.append({"cell_key": cell.cell_key, "stage": PROTOCOL, "item_id": cell.item_id, "model": cell.model,
                             "judge": judge.name, "error": completion.error or "no text", "run_id": run_id,
                             "created_at": created})
            continue
        rating = parse_rating(completion.text)
        rows.append({"cell_key": cell.cell_key, "protocol": PROTOCOL, "protocol_version": cell.version,
                     "item_id": cell.item_id, "model": cell.model, "judge": judge.name, "judge_fp": judge_fp,
                     "generation_key": cell.generation_key, "raw_output": completion.text, "parsed": rating.parsed,
                     "parse_error": rating.error, "score": rating.score, "prompt_tokens": completion.prompt_tokens,
                     "completion_tokens": completion.completion_tokens, "run_id": run_id, "created_at": created,
                     "output_format": completion.constraint, **provenance(judge, [completion])})
    lake.write("judgments", pa.Table.from_pylist(rows, schema=JUDGMENTS), partition={"protocol": PROTOCOL, "judge": judge.name})
    lake.write("failures", pa.Table.from_pylist(failures, schema=FAILURES), partition={"stage": PROTOCOL})
    unparsed = sum(not r["parsed"] for r in rows)
    log.info("%s: %s rated %d MT-Bench-101 turns (%d unparseable, %d failed)", PROTOCOL, judge.name, len(rows),
             unparsed, len(failures))
    return StageReport(PROTOCOL, computed=len(rows), failed=len(failures), seconds=time.perf_counter() - start,
                       detail={"unparsed": unparsed, "constrained": sum(r["output_format"] is not None for r in rows)})
