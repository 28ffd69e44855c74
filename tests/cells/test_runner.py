"""How a stage's cells finish (dialogbench/cells/runner.py): the chunks' reports summed into the stage's, and one
warning per stage when cells failed, with the first error redacted."""

from __future__ import annotations

import logging


from dialogbench.run import registry
from dialogbench.run.registry import load_config
from dialogbench.run.runs import StageReport
from tests.conftest import config_dict, written_config


def test_one_warning_per_stage_with_the_first_error_redacted(tmp_path, caplog):
    from dialogbench.cells.cell import Cell
    from dialogbench.cells.runner import finish_stage
    from dialogbench.cells.stage import Emit
    from dialogbench.run.registry import open_lake

    config = load_config(written_config(tmp_path))
    cells = [Cell(key=f"k{i}", item_id=f"i{i}", roles={"model": "bot-a"}) for i in range(3)]
    secret = "sk-" + "a" * 40
    emits = [Emit(open_lake(config.lake), "s", None, "run-1") for _ in range(2)]
    with caplog.at_level(logging.DEBUG, logger="dialogbench"):
        emits[0]([], [(cells[0], f"HTTP 401: bad key {secret}", None), (cells[1], "timeout", None)])
        emits[1]([], [(cells[2], "timeout", None)])
        chunks = [StageReport("s", failed=e.failed, first_error=e.first_error) for e in emits]
        report = finish_stage(config, "run-1", [StageReport("s", planned=5, cached=2), *chunks], "c.yaml",
                              lake=registry.open_lake(config.lake))
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert report.failed == 3 and report.first_error.startswith("HTTP 401") and secret not in report.first_error
    assert len(warnings) == 1 and "s: 3 of 3 cell(s) failed, first error: HTTP 401" in warnings[0].getMessage()
    assert secret not in warnings[0].getMessage()
