"""Warm slots (``dispatch.warm``, ``dialogbench.dispatch.box.WarmBox``): a slot process per GPU takes unit after unit
and is started again only when it has ended; a unit's state is read from its result line, and a unit without one
(its slot killed, or ended before reading it) crashed: it is sent again. A stand-in slot program
(``tests/dispatch/fake_slot.py``) replaces ``flows.work --serve``."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from dialogbench.dispatch.box import WarmBox


@pytest.fixture
def box(tmp_path, monkeypatch):
    monkeypatch.setattr(WarmBox, "SERVE", (str(Path(__file__).with_name("fake_slot.py")),))
    made = WarmBox(["0", "1"], env={}, logs=tmp_path / "logs")
    yield made
    made.close()


def _ended(box: WarmBox, started, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while (state := box.state(started)) == "RUNNING":
        assert time.monotonic() < deadline, "the unit never ended"
        time.sleep(0.05)
    return state


def test_units_one_after_the_other_share_one_slot_process_per_gpu(box):
    first = box.start("bot-a", 1, {"unit": "bot-a"}, attempt=1)
    assert first.gpus == ("0",) and not box.fits(2)  # the unit holds its GPU while it runs
    assert _ended(box, first) == "COMPLETED" and box.fits(2)
    second = box.start("bot-b", 1, {"unit": "bot-b"}, attempt=1)
    assert _ended(box, second) == "COMPLETED"
    assert second.process is first.process and box.started == 1  # one process, two units
    log = first.log.read_text()
    assert "=== bot-a ===" in log and "=== bot-b ===" in log


def test_a_slot_that_failed_a_unit_is_started_again_for_the_next(box):
    failed = box.start("bot-a", 1, {"unit": "bot-a", "exit": 1}, attempt=1)
    assert _ended(box, failed) == "FAILED"
    after = box.start("bot-b", 1, {"unit": "bot-b"}, attempt=1)  # sent at once: the old slot may not have ended yet
    assert after.process is not failed.process and box.started == 2
    assert _ended(box, after) == "COMPLETED"  # not the failed slot's exit code read as this unit's


def test_a_unit_whose_slot_dies_without_its_result_crashed_and_is_sent_again(box):
    killed = box.start("bot-a", 1, {"unit": "bot-a", "sleep_s": 30}, attempt=1)
    assert box.state(killed) == "RUNNING"
    box.kill(killed)
    assert box.state(killed) == "CRASHED" and box.fits(2)
    vanished = box.start("bot-b", 1, {"unit": "bot-b", "vanish": True}, attempt=1)
    assert _ended(box, vanished) == "CRASHED"  # the slot ended (exit 0) before answering


def test_a_unit_on_several_gpus_runs_apart_and_close_ends_every_slot(box, monkeypatch):
    idle = box.start("bot-a", 1, {"unit": "bot-a"}, attempt=1)
    assert _ended(box, idle) == "COMPLETED" and idle.process.poll() is None  # warm: it waits for the next unit
    started = []
    monkeypatch.setattr("dialogbench.dispatch.box.Box.start",
                        lambda self, unit, gpus, parameters, *, attempt: started.append((unit, gpus)))
    box.start("big", 2, {"unit": "big"}, attempt=1)
    assert started == [("big", 2)] and idle.process.poll() is not None  # the idle slot on its GPUs ended first
    box.slots["1"] = box._slot("1")
    box.close()
    assert not box.slots
