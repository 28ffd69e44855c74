"""The MT-Bench-101 answer stage of one model: a cell per judged turn of the selected dialogues."""

from __future__ import annotations

import dataclasses
import logging

from dialogbench.backends import get_backend, sampling_for
from dialogbench.backends.provenance import provenance
from dialogbench.cells import Cell, Emit, Planned, Stage
from dialogbench.cells.keys import model_fingerprint
from dialogbench.lake import Lake
from dialogbench.mtbench101.answer_cells import STAGE, AnswerCell, answer_key, key_max_tokens, stored_answers
from dialogbench.mtbench101.answer_episodes import answer_cells
from dialogbench.mtbench101.config import answer_max_tokens
from dialogbench.mtbench101.scoring import is_judged
from dialogbench.mtbench101.selection import selected_dialogues
from dialogbench.mtbench101.tables import ANSWERS_TABLE
from dialogbench.run.runs import now
from dialogbench.text.lengths import typical_reply_tokens

log = logging.getLogger("dialogbench.mtbench101.answer")


class AnswerTurns(Stage):
    """Golden context: every missing turn in one batch (the paper). Self context: the model's own
    earlier answers are the history, one backend call per turn index; earlier answers come from the
    lake when they are cached. An answer has up to ``mtbench101.answer_max_tokens`` tokens (at most half
    the model's context window: ``config.answer_max_tokens``), recorded with it as ``max_tokens``: an
    answer whose completion tokens reach it was cut there (``mtbench101_truncation``)."""

    table = ANSWERS_TABLE

    def __init__(self, config, model: str) -> None:
        self.model_name = model
        self.name = f"{STAGE}:{model}"
        settings = config.mtbench101
        self.chunk_size = settings.answer_chunk_size if settings.context == "golden" else None

    def models(self, config):
        return [config.model(self.model_name)]

    def splits(self, config) -> bool:
        """Golden context: each turn's answer is asked on the dataset's own history, apart from every other (self
        context: a turn needs the model's earlier answers)."""
        return config.mtbench101.context == "golden"

    def tokens_per_cell(self, config) -> int:
        return answer_max_tokens(config, config.model(self.model_name))  # one answer

    def typical_tokens_per_cell(self, config) -> float | None:
        """An answer as long as the golden one of its turn (capped at the answer's max_tokens), over the judged turns
        of the selected dialogues."""
        return typical_reply_tokens((d.turns[i].bot for d in selected_dialogues(config) for i in range(len(d.turns))
                                     if is_judged(task=d.task, turn=i)),
                                    cap=answer_max_tokens(config, config.model(self.model_name)))

    def plan(self, config, lake: Lake) -> Planned:
        model, context = config.model(self.model_name), config.mtbench101.context
        model_fp, limit = model_fingerprint(model), key_max_tokens(config, model)
        answers = [AnswerCell(answer_key(dialogue=d, turn=i, model_fp=model_fp, context=context, max_tokens=limit),
                              d, i)
                   for d in selected_dialogues(config) for i in range(len(d.turns)) if is_judged(task=d.task, turn=i)]
        return Planned([Cell(a.cell_key, a.item_id, {"model": model.name}, task=a.dialogue.task, payload=a)
                        for a in answers])

    def compute(self, config, cells: list[Cell], emit: Emit) -> None:
        """Rows are emitted after every backend call; a failed answer is a failure (in self context the
        dialogue's later turns then wait for the next run)."""
        model, context = config.model(self.model_name), config.mtbench101.context
        sampling = dataclasses.replace(sampling_for(model), max_tokens=answer_max_tokens(config, model))
        model_fp, limit = model_fingerprint(model), key_max_tokens(config, model)
        by_key = {c.key: c for c in cells}

        def earlier_key(dialogue, turn: int) -> str:
            return answer_key(dialogue=dialogue, turn=turn, model_fp=model_fp, context=context, max_tokens=limit)

        stored = {}
        if context == "self":  # the cached earlier answers of the dialogues still being answered
            stored = stored_answers(emit.lake, sorted({earlier_key(c.payload.dialogue, i) for c in cells
                                                       for i in range(c.payload.turn)} - set(by_key)))

        cut = [0]  # answers whose completion tokens reached max_tokens

        def write(batch: list) -> None:
            created, rows, failures = now(), [], []
            for answer, completion in batch:
                cell = by_key[answer.cell_key]
                if not completion.ok:
                    failures.append((cell, completion.error, None))
                    continue
                cut[0] += completion.completion_tokens >= sampling.max_tokens
                rows.append({"cell_key": cell.key, "dialogue_id": str(answer.dialogue.id), "task": cell.task,
                             "turn": answer.turn, "context": context, "model": model.name, "model_fp": model_fp,
                             "question": answer.dialogue.turns[answer.turn].user,
                             "answer": completion.text, "prompt_tokens": completion.prompt_tokens,
                             "completion_tokens": completion.completion_tokens, "run_id": emit.run_id,
                             "created_at": created, "max_tokens": sampling.max_tokens,
                             **provenance(model, [completion])})
            emit(rows, failures)

        stats = answer_cells([c.payload for c in cells], context=context, backend=get_backend(model),
                             sampling=sampling, context_window=model.context_window, on_batch=write, stored=stored,
                             earlier_key=earlier_key)
        emit.detail = {"backend_calls": stats.backend_calls, "context": context, "blocked": stats.blocked,
                       "trimmed_prompts": stats.trimmed_prompts, "cut": cut[0]}
        log.info("%s: MT-Bench-101 answers (%s context) in %d backend calls, %d waiting on a failed turn, %d cut at "
                 "max_tokens %d", model.name, context, stats.backend_calls, stats.blocked, cut[0], sampling.max_tokens)
