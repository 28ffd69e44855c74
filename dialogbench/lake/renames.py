"""Lake format 5: the MT-Bench-101 judge stage's stored name. Until format 4 that stage was named after its family,
though every key it writes leads with its judge stage's name; from format 5 it has that name, and so has its
known-answer probes' stage. The family declares the old and new names (``Legacy.stages``, ``Legacy.protocols``:
dialogbench/mtbench101/legacy.py) and the lake reads them from its layout (``lake.layout.legacy``).

``rename_stages`` rewrites the old names wherever a lake stores them: the ``stage`` column of every table (plans,
failures, runs, backend_calls, canary_judgments), the ``protocol`` column of the verdict and probe tables, the
``protocol=…`` part of ``metric_snapshots.slice``, the folders named by them (``plans/stage=…``,
``failures/stage=…``, ``judge_probes/protocol=…``) and the ``runs`` files named by them. A good file is rewritten
whole and atomically (``Lake.write``, its record with it), under its own name in its new folder, and an old file that
moved is removed after; a file an interrupted ``repair`` superseded is removed (its rewrite holds its rows); a
damaged one is left for ``dialogbench verify``. The lake's marker says 5 only once every file is done, and no reader
opens a format-4 lake, so a migration killed half way and rerun rewrites what is left and duplicates nothing. Cell
keys never held the names (they lead with the judge stage's new name and the probes' old one, as before): nothing is
recomputed.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from dialogbench.lake import manifest
from dialogbench.lake.legacy import Legacy
from dialogbench.lake.store import Lake, safe_name

log = logging.getLogger("dialogbench.lake")


def slice_patterns(legacy: Legacy) -> list[tuple[str, str]]:
    """``metric_snapshots.slice`` ("judge=j, protocol=<old>, …"): each old protocol as a whole key=value part, and
    its replacement."""
    return [(rf"(^|, )protocol={re.escape(old)}(, |$)", rf"\1protocol={new}\2")
            for old, new in legacy.protocols.items()]


def rename_stages(lake: Lake) -> int:
    """Rewrite every file that stores an old name (see the module; the names: ``lake.layout.legacy``, which the
    families declare); returns how many were rewritten."""
    legacy = lake.layout.legacy
    rewritten = 0
    for name, table in lake.layout.tables.items():
        columns = [c for c in (*legacy.renamed, "slice") if c in table.schema.names]
        if not columns:
            continue
        files = lake.snapshot(name)
        for path in files.superseded:  # an interrupted repair's: its rewrite holds the rows, and moves on its own
            manifest.remove(path)
        for path in files.good:  # a damaged file stays where it is, for `dialogbench verify` to quarantine
            if _rewrite(lake, name, path, columns, legacy):
                rewritten += 1
    return rewritten


def _rewrite(lake: Lake, table: str, path: Path, columns: list[str], legacy: Legacy) -> bool:
    try:
        data = pq.read_table(path)
    except (OSError, pa.ArrowException) as exc:  # damaged inside: the lake's checks quarantine it, as any other
        log.warning("%s: not readable (%s): left for `dialogbench verify`", path, exc)
        return False
    renamed = data
    for column in [c for c in columns if c in data.column_names]:
        values = data.column(column)
        new = values
        if column == "slice":
            for pattern, replacement in slice_patterns(legacy):
                new = pc.replace_substring_regex(new, pattern, replacement)
        else:
            for old, current in legacy.renamed[column].items():
                new = pc.if_else(pc.equal(new, old), current, new)
        renamed = renamed.set_column(renamed.column_names.index(column), column, new.cast(values.type))
    target = _target(lake, table, path, legacy)
    if renamed.equals(data) and target == path:
        return False
    relative = target.relative_to(lake.table_dir(table))
    partition = dict(part.split("=", 1) for part in relative.parent.parts)
    lake.write(table, renamed, partition=partition, name=target.name)
    if target != path:
        manifest.remove(path)
        _prune(path.parent, lake.table_dir(table))
    return True


def _prune(folder: Path, top: Path) -> None:
    """Remove ``folder`` and its parents below ``top`` while they are empty (a partition whose files all moved)."""
    while folder != top and folder.is_relative_to(top):
        try:
            folder.rmdir()
        except OSError:  # not empty (or gone): the rest stays
            return
        folder = folder.parent


def _target(lake: Lake, table: str, path: Path, legacy: Legacy) -> Path:
    """Where ``path``'s rows belong under the new names: its folders' ``key=value`` parts renamed, and a ``runs``
    file named for its stage (``<stage>[.<group>].parquet``) renamed."""
    parts = []
    for part in path.relative_to(lake.table_dir(table)).parent.parts:
        key, _, value = part.partition("=")
        olds = {safe_name(old): safe_name(new) for old, new in legacy.renamed.get(key, {}).items()}
        parts.append(f"{key}={olds.get(value, value)}")
    name = path.name
    if table == "runs":
        name = next((new + name[len(old):] for old, new in legacy.stages.items() if name.startswith(old + ".")), name)
    return lake.table_dir(table).joinpath(*parts, name)
