"""MT-Bench-101 as a family: answers per model (golden or self context) → a judge rates every judged turn."""

from dialogbench.run.family_spec import Family
from dialogbench.mtbench101.legacy import LEGACY
from dialogbench.history import Metric
from dialogbench.text.jsonl import data_problems
from dialogbench.mtbench101.answer_cells import ANSWER_VERSION
from dialogbench.mtbench101.answer_stage import AnswerTurns
from dialogbench.mtbench101.config import MTBench101Config, answerers
from dialogbench.mtbench101.dataset import read_dialogues
from dialogbench.mtbench101.explorer import explore
from dialogbench.mtbench101.judge_stage import JudgeTurns, task_prompt_version
from dialogbench.mtbench101.leaderboard import format_mtbench101, mtbench101_leaderboard
from dialogbench.mtbench101.probes import probes
from dialogbench.mtbench101.reference import taxonomy_table
from dialogbench.mtbench101.report import REPORT
from dialogbench.mtbench101.tables import ANSWER_STAGE, JUDGE_STAGE, TABLES
from dialogbench.mtbench101.taxonomy import TASK_CODES


def stages(config) -> list:
    """An answer stage per model, the judge stage, then each agreement judge's copy of it (``JudgeStage.agreement``)."""
    return [*(AnswerTurns(config, m.name) for m in answerers(config)), JudgeTurns(config),
            *(JudgeTurns(config, judge=judge).agreement() for judge in config.mtbench101.agreement_judges)]


def check_data(config) -> list[str]:
    """The dialogues file, read as the answer stages will read it."""
    return data_problems("mtbench101.dataset", read_dialogues, config.mtbench101.dataset)


def notes(config) -> list[str]:
    """A config that evaluates every dialogue while its judge is checked on MT-Bench-101's known-answer items: those
    items then come from dialogues the leaderboard holds (``reserve_for_probes``, docs/judge-checks.md)."""
    from dialogbench.judge_checks.check import settings_of

    checks = settings_of(config)  # (its defaults when the config has no section: the checks are always on)
    if config.mtbench101.reserve_for_probes or not checks.enabled or not checks.probes:
        return []
    return ["mtbench101.reserve_for_probes: 0: the judge's MT-Bench-101 known-answer probes come from dialogues this "
            "run evaluates, not from a held-out slice (set it above 0 to hold them out)"]


def prompts(config) -> dict:
    """Each task's judge prompt version (rubric, rendering, rating parser, MR / GR reference form) and the answering
    protocol's."""
    reference = config.mtbench101.reference
    return {"answer": ANSWER_VERSION, **{task: task_prompt_version(task, reference) for task in TASK_CODES}}


METRICS = (
    Metric(view="mtbench101_leaderboard", name="avg", keys=("judge",), n="tasks_scored",
           stages=(ANSWER_STAGE, JUDGE_STAGE), protocol=JUDGE_STAGE, units="mtbench101_units"),
    Metric(view="mtbench101_tasks", name="score", keys=("judge", "task"), n="dialogues",
           stages=(ANSWER_STAGE, JUDGE_STAGE), protocol=JUDGE_STAGE, units="mtbench101_units"),
)

FAMILY = Family(name="mtbench101", title="MT-Bench-101", section=MTBench101Config, stages=stages, tables=TABLES,
                sql="mtbench101", check_data=check_data, probes=probes,
                references={"mtbench101_taxonomy": taxonomy_table}, leaderboard=mtbench101_leaderboard,
                format_leaderboard=lambda config, rows: format_mtbench101(rows), report=REPORT,
                metrics=METRICS, prompts=prompts, explorer=explore, legacy=LEGACY, notes=notes)
