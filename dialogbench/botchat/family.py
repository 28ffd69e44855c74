"""BotChat as a family: seeds → dialogues per model → lengths → UniEval, Arena, GTEval → ratings."""

from dialogbench.botchat import arena, unieval
from dialogbench.botchat.arena_stage import Arena
from dialogbench.botchat.config import BotChatConfig, chatbots
from dialogbench.botchat.elo_stage import ArenaRatings
from dialogbench.botchat.explorer import explore
from dialogbench.botchat.generate_stage import GenerateDialogues
from dialogbench.botchat.gteval_stage import GTEval
from dialogbench.botchat.leaderboard import format_leaderboard, unieval_leaderboard
from dialogbench.botchat.lengths_stage import UtteranceLengths
from dialogbench.botchat.probes import probes
from dialogbench.botchat.report import REPORT
from dialogbench.botchat.seeds import read_seeds
from dialogbench.botchat.seeds_stage import ExtractSeeds
from dialogbench.botchat.tables import TABLES
from dialogbench.botchat.unieval import load_examples
from dialogbench.botchat.unieval_stage import UniEval
from dialogbench.run.family_spec import Family
from dialogbench.botchat.legacy import LEGACY
from dialogbench.history import Metric
from dialogbench.text.jsonl import data_problems


def judge_stages(config, judge: str | None = None) -> list:
    """UniEval, and Arena and GTEval when on, judged by ``judge`` (default: ``botchat.judge``)."""
    settings = config.botchat
    return [UniEval(config, judge=judge), *([Arena(config, judge=judge)] if settings.arena.enabled else []),
            *([GTEval(config, judge=judge)] if settings.gteval.enabled else [])]


def stages(config) -> list:
    """Seeds, a generation stage per chatbot, lengths, the judge stages (then each agreement judge's copies of them:
    ``JudgeStage.agreement``), the Arena ratings (every judge's)."""
    return [ExtractSeeds(), *(GenerateDialogues(m.name) for m in chatbots(config)), UtteranceLengths(),
            *judge_stages(config),
            *(stage.agreement() for judge in config.botchat.agreement_judges for stage in judge_stages(config, judge)),
            ArenaRatings()]


def check_data(config) -> list[str]:
    """The seeds file and UniEval's in-context examples, read as the stages will read them."""
    settings = config.botchat
    return [*data_problems("botchat.dataset", read_seeds, settings.dataset),
            *data_problems("botchat.unieval_examples", load_examples, settings.unieval_examples)]


def prompts(config) -> dict:
    """The chatbots' system prompt and each judge protocol's version (prompt, examples, parser)."""
    settings = config.botchat
    return {"system_prompt": settings.system_prompt,
            "unieval": unieval.protocol_version(load_examples(settings.unieval_examples)),
            "arena": arena.protocol_version("arena"), "gteval": arena.protocol_version("gteval")}


METRICS = (
    Metric(view="botchat_unieval", name="pass_rate", keys=("judge", "n"), low="pass_ci_low", high="pass_ci_high",
           n="dialogues", stages=("generate:", "botchat_unieval"), protocol="botchat_unieval", units="botchat_units"),
    Metric(view="botchat_gteval", name="win_tie_rate", keys=("judge",), low="win_tie_ci_low", high="win_tie_ci_high",
           n="comparisons", stages=("generate:", "botchat_gteval"), protocol="botchat_gteval", units="botchat_units"),
    Metric(view="botchat_elo", name="elo", keys=("judge", "n"), low="ci_low", high="ci_high", n="games",
           stages=("generate:", "botchat_arena"), protocol="botchat_arena"),
    Metric(view="botchat_elo", name="bt", keys=("judge", "n"), low="bt_ci_low", high="bt_ci_high", n="games",
           stages=("generate:", "botchat_arena"), protocol="botchat_arena"),
)

FAMILY = Family(name="botchat", title="BotChat", section=BotChatConfig, stages=stages, tables=TABLES, sql="botchat",
                check_data=check_data, probes=probes, leaderboard=unieval_leaderboard,
                format_leaderboard=lambda config, rows: format_leaderboard(rows, config.botchat.n), report=REPORT,
                metrics=METRICS, prompts=prompts, explorer=explore, legacy=LEGACY)
