"""What MT-Bench-101 stored under other names in older lake formats (``lake.legacy``): its judge's verdicts were rows
of one ``judgments`` table until format 3, and its judge stage (and that stage's known-answer probes' stage) was named
after the family until format 4 (``lake.renames`` rewrites the old names in place)."""

from __future__ import annotations

from dialogbench.judge_checks.probe_stage import STAGE_PREFIX
from dialogbench.lake.legacy import Legacy
from dialogbench.mtbench101.probes import PROBE_KEY_TAG
from dialogbench.mtbench101.tables import JUDGE_STAGE, RATINGS_TABLE

OLD_JUDGE_STAGE = "mtbench101"  # the judge stage's and its protocol's name until lake format 5

LEGACY = Legacy(verdict_tables={OLD_JUDGE_STAGE: RATINGS_TABLE.name},
                stages={OLD_JUDGE_STAGE: JUDGE_STAGE, PROBE_KEY_TAG: f"{STAGE_PREFIX}{JUDGE_STAGE}"},
                protocols={OLD_JUDGE_STAGE: JUDGE_STAGE})
