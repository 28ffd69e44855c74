"""What the Delta cell store raises. Each error names the store's location and the table, never a credential: a
message is built from names only (``location.StorageOptions.scrub`` removes any secret value a delta-rs message
might quote), so it can be logged, shown in Prefect or stored as a failure as it is."""

from __future__ import annotations


class DeltaStoreError(Exception):
    """An operation on one table of a ``DeltaCellStore`` failed; the message starts with ``<location>/<table>:``."""


class TableNotFound(DeltaStoreError, LookupError):
    """The table has no Delta log at the location (nothing was ever committed to it)."""


class CommitConflict(DeltaStoreError):
    """A write lost the optimistic-concurrency race to concurrent writers more times than its bound allows. Nothing
    of it was committed (a Delta commit is all or nothing), so calling it again is safe."""


class MissingSetting(DeltaStoreError, KeyError):
    """A setting the location needs is not in the environment: the message names the variable, never a value."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class RefusedSetting(DeltaStoreError, ValueError):
    """A setting that would make concurrent writers unsafe (or put a secret where it would be printed) is refused."""
