"""The ``dialogbench`` entry point (``pyproject.toml``'s console script, ``python -m dialogbench.cli``): parse the
command line, set up logging (redacted, Prefect's chatter left to its UI), call the command, and turn what a
command raises into one ``error:`` line and its exit code. The commands live in ``dialogbench/commands/``, one
module per group; the parser in ``dialogbench/commands/parser.py``."""

from __future__ import annotations

import logging
import os
import signal
import sys
from pathlib import Path

from dialogbench.commands.checking import cmd_plan, cmd_validate
from dialogbench.commands.lake_writes import cmd_catalog, cmd_labels, cmd_migrate
from dialogbench.commands.overrides import config_or_default
from dialogbench.commands.pages import cmd_explore, cmd_report, cmd_serve
from dialogbench.commands.parser import build_parser
from dialogbench.commands.querying import cmd_export, cmd_query
from dialogbench.commands.run import RUN_FAILED, cmd_run
from dialogbench.commands.run_failures import HEADLINE_MAX, failures_command, run_failed_lines
from dialogbench.commands.say import say

__all__ = ["DISK_FULL", "HEADLINE_MAX", "RUN_FAILED", "build_parser", "failures_command", "main", "run_failed_lines"]

DISK_FULL = 5   # any command: a write failed for a full disk or quota; what was committed before stays (lake.space)
# RUN_FAILED (4): `run`'s cells failed (dialogbench/commands/run.py); stopped by a signal: 128 + it (130, 143)


def _no_prefect_chatter(record: logging.LogRecord) -> bool:
    """The terminal's filter under ``run`` without ``--verbose``: Prefect's own lines below WARNING ("Finished in
    state Completed()", one per task run) are left to its UI. Prefect leaves a root handler of ours in place
    (its setup_logging keeps user handlers), so the lines reach the terminal only through this one."""
    return record.levelno >= logging.WARNING or not (record.name == "prefect" or record.name.startswith("prefect."))


def main(argv: list[str] | None = None) -> int:
    from dialogbench.botchat.seeds import DatasetError
    from dialogbench.commands.lake_access import NoLake
    from dialogbench.run.config import ConfigError
    from dialogbench.lake.lease import LakeNotWritable, LeaseHeld, not_writable
    from dialogbench.lake.links import LakeLinkError
    from dialogbench.lake.query import QueryRefused
    from dialogbench.lake.space import as_disk_full
    from dialogbench.lake.version import LakeFormatError
    from dialogbench.lake.commands import run_repair_command, run_verify_command
    from dialogbench.lake.delta.commands import run_compact_command, run_convert_command, run_vacuum_command
    from dialogbench.ratings.command import run_elo_command
    from dialogbench.run.registry import open_lake
    from dialogbench.stats.command import run_compare_command
    from dialogbench.serve import ServeError

    parser = build_parser()
    args = parser.parse_args(argv)
    config_or_default(parser, args)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    from dialogbench.text.redact import install as redact_logs, redact

    redact_logs()  # no API key reaches a log line (ours, Prefect's console, or its API's stored logs)
    verbose = args.command == "run" and getattr(args, "verbose", False)
    for noisy in ("httpx", "httpcore", "transformers", "prefect.server", *(() if verbose else ("vllm",))):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    # vLLM logs every engine setting at INFO from its own processes; its warnings and errors stay.
    # Set VLLM_LOGGING_LEVEL=INFO (or `run --verbose`) to see them all.
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "INFO" if verbose else "WARNING")
    if args.command == "run" and not verbose:  # progress is the display's (progress_display), not a line per task run
        for handler in logging.getLogger().handlers:  # the terminal's; Prefect's UI (its API handler) keeps them all
            handler.addFilter(_no_prefect_chatter)
    if args.command not in ("run", "validate", "plan"):  # theirs is the config's lake (run.config maps s3://)
        from dialogbench.lake.delta.commands import open_store_lake
        from dialogbench.lake.delta.mirror import is_store_uri

        for flag in ("lake", "to"):
            if is_store_uri(getattr(args, flag, None)):  # a lake on an object store: its local folder
                setattr(args, flag, str(open_store_lake(getattr(args, flag))))
    handlers = {"run": cmd_run, "validate": cmd_validate, "plan": cmd_plan,
                "query": cmd_query, "export": cmd_export, "catalog": cmd_catalog, "migrate": cmd_migrate,
                "labels": cmd_labels, "report": cmd_report, "explore": cmd_explore, "serve": cmd_serve,
                "elo": run_elo_command, "verify": lambda a: run_verify_command(a, open_lake(a.lake or "data_lake")),
                "repair": lambda a: run_repair_command(a, open_lake(a.lake or "data_lake")),
                "compare": lambda a: run_compare_command(a, open_lake(a.lake or "data_lake")),
                "convert": lambda a: run_convert_command(a, open_lake(a.lake or "data_lake"), open_lake(a.to)),
                "compact": lambda a: run_compact_command(a, open_lake(a.lake or "data_lake")),
                "vacuum": lambda a: run_vacuum_command(a, open_lake(a.lake or "data_lake"))}
    try:
        return handlers[args.command](args)
    except QueryRefused as exc:  # its message may quote the lake's text: one line, no control character
        from dialogbench.lake.terminal import ONE_LINE, escape

        say(f"error: {escape(redact(str(exc)), ONE_LINE)}", file=sys.stderr)
        return 2
    except (ConfigError, DatasetError, LakeFormatError, NoLake, ServeError, LakeLinkError, LakeNotWritable) as exc:
        say(f"error: {redact(str(exc))}", file=sys.stderr)  # a weights URL's password, a token the config holds
        return 2
    except LeaseHeld as exc:  # a distinct code, so a scheduler can tell "busy" from "broken"
        say(f"error: {redact(str(exc))}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:  # a Ctrl-C before `run` handles SIGINT (or in another command): no traceback
        say("stopped by SIGINT", file=sys.stderr)
        return 128 + signal.SIGINT
    except Exception as exc:  # a full disk anywhere (a lake write says which file; a report or DuckDB file may not)
        full = as_disk_full(exc, Path(getattr(args, "lake", None) or "data_lake"))
        if full is not None:
            say(f"error: {full}", file=sys.stderr)
            return DISK_FULL
        refused = not_writable(exc)  # a read-only file or folder met past the lease: one line naming it
        if refused is None:
            raise
        say(f"error: {redact(refused)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
