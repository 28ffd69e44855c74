"""What GameEval stored under other names in older lake formats (``lake.legacy``): until format 2 a game's plan
packed its seats as ``"<role>=<model>;…"`` (``spy=x;villager=y``), and a game's plan is the latest one for no model's
scope."""

from __future__ import annotations

from dialogbench.gameeval.play_stage import stage_name
from dialogbench.lake.legacy import Legacy, Unpacked

STAGES = stage_name("")  # every game's stage name leads with it ("gameeval_<game>")


def unpack(stage: str, packed: str) -> Unpacked | None:
    """A format-1 game plan's seats as roles, with an empty scope; None for any other plan."""
    if not stage.startswith(STAGES):
        return None
    return Unpacked(dict(part.split("=", 1) for part in packed.split(";") if "=" in part), scope=[])


LEGACY = Legacy(unpackers=(unpack,))
