"""The judge checks' config section (``judge_checks:``): on in every run unless ``enabled: false``."""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import Field, model_validator

from dialogbench.run.config import FamilySection

Check = Literal["unparsed", "discrimination", "probes", "position", "verbosity"]
Items = Literal["basic", "hard"]
HARD_PROBES = 54  # items per protocol with items: hard (the default) unless `probes` says otherwise
BASIC_PROBES = 10  # items per protocol with items: basic unless `probes` says otherwise


class JudgeChecksConfig(FamilySection):
    """What makes a judge's verdicts on one protocol unusable, per (judge, protocol) over the board's current cells:

    - ``max_unparsed``: more than this share of its verdicts cannot be read (an endpoint answering in another
      format, a judge too small to follow the prompt). The authors' pass@N rule counts an unreadable UniEval verdict
      as a pass, so such a judge would make every model look perfect.
    - ``max_same_answer`` with ``min_verdicts``: at least ``min_verdicts`` parsed verdicts and more than this share of
      them the same answer (always "no AI", always a tie, always the same rating): the judge tells nothing apart.

    - ``probes`` with ``min_probe_accuracy``: each judge protocol is also asked ``probes`` known-answer probes a run
      (judge_checks/probe_stage.py; 0: none asked). ``items`` picks them: ``hard`` (the default; 54 per protocol
      unless ``probes`` is given): held-out items whose answer is known by construction and that cheap heuristics
      fail (each family's probes.py says how it builds them): human MuTual dev dialogues and their twins with one
      utterance replaced by a length-matched AI artefact of one of eleven kinds (UniEval, and GTEval beside each
      other), a dev dialogue's right next response against a wrong one (Arena), MT-Bench-101's golden reply against
      another dialogue's of similar length, from dialogues no run evaluates (``mtbench101.reserve_for_probes``).
      ``basic`` (opt in; 10 unless given) asks a few fixed items a grossly broken judge fails (a human dialogue and
      its twin with "As an AI language model…" in it, a golden answer against "I don't know."), pooled per protocol:
      a judge right on fewer than ``min_probe_accuracy`` of them cannot tell. With ``hard`` items each kind is gated
      apart on the lower end of its Wilson 95% interval: UniEval's specificity (human dialogues) and sensitivity
      (AI-marked ones), each order of a pairwise protocol, MT-Bench-101's golden-vs-wrong pairs: a kind whose lower
      bound is under ``min_probe_accuracy`` fails ``probes``; and a pairwise protocol whose items flip with the order
      (right in one order only) at a rate whose upper bound is over ``max_probe_flip_rate`` fails ``position``
      (position bias); and a judge that prefers the longer side of the length-controlled pairs (right when the right
      side is the longer one more often than when it is the shorter one, by more than ``max_verbosity_gap`` at the
      lower end of the difference's 95% interval) fails ``verbosity`` (verbosity bias).
    - ``rotate``: each night (``night``, an ISO date: the run's UTC date unless given) asks ``probes`` items per kind
      drawn from a pool of ``pool`` in a seeded rotation, so an unchanged judge meets new items night after night
      and the ``judge_probe_history`` view pools the evidence; an item that comes round again reuses its cell. A kind
      whose family builds fewer than ``pool`` items rotates through those it has (MT-Bench-101: 130 with
      ``mtbench101.reserve_for_probes: 10``; GTEval: 187; docs/judge-checks.md).

    The affected values are shown as not measured; ``fail`` lists the checks that also end the run Failed (exit 4),
    as failed cells and canary drift do."""

    max_unparsed: float = Field(0.2, ge=0.0, le=1.0)
    max_same_answer: float = Field(0.95, gt=0.0, le=1.0)
    min_verdicts: int = Field(20, ge=1)
    probes: int = Field(HARD_PROBES, ge=0, le=500)
    min_probe_accuracy: float = Field(0.8, ge=0.0, le=1.0)
    items: Items = "hard"
    max_probe_flip_rate: float = Field(0.2, ge=0.0, le=1.0)
    max_verbosity_gap: float = Field(0.2, ge=0.0, le=1.0)
    rotate: bool = False
    pool: int = Field(540, ge=1, le=20000)
    night: date | None = None
    fail: list[Check] = Field(default_factory=lambda: ["unparsed", "discrimination", "probes", "position",
                                                       "verbosity"])

    @model_validator(mode="before")
    @classmethod
    def _items_count(cls, data):
        """Without ``probes``: 54 items per protocol with ``items: hard`` (the fewest that tell a 90%-accurate judge
        from a 70%-accurate one; a perfect judge needs 16 for the lower end of its interval to reach 80%), 10 with
        ``basic``."""
        if isinstance(data, dict) and data.get("items") == "basic" and "probes" not in data:
            return {**data, "probes": BASIC_PROBES}
        return data
