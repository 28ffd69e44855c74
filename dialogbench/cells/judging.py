"""Judging a chunk of cells with one backend call: what UniEval, Arena, GTEval and MT-Bench-101 share.
Parsed and unparseable outputs are both rows (raw output kept); backend errors are failures (retried
by the next run)."""

from __future__ import annotations

import logging
from typing import Callable, Protocol, runtime_checkable

from dialogbench.backends import Sampling, get_backend, sampling_for
from dialogbench.backends.base import Conversation
from dialogbench.backends.formats import OutputFormat
from dialogbench.backends.provenance import provenance
from dialogbench.cells import Cell, Emit, Stage
from dialogbench.run.config import ModelConfig
from dialogbench.cells.keys import model_fingerprint
from dialogbench.run.runs import now

log = logging.getLogger("dialogbench.judging")
AGREEMENT_MARK = "@"  # <stage>@<judge>: an agreement judge's copy of a judge stage (JudgeStage.agreement)


@runtime_checkable
class Judged(Protocol):
    """What a judge stage's cell payload must say (besides what its prompt needs): the judged ``model`` (pairwise: the
    side the row is filed under) and the ``generation_key`` of the judged output, both stored with the verdict."""

    @property
    def model(self) -> str: ...

    @property
    def generation_key(self) -> str: ...


class JudgeStage(Stage):
    """A stage whose cells one judge model rates, ``chunk_size`` cells per backend call; a failed chunk is
    retried twice (judges are often remote endpoints, whose errors pass)."""

    retries = 2
    role = "judge"
    formerly: tuple[str, ...] = ()  # names it had before (stored rows were renamed by a lake migration; configs may
                                    # still name it so: canary.stages)

    def __init__(self, *, judge: ModelConfig, chunk_size: int | None) -> None:
        self.judge, self.chunk_size = judge, chunk_size

    def models(self, config) -> list[ModelConfig]:
        return [self.judge]

    def agreement(self) -> "JudgeStage":
        """This stage as an agreement judge's (``agreement_judges`` of its family's section): the same cells judged
        by ``self.judge`` for comparison with the protocol's judge (``judge_pairs``), never its headline. It runs as
        ``<name>@<judge>`` (its own chunks, progress and ``runs`` row) and is recorded as ``name`` with its judge in
        every row, as a run with that judge would be (its plan in a file of its own)."""
        self.recorded_as, self.name = self.name, f"{self.name}{AGREEMENT_MARK}{self.judge.name}"
        self.plan_file = f"plan{AGREEMENT_MARK}{self.judge.name}.parquet"  # model names are file-name safe
        return self

    def tokens_per_cell(self, config) -> int:
        return self.judge.max_tokens  # one verdict


def judge_chunk(*, judge: ModelConfig, cells: list[Cell], emit: Emit, protocol: str,
                prompt: Callable[[Cell], Conversation], output_format: Callable[[Cell], OutputFormat | None],
                parse: Callable[[Cell, str], dict], sampling: Sampling | None = None) -> None:
    """``prompt(cell)`` is what the judge sees, ``parse(cell, text)`` the protocol's columns of the row
    (``parsed`` among them); the shared columns (keys, judge, tokens, provenance) are filled in here, the judged model
    and output from each cell's payload (``Judged``)."""
    for cell in cells:
        if not isinstance(cell.payload, Judged):
            raise TypeError(f"{protocol}: cell {cell.key[:12]}'s payload {type(cell.payload).__name__} is not Judged "
                            "(it needs model and generation_key)")
    sampling = sampling or sampling_for(judge)
    completions = get_backend(judge).generate([prompt(c) for c in cells], sampling=sampling,
                                              formats=[output_format(c) for c in cells])
    created, judge_fp = now(), model_fingerprint(judge)
    rows, failures = [], []
    for cell, completion in zip(cells, completions):
        if not completion.ok:
            failures.append((cell, completion.error, cell.payload.model))
            continue
        rows.append({"cell_key": cell.key, "protocol": protocol, "item_id": cell.item_id, "model": cell.payload.model,
                     "judge": judge.name, "judge_fp": judge_fp, "generation_key": cell.payload.generation_key,
                     "raw_output": completion.text, "prompt_tokens": completion.prompt_tokens,
                     "completion_tokens": completion.completion_tokens, "run_id": emit.run_id, "created_at": created,
                     "output_format": completion.constraint, **provenance(judge, [completion]),
                     **parse(cell, completion.text)})
    emit(rows, failures)
    unparsed = sum(not r["parsed"] for r in rows)
    emit.detail = {"unparsed": emit.detail.get("unparsed", 0) + unparsed,
                   "constrained": emit.detail.get("constrained", 0) + sum(r["output_format"] is not None for r in rows)}
    log.info("%s: %s judged %d cells (%d unparseable, %d failed)", protocol, judge.name, len(rows), unparsed,
             len(failures))
