"""The judge checks' config section (``judge_checks:``): on in every run unless ``enabled: false``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from dialogbench.config import FamilySection

Check = Literal["unparsed", "discrimination", "probes"]


class JudgeChecksConfig(FamilySection):
    """What makes a judge's verdicts on one protocol unusable, per (judge, protocol) over the board's current cells:

    - ``max_unparsed``: more than this share of its verdicts cannot be read (an endpoint answering in another
      format, a judge too small to follow the prompt). The authors' pass@N rule counts an unreadable UniEval verdict
      as a pass, so such a judge would make every model look perfect.
    - ``max_same_answer`` with ``min_verdicts``: at least ``min_verdicts`` parsed verdicts and more than this share of
      them the same answer (always "no AI", always a tie, always the same rating): the judge tells nothing apart.

    - ``probes`` with ``min_probe_accuracy``: each judge protocol is also asked ``probes`` known-answer probes a run
      (judge_checks/probe_stage.py: human dialogues and their AI-marked twins, a golden answer against a useless
      one); a judge right on fewer than this share of them cannot tell (0 probes: none asked).

    The affected values are shown as not measured; ``fail`` lists the checks that also end the run Failed (exit 4),
    as failed cells and canary drift do."""

    max_unparsed: float = Field(0.2, ge=0.0, le=1.0)
    max_same_answer: float = Field(0.95, gt=0.0, le=1.0)
    min_verdicts: int = Field(20, ge=1)
    probes: int = Field(10, ge=0, le=500)
    min_probe_accuracy: float = Field(0.8, ge=0.0, le=1.0)
    fail: list[Check] = Field(default_factory=lambda: ["unparsed", "discrimination", "probes"])
