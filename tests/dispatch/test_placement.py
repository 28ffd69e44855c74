"""GPU placement without a GPU: device ids are strings handed to the run, the engine a stand-in for ``vllm.LLM``
that records the CUDA_VISIBLE_DEVICES it was started under."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from dialogbench.run.registry import run_for
from dialogbench.dispatch import box, placement
from dialogbench.dispatch.placement import Ask, Devices, PlacementError, place, visible_devices
from dialogbench.run.preflight import placement_problems
from dialogbench.run.registry import validate_config


def test_each_engine_gets_gpus_of_its_own_while_there_are_enough():
    asks = [Ask("a", 1, 0.9), Ask("b", 2, 0.9), Ask("c", 1, 0.9)]
    assert place(asks, ["0", "1", "2", "3"]) == {"b": ("0", "1"), "a": ("2",), "c": ("3",)}


def test_engines_share_a_gpu_when_their_memory_shares_add_up_to_at_most_one():
    assert place([Ask("spy", 1, 0.45), Ask("villager", 1, 0.45)], ["0"]) == {"spy": ("0",), "villager": ("0",)}
    assert place([Ask("a", 1, 0.3), Ask("b", 1, 0.3), Ask("c", 1, 0.4)], ["7"]) == {"a": ("7",), "b": ("7",),
                                                                                   "c": ("7",)}


def test_what_does_not_fit_is_named_with_the_reason_and_the_fix():
    with pytest.raises(PlacementError) as error:
        place([Ask("spy", 1, 0.9), Ask("villager", 1, 0.9)], ["0"])
    message = str(error.value)
    assert "villager (1 GPU at 0.9 of its memory) does not fit on GPUs 0" in message
    assert "with spy (1 GPU at 0.9 of its memory) loaded at the same time" in message
    assert "GPU 0: 0.9 taken by spy" in message and "--devices" in message and "gpu_memory_utilization" in message
    with pytest.raises(PlacementError) as error:  # more GPUs than there are: no memory share makes room
        place([Ask("big", 4, 0.9)], ["0", "1"])
    message = str(error.value)
    assert message.startswith("big (4 GPUs at 0.9 of its memory) does not fit: it splits over 4 GPUs")
    assert "the run has 2 (0,1)" in message and "tensor_parallel_size so that it splits over at most 2" in message
    assert "gpu_memory_utilization" not in message  # advice that cannot work is not given


def test_the_run_s_devices_come_from_the_flag_then_the_environment():
    assert visible_devices("0,1, 3") == ["0", "1", "3"]
    assert visible_devices(["4", "5"]) == ["4", "5"]
    assert visible_devices("none") == [] and visible_devices("-1") == []
    assert visible_devices(None, environ={"CUDA_VISIBLE_DEVICES": "2,3"}) == ["2", "3"]
    assert visible_devices(None, environ={"CUDA_VISIBLE_DEVICES": ""}) == []


def test_the_ledger_hands_out_free_gpus_first_and_takes_them_back():
    ledger = Devices(["0", "1"])
    assert ledger.take(Ask("a", 1, 0.5)) == ("0",)
    assert ledger.take(Ask("b", 1, 0.5)) == ("1",)  # a free GPU before a shared one
    assert ledger.take(Ask("c", 1, 0.5)) == ("0",)  # then sharing: 0.5 + 0.5
    assert ledger.take(Ask("a", 1, 0.5)) == ("0",)  # what it holds already
    with pytest.raises(PlacementError, match="GPU 0: 1 taken by a, c; GPU 1: 0.5 taken by b"):
        ledger.take(Ask("d", 1, 0.6))
    ledger.give_back("b")
    assert ledger.take(Ask("d", 1, 0.6)) == ("1",)


@pytest.fixture
def fake_vllm(monkeypatch):
    """``vllm.LLM`` replaced by a recorder of the CUDA_VISIBLE_DEVICES each engine started under."""
    started = []

    class LLM:
        def __init__(self, **kwargs):
            started.append((kwargs["model"], os.environ.get("CUDA_VISIBLE_DEVICES")))

        def get_tokenizer(self):
            return None

    module = types.ModuleType("vllm")
    module.LLM, module.__version__ = LLM, "0.0-test"
    module.envs = types.SimpleNamespace(disable_envs_cache=lambda: None)
    monkeypatch.setitem(sys.modules, "vllm", module)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    yield started
    placement.use("none")


def test_each_vllm_engine_starts_on_its_own_gpus_and_records_them(fake_vllm, monkeypatch):
    from dialogbench.backends import vllm_backend, watchdog

    monkeypatch.setattr(watchdog, "guard", lambda processes: None)
    placement.use("2,3")
    first = vllm_backend._Engine({"model": "m1"}, Ask("m1", 1, 0.9))
    second = vllm_backend._Engine({"model": "m2"}, Ask("m2", 1, 0.9))
    assert fake_vllm == [("m1", "2"), ("m2", "3")]
    assert first.version.endswith(" on GPU 2") and second.version.endswith(" on GPU 3")
    assert "CUDA_VISIBLE_DEVICES" not in os.environ  # set only while an engine starts
    with pytest.raises(PlacementError, match="m3 .* does not fit on GPUs 2,3"):
        vllm_backend._Engine({"model": "m3"}, Ask("m3", 1, 0.9))
    first.close()  # its GPU is free again
    vllm_backend._Engine({"model": "m3"}, Ask("m3", 1, 0.9))
    assert fake_vllm[-1] == ("m3", "2")


REPO = Path(__file__).resolve().parents[2]


def _config(tmp_path, *, share: float, devices: str | None, tp: int = 1, **extra):
    engine = {"gpu_memory_utilization": share, **({"tensor_parallel_size": tp} if tp > 1 else {})}
    models = [{"name": n, "backend": "vllm", "weights": f"org/{n}", "engine": engine} for n in ("spy-m", "villager-m")]
    return validate_config({
        "lake": str(tmp_path / "lake"), "models": models, "devices": devices,
        "gameeval": {"askguess": {"enabled": False}, "tofukingdom": {"enabled": False},
                     "spyfall": {"limit": 1, "pairs": [["spy-m", "villager-m"]]},
                     "word_pairs": str(REPO / "data_lake/raw/gameeval/spyfall_word_pairs.txt")}, **extra})


def test_validate_says_at_once_when_a_game_s_players_cannot_be_placed(tmp_path):
    [problem] = placement_problems(run_for(_config(tmp_path, share=0.9, devices="0")))
    assert problem.startswith("stage gameeval_spyfall: ") and "does not fit on GPUs 0" in problem
    assert placement_problems(run_for(_config(tmp_path, share=0.45, devices="0"))) == []  # they share GPU 0
    assert placement_problems(run_for(_config(tmp_path, share=0.9, devices="0,1"))) == []  # one GPU each
    assert placement_problems(run_for(_config(tmp_path, share=0.9, devices="none"))) == []  # no GPU: the CPU build


def test_validate_under_dispatch_places_each_unit_and_names_it(tmp_path):
    """Under dispatch: each unit on its own, named; a unit asking more GPUs than the run has gets advice that can
    work (no memory share makes room for a 4-way split on 2 GPUs)."""
    assert placement_problems(run_for(_config(tmp_path, share=0.9, devices="0,1", dispatch={}))) == []
    [problem] = placement_problems(run_for(_config(tmp_path, share=0.9, devices="0", dispatch={})))
    assert problem.startswith("unit spy-m+villager-m (gameeval_spyfall): ") and "does not fit on GPUs 0" in problem
    [problem] = placement_problems(run_for(_config(tmp_path, share=0.9, devices="0,1", dispatch={}, tp=4)))
    assert problem.startswith("unit spy-m+villager-m (gameeval_spyfall): ") and "splits over 4 GPUs" in problem
    assert "gpu_memory_utilization" not in problem and "the run has 2 (0,1)" in problem
    pool = {"deployment": "dialogbench-work/gpu"}  # a worker's GPUs, which this machine cannot see: not checked here
    assert placement_problems(run_for(_config(tmp_path, share=0.9, devices="0,1", dispatch=pool, tp=4))) == []


def test_a_unit_on_this_box_takes_the_gpus_its_engines_ask_for(tmp_path):
    config = validate_config({
        "lake": str(tmp_path / "lake"),
        "models": [{"name": "big", "backend": "vllm", "weights": "org/big", "engine": {"tensor_parallel_size": 2}},
                   {"name": "big-t0.7", "backend": "vllm", "weights": "org/big", "engine": {"tensor_parallel_size": 2},
                    "sampling": {"temperature": 0.7}},  # the same engine: counted once
                   {"name": "small", "backend": "vllm", "weights": "org/small"},
                   {"name": "api", "backend": "scripted", "script": ["hi"]}]})
    four = ["0", "1", "2", "3"]
    assert box.needs(config, ["big"], four) == 2 and box.needs(config, ["big", "big-t0.7"], four) == 2
    assert box.needs(config, ["big", "small"], four) == 3 and box.needs(config, ["big", "small"], ["0", "1"]) == 2
    assert box.needs(config, ["api"], four) == 1  # a slot, no engine


def test_units_on_this_box_hold_their_gpus_until_they_end(tmp_path, monkeypatch):
    """Real processes stand in for units (``python -c`` instead of the work flow): GPUs are handed out and back."""
    started_with = []

    class Popen(subprocess.Popen):
        def __init__(self, args, **kwargs):
            started_with.append(kwargs["env"]["CUDA_VISIBLE_DEVICES"])
            code = "import sys, json, time; p = json.load(sys.stdin); time.sleep(p['sleep']); sys.exit(p['code'])"
            super().__init__([sys.executable, "-c", code], **kwargs)

    monkeypatch.setattr(box.subprocess, "Popen", Popen)
    slots = box.Box(["0", "1", "2"], env=os.environ, logs=tmp_path / "logs")
    a = slots.start("a", 2, {"sleep": 0.2, "code": 0}, attempt=1)
    assert not slots.fits(2) and slots.fits(1)
    b = slots.start("b", 1, {"sleep": 30, "code": 0}, attempt=1)
    assert started_with == ["0,1", "2"] and slots.state(b) == "RUNNING"
    a.process.wait()
    assert slots.state(a) == "COMPLETED" and slots.free == ["0", "1"]
    slots.kill(b)  # presumed hung
    assert b.process.returncode < 0 and slots.free == ["0", "1", "2"]
    c = slots.start("c", 3, {"sleep": 0, "code": 3}, attempt=2)
    c.process.wait()
    assert slots.state(c) == "FAILED" and (tmp_path / "logs" / "c.2.log").exists()
    with pytest.raises(ValueError, match="needs the run's GPUs"):
        box.Box([], env=os.environ, logs=tmp_path)


def test_validate_refuses_dispatch_on_this_box_without_gpus(tmp_path):
    [problem] = placement_problems(run_for(_config(tmp_path, share=0.45, devices="none", dispatch={})))
    assert problem.startswith("dispatch: ") and "on the run's GPUs, and it has none" in problem
    assert placement_problems(run_for(_config(tmp_path, share=0.45, devices="0", dispatch={}))) == []
    assert placement_problems(run_for(_config(tmp_path, share=0.45, devices="none",
                                      dispatch={"deployment": "dialogbench-work/gpu"}))) == []  # the workers' GPUs


def test_one_ask_per_engine_whatever_shares_it():
    from dialogbench.run.config import ModelConfig

    def model(name, **extra):
        return ModelConfig(name=name, backend="vllm", weights="org/m", engine={"gpu_memory_utilization": 0.4}, **extra)

    here = {"VLLM_ENABLE_V1_MULTIPROCESSING": "0"}
    # two configs on one engine ask once; another engine_env is another engine (backends.engines keys it so)
    assert [a.model for a in placement.asks([model("a"), model("b"), model("c", engine_env=here),
                                             model("d", engine_env=here)])] == ["a", "c"]
