"""GPU placement without a GPU: device ids are strings handed to the run, the engine a stand-in for ``vllm.LLM``
that records the CUDA_VISIBLE_DEVICES it was started under."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import pytest

from dialogbench import placement
from dialogbench.placement import Ask, Devices, PlacementError, place, visible_devices
from dialogbench.preflight import placement_problems
from dialogbench.registry import validate_config


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
    with pytest.raises(PlacementError, match=r"big \(4 GPUs at 0.9 of its memory\) does not fit on GPUs 0,1"):
        place([Ask("big", 4, 0.9)], ["0", "1"])


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


REPO = Path(__file__).resolve().parents[1]


def _config(tmp_path, *, share: float, devices: str | None):
    engine = {"gpu_memory_utilization": share}
    models = [{"name": n, "backend": "vllm", "weights": f"org/{n}", "engine": engine} for n in ("spy-m", "villager-m")]
    return validate_config({
        "lake": str(tmp_path / "lake"), "models": models, "devices": devices,
        "gameeval": {"askguess": {"enabled": False}, "tofukingdom": {"enabled": False},
                     "spyfall": {"limit": 1, "pairs": [["spy-m", "villager-m"]]},
                     "word_pairs": str(REPO / "data_lake/raw/gameeval/spyfall_word_pairs.txt")}})


def test_validate_says_at_once_when_a_game_s_players_cannot_be_placed(tmp_path):
    [problem] = placement_problems(_config(tmp_path, share=0.9, devices="0"))
    assert problem.startswith("stage gameeval_spyfall: ") and "does not fit on GPUs 0" in problem
    assert placement_problems(_config(tmp_path, share=0.45, devices="0")) == []  # they share GPU 0
    assert placement_problems(_config(tmp_path, share=0.9, devices="0,1")) == []  # one GPU each
    assert placement_problems(_config(tmp_path, share=0.9, devices="none")) == []  # no GPU: the CPU build
