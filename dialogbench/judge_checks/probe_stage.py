"""Known-answer probes: items whose right verdict is known by construction (a human dialogue has no AI; the same
dialogue with one utterance replaced by an AI's self-identification has one, at that index; a golden answer rates
above a useless one), judged by the run's judge through its protocol's own prompt, format and parser. A family gives
its probes as ``ProbeStage``s (``Family.probes``); the judge checks run them after every other family and grade the
judge on them (``judge_probes`` view). A probe is a cell keyed by the judge's config, the protocol's version and the
probe's content, so an unchanged judge costs nothing on later nights."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from dialogbench.backends import Sampling, get_backend, sampling_for
from dialogbench.backends.base import Conversation
from dialogbench.backends.formats import OutputFormat, format_key
from dialogbench.backends.provenance import provenance
from dialogbench.cells import Cell, Emit, Planned
from dialogbench.run.config import ModelConfig
from dialogbench.cells.judging import JudgeStage
from dialogbench.judge_checks.tables import PROBES_TABLE
from dialogbench.cells.keys import fingerprint, model_fingerprint
from dialogbench.run.runs import now

STAGE_PREFIX = "judge_probe:"
AI_SELF_IDENTIFICATION = ("As an AI language model, I don't have personal experiences or feelings, but I can "
                          "certainly help you with that.")  # what no human in a chat says: unmistakably an AI's line


@dataclass(frozen=True)
class Probe:
    """One probe cell: ``probe_id`` (stable), ``kind`` and ``variant``, ``expected`` (the right answer in words),
    ``pair_id`` (pair-graded probes), ``content`` (what the prompt shows: fingerprinted into the key), ``longer``
    (a pair of sides, length-controlled or not: ``"expected"`` when the side that should win or rate higher is the
    longer in characters, ``"other"`` when the other side is, None when equal or not a pair; ``longer_side`` says
    it; recorded for the ``judge_verbosity`` view, not part of the cell's key)."""

    probe_id: str
    kind: str
    variant: str
    expected: str
    content: Any
    pair_id: str | None = None
    longer: str | None = None


def longer_side(right, other) -> str | None:
    """Which of two sides is the longer in characters: ``"expected"`` (``right``, the side that should win or rate
    higher), ``"other"``, or None when they are as long. A side is a text or a conversation (its utterances' lengths
    summed)."""
    def length(side) -> int:
        return len(side) if isinstance(side, str) else sum(len(u) for u in side)

    a, b = length(right), length(other)
    return None if a == b else "expected" if a > b else "other"


Grade = Callable[[Probe, str], dict]  # -> parsed, answer, correct, index_right, score


class ProbeStage(JudgeStage):
    """The probes of one judge protocol, judged in one backend call. ``prompt(probe)`` is what the judge sees (the
    protocol's prompt), ``output_format(probe)`` its format, ``grade(probe, text)`` the columns it answers."""

    table = PROBES_TABLE

    def __init__(self, *, protocol: str, version: str, judge: ModelConfig, probes: list[Probe],
                 prompt: Callable[[Probe], Conversation], output_format: Callable[[Probe], OutputFormat | None],
                 grade: Grade, sampling: Sampling | None = None, key_tag: str | None = None) -> None:
        super().__init__(judge=judge, chunk_size=None)
        self.name, self.protocol, self.version = f"{STAGE_PREFIX}{protocol}", protocol, version
        self.key_tag = key_tag or self.name  # leads every probe's cell key (a protocol renamed keeps its old one)
        self.probes, self.prompt, self.format, self.grade = probes, prompt, output_format, grade
        self.sampling = sampling or sampling_for(judge)

    def plan(self, config, lake) -> Planned:
        judge_fp = model_fingerprint(self.judge)
        cells = [Cell(fingerprint(self.key_tag, self.version, judge_fp, self.sampling.max_tokens, p.probe_id, p.kind,
                                  p.variant, p.content, *format_key(self.judge, self.format(p))),
                      p.probe_id, {"judge": self.judge.name}, judge=self.judge.name, payload=p) for p in self.probes]
        return Planned(cells, detail={"probes": len(cells)})

    def compute(self, config, cells: list[Cell], emit: Emit) -> None:
        judge = self.judge
        completions = get_backend(judge).generate([self.prompt(c.payload) for c in cells], sampling=self.sampling,
                                                  formats=[self.format(c.payload) for c in cells])
        created, judge_fp = now(), model_fingerprint(judge)
        rows, failures = [], []
        for cell, completion in zip(cells, completions):
            if not completion.ok:
                failures.append((cell, completion.error, judge.name))
                continue
            probe = cell.payload
            rows.append({"cell_key": cell.key, "protocol": self.protocol, "protocol_version": self.version,
                         "probe_id": probe.probe_id, "kind": probe.kind, "variant": probe.variant,
                         "expected": probe.expected, "pair_id": probe.pair_id, "longer": probe.longer,
                         "judge": judge.name,
                         "judge_fp": judge_fp, "raw_output": completion.text, "prompt_tokens": completion.prompt_tokens,
                         "completion_tokens": completion.completion_tokens, "run_id": emit.run_id,
                         "created_at": created, **provenance(judge, [completion]),
                         **{"correct": None, "index_right": None, "score": None, **self.grade(probe, completion.text)}})
        emit(rows, failures)
