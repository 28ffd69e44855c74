"""How the readers open a lake (dialogbench/commands/lake_access.py): a ``--lake`` that does not exist is one
``error:`` line naming the path (exit 2), not 0 rows or an empty report, and nothing is created."""

from __future__ import annotations

import pytest

from dialogbench.cli import main


@pytest.mark.parametrize("command", [["query", "select 1"], ["export", "select 1", "--out", "x.csv"], ["catalog"],
                                     ["report"]])
def test_readers_refuse_a_lake_that_does_not_exist(tmp_path, capsys, command):
    """A typo in --lake answers with an error naming the path, not 0 rows or an empty report; nothing is created."""
    missing = tmp_path / "no-such-lake"
    assert main([*command, "--lake", str(missing)]) == 2
    err = capsys.readouterr().err
    assert f"{missing}: no lake here" in err and "Traceback" not in err
    assert not missing.exists()
