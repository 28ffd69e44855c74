"""``dialogbench validate`` and ``dialogbench plan``: a config checked, or a run sized, before anything runs. Both
build the Run as ``run`` does (``dialogbench.run.registry.build_run``); nothing is computed or written, and neither
imports Prefect."""

from __future__ import annotations

import json
from pathlib import Path

from dialogbench.commands.overrides import overrides
from dialogbench.commands.say import count, say


def cmd_validate(args) -> int:
    """Exit 2 when the config points at something unusable (its lake, a dataset line: what `run` would refuse
    on any machine), 1 when only this machine lacks something (weights, an endpoint URL, an endpoint that does not
    answer or serve the model), else 0. Weights and endpoints are found without loading anything (``locate``)."""
    from dialogbench.run.config import ConfigError
    from dialogbench.run.registry import build_run
    from dialogbench.run.preflight import check, locate
    from dialogbench.text.redact import redact

    run = build_run(args.config, overrides(args))
    config = run.config
    found = check(run)
    located = locate(run)
    found.machine.extend(located.machine)
    found.notes.extend(located.notes)
    if found.inputs:
        raise ConfigError("\n".join([*found.inputs, *found.machine]))
    families = ", ".join(f.name for f in run.enabled if f.protocol) or "none"
    checks = ", ".join(f.name for f in run.enabled if not f.protocol)
    what = (f"{count(len(config.models), 'model')}; families: {families}; {count(len(run.stages), 'stage')}; "
            f"board: {config.board}{'; checks: ' + checks if checks else ''}")
    if found.machine:  # the first line says what the exit code says: 1, not runnable here
        say(f"{args.config}: not runnable on this machine yet ({count(len(found.machine), 'problem')} below, exit 1); "
            f"the config itself is valid ({what})")
    else:
        say(f"{args.config}: valid ({what})")
    for note in found.notes:
        say(f"note: {redact(note)}")
    if found.machine:  # a problem can quote what the config says (weights not found: the URL, with its password)
        say("not runnable on this machine yet:\n" + redact("\n".join(found.machine)))
        return 1
    return 0


def cmd_plan(args) -> int:
    """Per stage and model: the cells still to compute and the tokens they generate at most and are expected to (the
    lake's history, else the protocol's lengths); per unit, its hours and GPU-hours at its throughput; with
    ``--hours N``, whether the night fits in N hours and on how many GPUs. Nothing is computed or written."""
    from dialogbench.run import capacity, sizing
    from dialogbench.run.registry import build_run

    run = build_run(args.config, overrides(args))
    config = run.config
    rows, made = sizing.size_fresh(config, run.stages, run.lake)
    say(f"{args.config}: what a run would compute now (lake: {config.lake}, board: {config.board})")
    say(sizing.render(rows))
    first = [r.stage for r in rows if r.to_compute and not r.max_tokens and r.models == "" and r.stage not in made]
    if made:  # a fresh lake: the later stages sized on what these make (BotChat's seeds), made in a scratch lake
        say(f"note: a fresh lake: the stages after {', '.join(made)} are sized as if {'it' if len(made) == 1 else 'they'}"
            f" had run (on what {'it makes' if len(made) == 1 else 'they make'}, in a scratch lake, thrown away); a "
            f"judge's cells wait for the dialogues and answers they judge")
    if first:  # their outputs are inputs of later stages (BotChat's seeds): those are sized once they exist
        say(f"note: {', '.join(first)} not computed yet: the stages reading what they make (BotChat's dialogues "
            f"and verdicts for the seeds) are sized after a run has computed them")
    known = capacity.throughputs(config, run.lake)
    timed = capacity.hours_of(rows, run.stages, config, known)
    units = capacity.per_unit(timed, known)
    if units:
        say("\nper unit: its tokens (expected, else the bound) at its throughput (config: the model's "
            "throughput_tok_s; lake: measured in past runs), its hours, GPUs and GPU-hours")
        say(capacity.render_units(units))
    verdict = None
    if args.hours is not None:
        box = len(config.devices) if config.devices else None
        verdict = capacity.fit(timed, hours=args.hours, box_gpus=box)
        for line in verdict.lines():
            say(line)
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": [r.to_dict() for r in rows], "units": units,
                                               "fit": None if verdict is None else verdict.to_dict()},
                                              indent=2) + "\n")
    return 0
