"""What BotChat stored under other names in older lake formats (``lake.legacy``): its judge protocols' verdicts were
rows of one ``judgments`` table until format 3, and an Arena plan packed its pair as ``"a vs b"`` until format 2."""

from __future__ import annotations

from dialogbench.botchat.arena_stage import PROTOCOL as ARENA
from dialogbench.botchat.gteval_stage import PROTOCOL as GTEVAL
from dialogbench.botchat.tables import ARENA_TABLE, GTEVAL_TABLE, UNIEVAL_TABLE
from dialogbench.botchat.unieval_stage import PROTOCOL as UNIEVAL
from dialogbench.lake.legacy import Legacy, Unpacked

PAIR = " vs "  # a format-1 Arena plan's model string: "<first> vs <second>"


def unpack(stage: str, packed: str) -> Unpacked | None:
    """A format-1 Arena plan's pair in the roles ``first`` and ``second``; None for any other plan."""
    if stage != ARENA or PAIR not in packed:
        return None
    first, second = packed.split(PAIR, 1)
    return Unpacked({"first": first, "second": second})


LEGACY = Legacy(verdict_tables={UNIEVAL: UNIEVAL_TABLE.name, ARENA: ARENA_TABLE.name, GTEVAL: GTEVAL_TABLE.name},
                unpackers=(unpack,))
