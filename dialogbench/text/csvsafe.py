"""CSV cells that a spreadsheet reads as text, never as a formula.

The lake holds model and judge output as it was written, and a model can answer ``=HYPERLINK("http://…", "click")``
or ``@SUM(1+1)*cmd|' /C calc'!A0``. A CSV file opened in Excel, LibreOffice or Google Sheets runs a cell that starts
with ``=``, ``+``, ``-`` or ``@`` as a formula (a tab or carriage return first is skipped over by some of them), so
an analyst exporting verdicts would run what a model wrote. The OWASP rule ("CSV Injection") neutralises such a cell
by a leading apostrophe: every spreadsheet then shows the text as it is (the apostrophe hidden), and a program reading
the CSV sees one character more at the start of those cells only. Numbers are left alone (a column of type int or
double prints ``-5``); a text cell holding ``-5`` becomes ``'-5``.

``guard`` is the rule for one text, ``guard_array`` / ``guard_batch`` / ``guard_schema`` the same for Arrow data (a
batch's text columns, its column names: a PIVOT makes column names of the lake's values), applied where a CSV is
written for people (``dialogbench query --format csv``, ``dialogbench export`` to .csv); ``--raw`` writes the text
as stored."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet may read as the start of a formula
MARK = "'"
_PATTERN = "^([=+@\\t\\r-])"  # RE2, the same set: the first character only


def guard(text: str) -> str:
    """``text`` with a leading apostrophe when it starts with one of ``TRIGGERS``, else as it is."""
    return MARK + text if text.startswith(TRIGGERS) else text


def guard_cell(value):
    """``guard`` for a text cell; any other value (a number, None, a date) as it is."""
    return guard(value) if isinstance(value, str) else value


def guard_array(array: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """``guard`` applied to every value of a text column (string, large string, or a dictionary of them); any other
    column as it is."""
    kind = array.type
    if pa.types.is_dictionary(kind) and (pa.types.is_string(kind.value_type)
                                         or pa.types.is_large_string(kind.value_type)):
        return guard_array(array.cast(kind.value_type))
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return pc.replace_substring_regex(array, pattern=_PATTERN, replacement=MARK + "\\1", max_replacements=1)
    return array


def guard_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with each column name guarded, and each dictionary-of-text column as plain text (what
    ``guard_batch`` makes of it)."""
    fields = []
    for field in schema:
        kind = field.type
        if pa.types.is_dictionary(kind) and (pa.types.is_string(kind.value_type)
                                             or pa.types.is_large_string(kind.value_type)):
            kind = kind.value_type
        fields.append(pa.field(guard(field.name), kind, field.nullable, field.metadata))
    return pa.schema(fields, metadata=schema.metadata)


def guard_batch(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` with every text cell and every column name guarded (its schema is ``guard_schema`` of the input's)."""
    return pa.RecordBatch.from_arrays([guard_array(column) for column in batch.columns],
                                      schema=guard_schema(batch.schema))
