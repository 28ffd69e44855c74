"""The MT-Bench-101 answer stage: plan the missing answer cells of a model, answer them, write cells.

Two context modes (§3.4, §4):

* ``golden`` (the paper): turn t sees the dataset's user and bot turns before t, then the user
  message of t. Every turn is independent, so all missing turns of a model go to the backend in one
  call (or chunks of ``chunk_size``).
* ``self``: turn t sees the model's *own* earlier answers as the assistant turns. Turn by turn: one
  backend call per turn index, across all dialogues. A turn that is not judged (the first turn of
  the skip-first-turn tasks) is not answered; its golden bot reply stays in the history.

Only turns that ``scoring.is_judged`` says are judged are answered. The cell key is
fingerprint(protocol, answer version, item content, model config, context mode): a rerun answers
nothing, a changed model config or dataset turn answers again.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import pyarrow as pa

from dialogbench.backends import get_backend, sampling_for
from dialogbench.backends.provenance import provenance
from dialogbench.botchat.generate_stage import model_fingerprint
from dialogbench.config import ModelConfig
from dialogbench.keys import fingerprint
from dialogbench.lake import Lake
from dialogbench.lake.schemas import FAILURES, MTBENCH101_ANSWERS
from dialogbench.mtbench101.dataset import Dialogue
from dialogbench.mtbench101.scoring import is_judged
from dialogbench.runs import StageReport, now

log = logging.getLogger("dialogbench.mtbench101.answer")
PROTOCOL = "mtbench101"
ANSWER_VERSION = "mtbench101-answer-v1"
TABLE = "mtbench101_answers"
STAGE = "mtbench101_answer"
CONTEXTS = ("golden", "self")
ANSWER_CHUNK_SIZE: int | None = None  # golden mode: None = every missing turn of a model in one call


def item_fingerprint(dialogue: Dialogue, turn: int) -> str:
    """What the dataset gives turn ``turn``: task, the golden turns before it, its user message (the
    self mode's history is determined by these and the model)."""
    return fingerprint(dialogue.task, str(dialogue.id), [(t.user, t.bot) for t in dialogue.turns[:turn]],
                       dialogue.turns[turn].user)


def answer_key(*, dialogue: Dialogue, turn: int, model_fp: str, context: str) -> str:
    return fingerprint(PROTOCOL, ANSWER_VERSION, item_fingerprint(dialogue, turn), model_fp, context)


def item_id(dialogue_id: int | str, turn: int) -> str:
    return f"{dialogue_id}:{turn}"


@dataclass(frozen=True)
class AnswerCell:
    cell_key: str
    dialogue: Dialogue
    turn: int

    @property
    def item_id(self) -> str:
        return item_id(self.dialogue.id, self.turn)


@dataclass
class AnswerPlan:
    model: str
    context: str
    planned: int
    cached: int
    cells: list[AnswerCell]                       # missing, in dialogue then turn order
    stored: dict[str, str] = field(default_factory=dict)  # cell key → stored answer (self mode's history)


def history(dialogue: Dialogue, turn: int, *, context: str, answers: dict[int, str] | None = None) -> list[tuple[str, str]]:
    """The (user, assistant) turns before ``turn`` as the model saw them: golden bot replies, or in
    self mode the model's own ``answers`` (by turn) for judged turns and golden replies for the rest.
    Raises ``KeyError`` when a self-mode answer it needs is missing."""
    pairs = []
    for i, t in enumerate(dialogue.turns[:turn]):
        if context == "self" and is_judged(task=dialogue.task, turn=i):
            pairs.append((t.user, (answers or {})[i]))
        else:
            pairs.append((t.user, t.bot))
    return pairs


def conversation(pairs: list[tuple[str, str]], user_message: str) -> list[dict[str, str]]:
    messages = []
    for user, bot in pairs:
        messages += [{"role": "user", "content": user}, {"role": "assistant", "content": bot}]
    return messages + [{"role": "user", "content": user_message}]


def fit_conversation(pairs: list[tuple[str, str]], user_message: str, *, count_tokens, budget: int
                     ) -> tuple[list[dict[str, str]], int]:
    """The conversation with the oldest (user, assistant) turns dropped until its prompt fits ``budget``
    tokens (the current user message always stays); returns it and how many turns were dropped."""
    dropped = 0
    messages = conversation(pairs, user_message)
    while dropped < len(pairs) and count_tokens(messages) > budget:
        dropped += 1
        messages = conversation(pairs[dropped:], user_message)
    return messages, dropped


def stored_answers(lake: Lake, keys: list[str]) -> dict[str, str]:
    """Stored answers by cell key (the newest if a key was ever written twice)."""
    with lake.connect() as con:
        con.register("keys", pa.table({"cell_key": pa.array(keys, pa.string())}))
        rows = con.sql(f"""
            SELECT a.cell_key, a.answer FROM {lake.relation_sql(TABLE, MTBENCH101_ANSWERS)} a SEMI JOIN keys USING (cell_key)
            QUALIFY row_number() OVER (PARTITION BY a.cell_key ORDER BY a.created_at DESC) = 1
        """).fetchall()
    return dict(rows)


def plan_answers(*, lake: Lake, dialogues: list[Dialogue], model: ModelConfig, context: str) -> AnswerPlan:
    """The judged turns of ``dialogues`` that ``model`` has no stored answer for (DuckDB anti-join on
    the cell key). In self mode the stored answers of the dialogues come along, as history."""
    if context not in CONTEXTS:
        raise ValueError(f"unknown context mode {context!r} (expected one of {', '.join(CONTEXTS)})")
    model_fp = model_fingerprint(model)
    cells = [AnswerCell(answer_key(dialogue=d, turn=i, model_fp=model_fp, context=context), d, i)
             for d in dialogues for i in range(len(d.turns)) if is_judged(task=d.task, turn=i)]
    with lake.connect() as con:
        con.register("planned", pa.table({"cell_key": pa.array([c.cell_key for c in cells], pa.string())}))
        missing = {r[0] for r in con.sql(f"""SELECT cell_key FROM planned ANTI JOIN
            {lake.relation_sql(TABLE, MTBENCH101_ANSWERS)} a USING (cell_key)""").fetchall()}
    todo = [c for c in cells if c.cell_key in missing]
    stored = {}
    if context == "self" and todo:
        stored = stored_answers(lake, [c.cell_key for c in cells if c.cell_key not in missing])
    return AnswerPlan(model=model.name, context=context, planned=len(cells), cached=len(cells) - len(todo),
                      cells=todo, stored=stored)


def run_answers(*, lake: Lake, plan: AnswerPlan, model: ModelConfig, run_id: str,
                chunk_size: int | None = ANSWER_CHUNK_SIZE) -> StageReport:
    """Answer the planned cells: golden mode in one backend call (or chunks of ``chunk_size``), self
    mode one call per turn index. Rows are written after every call; backend errors go to
    ``failures`` (and, in self mode, the later turns of that dialogue wait for the next run)."""
    report = StageReport(f"{STAGE}:{model.name}", planned=plan.planned, cached=plan.cached)
    if not plan.cells:
        log.info("%s: all %d MT-Bench-101 answers cached", model.name, plan.planned)
        return report
    start = time.perf_counter()
    backend = get_backend(model)
    sampling, model_fp = sampling_for(model), model_fingerprint(model)
    calls = computed = failed = blocked = trimmed = 0

    def call(batch: list[tuple[AnswerCell, list[tuple[str, str]]]]) -> dict[str, str]:
        nonlocal calls, computed, failed, trimmed
        budget = model.context_window - sampling.max_tokens
        prompts = [conversation(pairs, cell.dialogue.turns[cell.turn].user) for cell, pairs in batch]
        for k, tokens in enumerate(backend.count_tokens_many(prompts)):  # one batched count
            if tokens > budget:  # a history over the context window loses its oldest turns
                cell, pairs = batch[k]
                prompts[k], dropped = fit_conversation(pairs, cell.dialogue.turns[cell.turn].user,
                                                       count_tokens=backend.count_tokens, budget=budget)
                trimmed += dropped > 0
        completions = backend.generate(prompts, sampling=sampling)
        calls += 1
        created, rows, failures, answered = now(), [], [], {}
        for (cell, _), completion in zip(batch, completions):
            if not completion.ok:
                failures.append({"cell_key": cell.cell_key, "stage": STAGE, "item_id": cell.item_id,
                                 "model": model.name, "judge": None, "error": completion.error or "no text",
                                 "run_id": run_id, "created_at": created})
                continue
            answered[cell.cell_key] = completion.text
            rows.append({"cell_key": cell.cell_key, "dialogue_id": str(cell.dialogue.id), "task": cell.dialogue.task,
                         "turn": cell.turn, "context": plan.context, "model": model.name, "model_fp": model_fp,
                         "answer": completion.text, "prompt_tokens": completion.prompt_tokens,
                         "completion_tokens": completion.completion_tokens, "run_id": run_id, "created_at": created,
                         **provenance(model, [completion])})
        lake.write(TABLE, pa.Table.from_pylist(rows, schema=MTBENCH101_ANSWERS),
                   partition={"context": plan.context, "model": model.name})
        lake.write("failures", pa.Table.from_pylist(failures, schema=FAILURES), partition={"stage": STAGE})
        computed += len(rows)
        failed += len(failures)
        return answered

    if plan.context == "golden":
        size = chunk_size or len(plan.cells)
        for i in range(0, len(plan.cells), size):
            call([(c, history(c.dialogue, c.turn, context="golden")) for c in plan.cells[i: i + size]])
    else:
        known = dict(plan.stored)  # cell key → answer, grows turn by turn
        for turn in sorted({c.turn for c in plan.cells}):
            batch = []
            for cell in (c for c in plan.cells if c.turn == turn):
                earlier = {i: known.get(answer_key(dialogue=cell.dialogue, turn=i, model_fp=model_fp, context="self"))
                           for i in range(turn) if is_judged(task=cell.dialogue.task, turn=i)}
                if any(a is None for a in earlier.values()):
                    blocked += 1  # an earlier answer failed: this turn waits for the next run
                    continue
                batch.append((cell, history(cell.dialogue, turn, context="self", answers=earlier)))
            if batch:
                known.update(call(batch))
    report.computed, report.failed, report.seconds = computed, failed, time.perf_counter() - start
    report.detail = {"backend_calls": calls, "context": plan.context, "blocked": blocked, "trimmed_prompts": trimmed}
    log.info("%s: %d MT-Bench-101 answers (%s context) in %d backend calls, %d failed, %d waiting on a failed turn",
             model.name, computed, plan.context, calls, failed, blocked)
    return report
