"""What a lake holds, as the layers above the lake tell it: its tables, the reference tables its SQL reads, the
folders of that SQL and the names the families stored in older formats. The lake's own code (the catalog, ``repair``,
``migrate``) reads them from here and never looks the families up; ``dialogbench.run.registry.open_lake`` gives a
``Lake`` the registered families' layout."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import pyarrow as pa

from dialogbench.lake.legacy import Legacy


class NoLayout(RuntimeError):
    """A lake opened without its layout was asked for its tables (a bug: open it with ``registry.open_lake``)."""


@dataclass(frozen=True)
class Layout:
    """``tables``: name -> ``cells.Table`` (its schema, key, whether it holds cells or verdicts); ``references``:
    name -> a builder of a small generated table (the MT-Bench-101 taxonomy); ``sql``: the SQL folders, in order,
    each with ``views/``, ``metrics/``, ``report/``, ``macros/`` and ``tests/`` as it needs (``sql/README.md``);
    ``legacy``: the names the families stored in older formats, for ``migrate`` (``lake.legacy``)."""

    tables: Mapping[str, Any] = field(default_factory=dict)
    references: Mapping[str, Callable[[], pa.Table]] = field(default_factory=dict)
    sql: tuple[Path, ...] = ()
    legacy: Legacy = field(default_factory=Legacy)
