"""The command line's value types (argparse ``type=`` functions: a bad value is one ``error:`` line naming what
was expected, exit 2) and the flags several commands share."""

from __future__ import annotations

import argparse


def comma_separated(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def comma_separated_ints(value: str) -> list[int]:
    try:
        return [int(v) for v in comma_separated(value)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {value!r}") from None


def positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}")
    return number


def positive_float(value: str) -> float:
    """A finite number above 0 (``plan --hours``)."""
    try:
        number = float(value)
    except ValueError:
        number = 0.0
    if not 0 < number < float("inf"):  # NaN fails too
        raise argparse.ArgumentTypeError(f"expected a positive number, got {value!r}")
    return number


def seconds(value: str) -> float:
    """A timeout that must end: more than 0 and at most an hour (``run --stop-timeout``, ``serve --timeout``)."""
    try:
        number = float(value)
    except ValueError:
        number = 0.0
    if not 0 < number <= 3600:  # NaN fails too
        raise argparse.ArgumentTypeError(f"expected seconds, more than 0 and at most 3600, got {value!r}")
    return number


def query_seconds(value: str) -> float:
    """A query's time limit: 0 for none."""
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not 0 <= number < float("inf"):
        raise argparse.ArgumentTypeError(f"expected seconds >= 0 (0: no limit), got {value!r}")
    return number


def memory_limit(value: str) -> str:
    from dialogbench.lake.limits import memory_size

    try:
        return memory_size(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def port(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = -1
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number 0-65535 (0: any free port), got {value!r}")
    return number


def allowed_host(value: str) -> str:
    from dialogbench.serve.hosts import allowed_name

    try:
        return allowed_name(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a host name or address (no scheme, port or path), got {value!r}") from None


def add_wait_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                        help="if another run is writing the lake, wait up to this long for it (default: refuse)")


def add_board_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--board", help="the board whose leaderboards to read (default: the lake's default board, "
                        "the latest run's made without CLI overrides); `select * from boards` lists them")


def add_raw_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--raw", action="store_true", help="csv: write text exactly as stored (by default a cell "
                        "starting with = + - @, a tab or a carriage return gets a leading apostrophe, so a "
                        "spreadsheet shows it rather than running it as a formula)")


def add_limit_flags(parser: argparse.ArgumentParser) -> None:
    """``query``/``export``: the query's time and memory limits (``dialogbench/lake/limits.py``)."""
    from dialogbench.lake.limits import DEFAULT_TIMEOUT_S

    parser.add_argument("--timeout", type=query_seconds, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                        help=f"stop the query after this long, exit 2 (default {DEFAULT_TIMEOUT_S:g}; 0: no limit)")
    parser.add_argument("--memory-limit", type=memory_limit, metavar="SIZE",
                        help="the memory the query may use, e.g. 4GB; more stops it, exit 2 (default: half of this "
                        "machine's memory)")
