"""The judge canary as a family: one stage after every other family's, its table, its report section and the
check that fails a run whose judges drifted."""

from dialogbench.canary.check import drifted
from dialogbench.canary.config import CanaryConfig
from dialogbench.canary.report import REPORT
from dialogbench.canary.rejudge_stage import JudgeCanary
from dialogbench.canary.tables import CANARY_TABLE
from dialogbench.run.family_spec import Family

FAMILY = Family(name="canary", title="Judge canary", section=CanaryConfig, sql="canary",
                stages=lambda config, others: [JudgeCanary(config, others)], tables=(CANARY_TABLE,), report=REPORT,
                checks=drifted, runs_last=True, protocol=False, over_others=True)
