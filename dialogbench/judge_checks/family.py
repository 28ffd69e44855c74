"""The judge checks as a family: no stages of their own yet, a check that fails a run whose judges cannot be read or
tell nothing apart, and a report section; on in every run (``Family.always``)."""

from dialogbench.family import Family
from dialogbench.judge_checks.check import failing
from dialogbench.judge_checks.config import JudgeChecksConfig
from dialogbench.judge_checks.report import REPORT

FAMILY = Family(name="judge_checks", title="Judge checks", section=JudgeChecksConfig, stages=lambda config: [],
                report=REPORT, checks=failing, runs_last=True, protocol=False, always=True)
