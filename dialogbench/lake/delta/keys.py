"""A cell's key: the columns that name it, the rows of a batch made unique on them, and the MERGE condition that
matches a new row to a stored one.

``insert_missing`` is a MERGE whose only action is "insert when not matched", so it can only be as good as its key:
a row whose key holds a null matches nothing (``NULL = NULL`` is not true in SQL) and would be inserted again on every
retry, and two rows of one batch with the same key would both be inserted, as neither is in the table yet. Both are
settled here, before the MERGE: a null in a key column is refused, naming the column, and a batch keeps the first row
of each key."""

from __future__ import annotations

from typing import Sequence

import pyarrow as pa
import pyarrow.compute as pc

_ROW = "__dialogbench_row"


def check_keys(data: pa.Table, keys: Sequence[str], *, where: str) -> list[str]:
    """``keys`` as a list, when it is non-empty, has no repeats, and each is a column of ``data`` with no null; a
    ValueError that starts with ``where`` and names the column otherwise."""
    if isinstance(keys, str) or not list(keys):
        raise ValueError(f"{where}: give the cell key as a list of column names")
    keys = list(keys)
    if len(set(keys)) != len(keys):
        raise ValueError(f"{where}: a key column is named twice in {keys}")
    for key in keys:
        if key not in data.column_names:
            raise ValueError(f"{where}: key column {key!r} is not a column of the data "
                             f"({', '.join(data.column_names)})")
        if data.column(key).null_count:
            raise ValueError(f"{where}: key column {key!r} holds {data.column(key).null_count} null(s); a cell's key "
                             "must be complete (a null matches nothing, so the row would be inserted every time)")
    return keys


def unique_on(data: pa.Table, keys: Sequence[str]) -> pa.Table:
    """``data`` with only the first row of each key, in the original order."""
    if data.num_rows < 2:
        return data
    numbered = data.select(list(keys)).append_column(_ROW, pa.array(range(data.num_rows), pa.int64()))
    first = numbered.group_by(list(keys), use_threads=False).aggregate([(_ROW, "min")]).column(f"{_ROW}_min")
    if len(first) == data.num_rows:
        return data
    return data.take(pc.take(first, pc.sort_indices(first)))  # the first rows, in their order in ``data``


def quote(name: str) -> str:
    """A column name as a SQL identifier for delta-rs' (DataFusion's) predicate parser."""
    return '"' + name.replace('"', '""') + '"'


def merge_predicate(keys: Sequence[str], *, target: str = "t", source: str = "s") -> str:
    """``t."k1" = s."k1" AND …``: a stored row matches a new one when every key column is equal (no key is null:
    ``check_keys``)."""
    return " AND ".join(f"{target}.{quote(k)} = {source}.{quote(k)}" for k in keys)
