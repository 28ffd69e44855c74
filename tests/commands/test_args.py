"""The command line's value types (dialogbench/commands/args.py): a bad ``--stop-timeout`` (not more than 0 and at
most an hour) or ``--n`` (not comma-separated integers) is a usage error, exit 2, naming the flag."""

from __future__ import annotations

import pytest

from dialogbench.cli import main


@pytest.mark.parametrize("value", ["0", "-3", "x", "3601"])
def test_a_bad_stop_timeout_is_a_usage_error(config_file, capsys, value):
    with pytest.raises(SystemExit) as info:
        main(["run", "--config", str(config_file()), "--stop-timeout", value])
    assert info.value.code == 2 and "--stop-timeout" in capsys.readouterr().err


def test_bad_n_flag_is_a_usage_error(config_file):
    with pytest.raises(SystemExit) as info:
        main(["validate", "--config", str(config_file()), "--n", "4,x"])
    assert info.value.code == 2
