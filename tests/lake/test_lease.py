"""The lake lease: one writer at a time, the second waits or is refused naming the holder, re-entrant within
a process, and freed by the kernel when its holder dies (no stale lease)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from dialogbench.lake.lease import LeaseHeld, holder, lake_lease

HOLD = textwrap.dedent("""
    import sys, time
    from dialogbench.lake.lease import lake_lease
    with lake_lease(sys.argv[1], run_id="holder-run"):
        print("held", flush=True)
        time.sleep(float(sys.argv[2]))
""")


def hold_in_child(root, seconds: float) -> subprocess.Popen:
    child = subprocess.Popen([sys.executable, "-c", HOLD, str(root), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "held"
    return child


def test_a_second_writer_is_refused_naming_the_holder(tmp_path):
    child = hold_in_child(tmp_path, 30)
    try:
        with pytest.raises(LeaseHeld) as refused:
            with lake_lease(tmp_path):
                pass
        message = str(refused.value)
        assert f"pid {child.pid}" in message and "run holder-run" in message and "since 20" in message
        assert "--wait" in message
    finally:
        child.kill()
        child.wait()


def test_a_waiting_writer_gets_the_lake_when_the_holder_finishes(tmp_path, caplog):
    child = hold_in_child(tmp_path, 1.5)
    start = time.monotonic()
    with lake_lease(tmp_path, wait_s=30, poll_s=0.1, run_id="second"):
        waited = time.monotonic() - start
        assert holder(tmp_path)["run_id"] == "second" and holder(tmp_path)["pid"] == os.getpid()
    child.wait()
    assert 0.5 < waited < 25
    assert "is being written by run holder-run" in caplog.text


def test_a_wait_that_runs_out_is_refused(tmp_path):
    child = hold_in_child(tmp_path, 30)
    try:
        start = time.monotonic()
        with pytest.raises(LeaseHeld, match="after waiting 0.5 s"):
            with lake_lease(tmp_path, wait_s=0.5, poll_s=0.1):
                pass
        assert time.monotonic() - start >= 0.5
    finally:
        child.kill()
        child.wait()


def test_a_killed_holder_leaves_no_stale_lease(tmp_path):
    child = hold_in_child(tmp_path, 60)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert holder(tmp_path)["pid"] == child.pid  # its note is still there ...
    with lake_lease(tmp_path):                    # ... but the lake is free at once
        assert holder(tmp_path)["pid"] == os.getpid()


def test_the_lease_is_reentrant_within_a_process_and_names_the_run(tmp_path):
    with lake_lease(tmp_path):
        with lake_lease(tmp_path, run_id="flow-run"):
            assert holder(tmp_path)["run_id"] == "flow-run"
        with lake_lease(tmp_path):  # still held by this process after the inner block
            pass
    child = hold_in_child(tmp_path, 0)  # and released after the outer one
    child.wait()


def test_threads_of_the_holding_process_share_its_lease(tmp_path):
    """Prefect runs tasks in threads of the flow's process: they are inside the run's lease."""
    done = threading.Event()

    def outer():
        with lake_lease(tmp_path):
            done.wait(5)

    thread = threading.Thread(target=outer)
    thread.start()
    try:
        time.sleep(0.2)
        with lake_lease(tmp_path):  # same process: re-entrant, no deadlock
            pass
    finally:
        done.set()
        thread.join()


def test_commands_that_do_not_create_a_lake_leave_a_missing_one_missing(tmp_path):
    with lake_lease(tmp_path / "nowhere", create=False):
        pass
    assert not (tmp_path / "nowhere").exists()
