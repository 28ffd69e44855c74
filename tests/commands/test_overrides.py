"""What the command line overrides of a config (dialogbench/commands/overrides.py): ``--stop-timeout`` is the
config's ``stop_timeout_s``, overridden without a board of its own (a stop changes no result), and a bad value in
the file is refused by ``validate`` with exit 2."""

from __future__ import annotations

from dialogbench.cli import main
from tests.conftest import config_dict


def test_the_stop_timeout_is_a_config_field_the_flag_overrides_without_a_board_of_its_own(config_file, lake_dir,
                                                                                          capsys):
    from dialogbench.run.registry import load_config

    path = config_file({**config_dict(lake_dir), "stop_timeout_s": 45})
    assert load_config(path).stop_timeout_s == 45
    overridden = load_config(path, {"stop_timeout_s": 5.5})
    assert overridden.stop_timeout_s == 5.5 and overridden.board == "config"  # a stop changes no result
    bad = config_file({**config_dict(lake_dir), "stop_timeout_s": 0})
    assert main(["validate", "--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "stop_timeout_s" in err
