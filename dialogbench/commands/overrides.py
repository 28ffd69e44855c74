"""What ``run``, ``validate`` and ``plan`` take from the command line: the overrides of the config they hand to
``build_run``, and the demo config when ``--model`` comes without ``--config``."""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_CONFIG = Path(__file__).resolve().parents[2] / "configs" / "demo.yaml"


def overrides(args) -> dict:
    return {"limit": args.limit, "model": args.model, "models": args.models, "n": args.n, "judge": args.judge,
            "lake": args.lake, "board": args.board, "stop_timeout_s": getattr(args, "stop_timeout", None),
            "devices": args.devices, "canary": getattr(args, "canary", None)}


def config_or_default(parser: argparse.ArgumentParser, args) -> None:
    """``run``/``validate``/``plan`` need a config; with ``--model`` and none, the demo's (its protocols, judge and
    the box's engine settings), named relative to the working directory when it is below it."""
    if getattr(args, "command", None) not in ("run", "validate", "plan") or args.config is not None:
        return
    if not args.model:
        parser.error(f"{args.command}: --config is required (or --model SPEC to evaluate a model with "
                     "configs/demo.yaml's protocols and judge)")
    if not DEFAULT_CONFIG.is_file():
        parser.error(f"{args.command}: --model without --config reads {DEFAULT_CONFIG}, which is not there: "
                     "pass --config")
    try:
        args.config = str(DEFAULT_CONFIG.relative_to(Path.cwd()))
    except ValueError:
        args.config = str(DEFAULT_CONFIG)
