"""The judge checks as a family: the known-answer probes of every judge protocol the run has (its stages, after every
other family's), a check that fails a run whose judges cannot be read, tell nothing apart or fail their probes, and a
report section; on in every run (``Family.always``)."""

from dialogbench.run.family_spec import Family
from dialogbench.history import Metric
from dialogbench.judge_checks.check import failing, settings_of
from dialogbench.judge_checks.config import JudgeChecksConfig
from dialogbench.judge_checks.report import REPORT
from dialogbench.judge_checks.rotation import rotated, tonight
from dialogbench.judge_checks.tables import TABLES


def stages(config, others) -> list:
    """The probe stages of the other enabled families (none with ``judge_checks.probes: 0``): ``probes`` items per
    kind, or with ``rotate`` tonight's ``probes`` of a pool of ``pool`` (rotation.py)."""
    settings = settings_of(config)
    k = settings.probes
    if not k:
        return []
    if not settings.rotate:
        return [stage for f in others if f.probes for stage in f.probes(config, k)]
    night = tonight(settings.night)
    return [rotated(stage, k=k, night=night) for f in others if f.probes
            for stage in f.probes(config, max(k, settings.pool))]


METRICS = (
    Metric(view="judge_probes", name="accuracy", model="judge", keys=("protocol", "kind"), low="ci_low",
           high="ci_high", n="probes", stages=("judge_probe:",)),
)

FAMILY = Family(name="judge_checks", title="Judge checks", section=JudgeChecksConfig, stages=stages, tables=TABLES,
                sql="judge_checks", report=REPORT, checks=failing, metrics=METRICS, runs_last=True, protocol=False, always=True,
                over_others=True)
