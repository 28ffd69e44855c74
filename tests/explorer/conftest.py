"""The explorer tests share one lake written by every built-in family's real stages (tests/explorer/lakes.py); a
test writes only under its ``reports/`` (the explorer, the report), never its tables."""

from __future__ import annotations

import pytest

from dialogbench.lake import Lake
from tests.explorer.lakes import staged_lake


@pytest.fixture(scope="session")
def lake(tmp_path_factory) -> Lake:
    return staged_lake(tmp_path_factory.mktemp("explorer") / "staged")
