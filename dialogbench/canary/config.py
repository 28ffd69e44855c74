"""The canary's config section (``canary:``; present means it runs)."""

import logging
from typing import Literal

from pydantic import Field

from dialogbench.run.config import FamilySection

log = logging.getLogger("dialogbench.config")


class CanaryConfig(FamilySection):
    """``size`` judgments per judge protocol (UniEval, Arena, GTEval, MT-Bench-101, ...) are judged again each run;
    ``min_agreement``: below this share of answers equal to the first night's, the run is flagged (report, Failed
    state, CLI exit 4); ``stages``: the judge stages to draw from (default: every judge stage of the run);
    ``every``: ``night`` (default) repeats a judge's set at most once per UTC day, so that the reruns of a day (a
    cached rerun, an ad-hoc run of the same config) judge nothing again; ``run`` repeats it in every run. A run
    turns it off with ``--no-canary``."""

    size: int = Field(10, ge=1)
    min_agreement: float = Field(0.8, ge=0.0, le=1.0)
    stages: list[str] | None = None
    every: Literal["night", "run"] = "night"

    def check(self, config, families=()) -> None:
        from dialogbench.canary.rejudge_stage import judge_stages  # the stages import the lake, the config does not

        others = [f for f in families if f.enabled(config) and not f.over_others]
        stages = judge_stages(config, others, None)
        known = [s.name for s in stages]
        renamed = {old: s.name for s in stages for old in s.formerly}
        for name in self.stages or []:
            if name in renamed:
                log.warning("canary.stages: %r is the judge stage's former name, read as %r (rename it in the "
                            "config)", name, renamed[name])
            elif name not in known:
                raise ValueError(f"canary.stages: {name!r} is not a judge stage of this config "
                                 f"({', '.join(known) or 'none'})")
