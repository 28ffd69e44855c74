"""How a command other than ``run`` opens the lake: one that exists (a typo would otherwise read 0 rows), is a lake
at all and, for readers, of this version's format; a command that writes in it takes its lease first."""

from __future__ import annotations

from pathlib import Path


class NoLake(ValueError):
    """A reader pointed at a lake that does not exist (a typo would otherwise answer 0 rows)."""


def existing_lake(lake: str | None) -> Path:
    root = Path(lake or "data_lake")
    if not root.is_dir():
        raise NoLake(f"{root}: no lake here (no such directory); pass --lake DIR, or run `dialogbench run` first")
    return root


def refuse_older(lake: str | None) -> None:
    """Readers (query, export, catalog, report, explore): a missing lake or one of an older format is refused."""
    from dialogbench.run.registry import open_lake
    from dialogbench.lake.version import refuse_older as refuse_older_format

    refuse_older_format(open_lake(existing_lake(lake)))


def data_lake(lake: str | None):
    """The lake a query or an export reads: one that exists, of this format, and is a lake at all."""
    from dialogbench.run.registry import open_lake
    from dialogbench.lake.version import refuse_not_a_lake

    refuse_older(lake)
    refuse_not_a_lake(open_lake(existing_lake(lake)))
    return open_lake(lake or "data_lake")


def lease(args):
    """The lake's lease for a command that writes in it (a run writing the lake is waited for or refused)."""
    from dialogbench.lake.lease import lake_lease
    from dialogbench.lake.version import refuse_foreign
    from dialogbench.run.registry import open_lake

    refuse_foreign(open_lake(args.lake or "data_lake"))  # a folder that is not a lake gets no .lease file either
    return lake_lease(args.lake or "data_lake", wait_s=args.wait, create=False)
