"""Family subflows run without a heartbeat thread of their own (Prefect joins it at each subflow's end, a
second per subflow); the pipeline flow keeps its heartbeat."""

from prefect.settings import get_current_settings

from tasks.subflows import subflows_without_heartbeats


def test_subflows_run_without_heartbeats_and_the_setting_comes_back():
    before = get_current_settings().flows.heartbeat_frequency
    assert before is not None  # Prefect's default: the pipeline flow sends heartbeats
    with subflows_without_heartbeats():
        assert get_current_settings().flows.heartbeat_frequency is None
    assert get_current_settings().flows.heartbeat_frequency == before
