"""``dialogbench``: run the pipeline, check a config, query the lake (read-only) or export a query's result,
rebuild the catalog, render the report or the dialogue explorer, serve the reports over HTTP, migrate an older lake,
rate comparisons."""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import NoReturn

PREFECT_DEFAULTS = {
    # Prefect's temporary local API can take > 20 s to start on a 2-core machine.
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    # Our own progress lines (dialogbench.* loggers) show up in the Prefect UI.
    "PREFECT_LOGGING_EXTRA_LOGGERS": "dialogbench",
}


RUN_FAILED = 4  # `run`: cells failed (fail_on in the config); results, summary and report are still written
DISK_FULL = 5   # any command: a write failed for a full disk or quota; what was committed before stays (lake.space)
# `run` stopped by SIGTERM / SIGINT: 128 + the signal (143, 130), as a shell reports it (dialogbench/run/stopping.py)


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _ints(value: str) -> list[int]:
    try:
        return [int(v) for v in _csv(value)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {value!r}") from None


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}")
    return number


def _say(text: str = "", *, file=None) -> None:
    """Print a line for a terminal: its control characters made visible (``textsafe``), so model output in a
    leaderboard, or a name in a path, runs no escape sequence."""
    from dialogbench.text.textsafe import visible

    print(visible(text), file=file or sys.stdout)


def _seconds(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = 0.0
    if not 0 < number <= 3600:
        raise argparse.ArgumentTypeError(f"expected seconds, more than 0 and at most 3600, got {value!r}")
    return number


def _overrides(args) -> dict:
    return {"limit": args.limit, "model": args.model, "models": args.models, "n": args.n, "judge": args.judge,
            "lake": args.lake, "board": args.board, "stop_timeout_s": getattr(args, "stop_timeout", None),
            "devices": args.devices, "canary": getattr(args, "canary", None)}


DEFAULT_CONFIG = Path(__file__).resolve().parents[1] / "configs" / "demo.yaml"


def _config_or_default(parser: argparse.ArgumentParser, args) -> None:
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


def cmd_run(args) -> int:
    from dialogbench.run import progress_display, stopping
    from dialogbench.run.registry import build_run

    run = build_run(args.config, _overrides(args))  # fail fast, before Prefect starts; built once, handed down
    # SIGTERM / SIGINT stop the run cleanly from here on; each stage's progress is shown (a live line on a terminal)
    with stopping.handling(run.config.stop_timeout_s), progress_display.showing(stream=sys.stderr):
        try:
            return _run(args, run)
        except stopping.Stopped:  # stopped before the flow began (queueing for the lease, say)
            stopping.exit_now(stopping.requested())


def _run(args, run) -> int:
    from dialogbench.run import stopping
    from dialogbench.lake.version import refuse_foreign
    from dialogbench.run.preflight import preflight

    config = run.config
    refuse_foreign(run.lake)  # a folder that is not a lake: one line, before anything in it
    start = time.perf_counter()
    if config.reuse_unchanged_run and not args.rerun:  # before preflight (which imports the engines): nothing runs
        reuse = _unchanged_run(run)
        if reuse is not None:
            return _reused(args, run, reuse, start)
    preflight(run)
    for key, value in PREFECT_DEFAULTS.items():
        os.environ.setdefault(key, value)
    from dialogbench.lake.lease import lake_lease
    from dialogbench.lake.version import ensure_current
    from dialogbench.run.runs import StageReport

    with lake_lease(config.lake, wait_s=args.wait):  # a busy lake is refused before Prefect starts
        ensure_current(run.lake)  # so is an older one (migrate); a format-3 one is recorded in place
        stopping.check()
        from flows.pipeline import pipeline  # Prefect (and its API log handler) only now
        from flows.signals import own_session_server, stop_temporary_server
        from tasks.returned import result_of

        own_session_server()  # a Ctrl-C reaches the run, which records its stop there, not Prefect's server
        stopping.at_exit(stop_temporary_server)  # a stopped run exits without atexit
        from prefect.exceptions import TerminationSignal

        try:
            state = pipeline(config_path=args.config, lease_wait_s=args.wait, return_state=True, run=run,
                             **{k: v for k, v in _overrides(args).items() if v is not None})
        except TerminationSignal:  # a SIGTERM in the instant Prefect's own handler was in place (the flow starting)
            stopping.request(signal.SIGTERM)  # (its handler passed it on to ours, which asked already)
            raise stopping.Stopped() from None
    if state.is_cancelled() and stopping.requested():
        _stopped(args, state)
    result = result_of(state, raise_on_failure=False)
    if isinstance(result, BaseException):  # the flow raised: as before, the exception (a traceback, exit 1) ...
        from dialogbench.lake.space import as_disk_full

        raise as_disk_full(result, Path(config.lake)) or result  # ... but a full disk is one line (exit DISK_FULL)
    _say(f"\nrun {result['run_id']} finished in {time.perf_counter() - start:.1f}s  (lake: {result['lake']}, "
         f"board: {result['board']})")
    for stage in result["stages"]:
        _say("  " + StageReport(**stage).line())
    for family in run.families:
        if family.name in result["leaderboard"] and family.format_leaderboard:
            _say("\n" + family.format_leaderboard(config, result["leaderboard"][family.name]))
    botchat = config.sections().get("botchat")
    if botchat is not None and botchat.enabled and (botchat.arena.enabled or botchat.gteval.enabled):
        _say("\n" + _pairwise_leaderboards(run, result["board"]))
    if result.get("report"):
        _say(f"\nreport: {result['report']['html']}")
        if result["report"].get("explorer"):
            _say(f"explorer: {result['report']['explorer']}")
        if result["report"].get("tracking"):  # the config's tracking: logged to MLflow / W&B, or why not
            _say(f"tracking: {result['report']['tracking']}")
    if args.json:
        from dialogbench.text.redact import redact
        from dialogbench.text.textsafe import visible_tree

        Path(args.json).write_text(redact(json.dumps(visible_tree(result), indent=2, default=str)))
    failed = sum(s["failed"] for s in result["stages"])
    if failed:
        _say(f"\n{_count(failed, 'cell')} failed; see `{failures_command(result)}`. A rerun retries them.")
    if not state.is_completed():  # failed cells, as the config's fail_on counts them: results published, run Failed
        from dialogbench.text.redact import redact

        _say(redact("\n".join(run_failed_lines(result, config, state.message))), file=sys.stderr)
        return RUN_FAILED
    return 0


def _unchanged_run(run):
    """The board's latest run when this run would repeat it (``dialogbench/run/reuse.py``), else None, the reason logged.
    It only reads (no lease: a run writing the lake meanwhile is a changed lake); whatever stops the check (a lake of
    an older format, say) makes this a real run, which deals with it as any run does."""
    from dialogbench.run.reuse import unchanged_run

    log = logging.getLogger("dialogbench.reuse")
    try:
        reuse = unchanged_run(run)
    except Exception as exc:  # noqa: BLE001 - the check only saves time; a real run is always right
        log.warning("a new run: could not tell whether the board's latest run holds these results (%s: %s)",
                    type(exc).__name__, exc)
        return None
    if reuse.run_id is None:
        log.info("a new run: %s", reuse.reason)
        return None
    return reuse


def _reused(args, run, reuse, start: float) -> int:
    """The board's latest run answers this rerun (``dialogbench/run/reuse.py``): its stages as this run would count them
    (all cached), every leaderboard of the board, its report; ``--json`` gets the same summary shape, ``reused``."""
    from dialogbench.report.publish import FILE_OF_KIND, LEADERBOARDS
    from dialogbench.report.results import NoResults, format_all_leaderboards
    from dialogbench.run.runs import StageReport

    stages: dict[str, StageReport] = {}
    for size in reuse.sizes:
        if size.stage not in stages:
            stages[size.stage] = StageReport(stage=size.stage, planned=size.planned, cached=size.cached)
    _say(f"\nnothing to compute: {reuse.reason} (checked in {time.perf_counter() - start:.1f}s; --rerun records "
         "a new run anyway)")
    for stage in stages.values():
        _say("  " + stage.line())
    written = reuse.folder / LEADERBOARDS  # as the run wrote them; a run from before it did: read from the lake
    try:
        _say("\n" + (written.read_text().rstrip("\n") if written.is_file()
                      else format_all_leaderboards(run.lake, run.board, families=run.families)))
    except NoResults as exc:
        _say(f"\n({exc})")
    report = {kind: str(reuse.folder / name) for kind, name in FILE_OF_KIND.items() if (reuse.folder / name).exists()}
    if report.get("html"):
        _say(f"\nreport: {report['html']}")
        if report.get("explorer"):
            _say(f"explorer: {report['explorer']}")
    if args.json:
        summary = {"run_id": reuse.run_id, "reused": True, "reason": reuse.reason, "lake": run.config.lake,
                   "board": run.board, "finished_at": reuse.finished_at,
                   "stages": [s.to_dict() for s in stages.values()], "report": report, "failed": None}
        Path(args.json).write_text(json.dumps(summary, indent=2, default=str))
    return 0


def _count(n: int, word: str, plural: str | None = None) -> str:
    """``1 model``, ``2 models``."""
    return f"{n} {word if n == 1 else plural or word + 's'}"


def failures_command(result: dict) -> str:
    """The query listing a run's failed cells, with the run's lake (unless it is ./data_lake) and its board (when it
    is ad hoc, never the readers' default), so it can be pasted as it is."""
    import shlex

    from dialogbench.run.boards import is_adhoc

    words = ["dialogbench", "query"]
    lake = result.get("lake")
    if lake and Path(lake).resolve() != Path("data_lake").resolve():
        try:
            shown = str(Path(lake).resolve().relative_to(Path.cwd().resolve()))
        except ValueError:
            shown = str(lake)
        words += ["--lake", shlex.quote(shown)]
    if result.get("board") and is_adhoc(result["board"]):
        words += ["--board", shlex.quote(result["board"])]
    return " ".join([*words, '"select * from failures"'])


HEADLINE_MAX = 120
_PROBLEM_KINDS = {"judge checks": ("judge check", "judge checks"), "judge canary": ("judge canary", "judge canaries"),
                  "dispatch": ("lost dispatched unit", "lost dispatched units")}


def run_failed_lines(result: dict, config, message: str | None) -> list[str]:
    """Why a run failed (exit 4), as a headline of at most ``HEADLINE_MAX`` characters saying what failed and where
    to look, then one indented line per reason: each stage whose failed cells fail it under ``fail_on``, each
    family check's problem (a judge check, the canary's drift, a lost dispatched unit), then where to look."""
    from dialogbench.run.runs import failing_stages, failure_message

    policy = config.fail_on
    failing = failing_stages(result.get("stages") or [], policy)
    text = result.get("failed") or message or ""
    if result.get("failed_lines") is not None:  # the flow's own list, when it gives one
        problems = [line for line in result["failed_lines"] if line != failure_message(failing, policy)] \
            if failing else list(result["failed_lines"])
    elif failing and text.startswith(failure_message(failing, policy)):
        problems = _split_problems(text[len(failure_message(failing, policy)):].removeprefix("; "))
    else:
        problems = _split_problems(text) if not failing else [text]
    details = [f"{r.stage}: {r.failed} of {r.attempted} cells failed ({r.failed_share:.0%})" for r in failing]
    details += problems
    cells = sum(r.failed for r in failing)
    parts = [f"{_count(cells, 'failed cell')} in {_count(len(failing), 'stage')}"] if failing else []
    kinds: dict[str, int] = {}
    for problem in problems:
        kind = problem.split(": ", 1)[0] if problem.split(": ", 1)[0] in _PROBLEM_KINDS else ""
        kinds[kind] = kinds.get(kind, 0) + 1
    parts += [_count(n, *_PROBLEM_KINDS[kind]) for kind, n in kinds.items() if kind]
    parts += [_count(kinds[""], "other reason" if parts else "reason")] if "" in kinds else []
    run_id = result.get("run_id", "?")
    for shown in range(len(parts), -1, -1):  # as many of the parts as fit, the rest counted
        rest = f"{len(parts) - shown} more" if shown < len(parts) else ""
        headline = f"error: run {run_id} failed: {', '.join([*parts[:shown], *([rest] if rest else [])])} " \
                   "(details below)"
        if len(headline) <= HEADLINE_MAX:
            break
    where = []
    if failing:
        rule = ("any failed cell" if policy.cells == "any"
                else f"a stage with more than {policy.share:.1%} of its cells failed")
        where.append(f"failed cells ({rule} fails the run; the next run retries them): {failures_command(result)}")
    report = result.get("report") or {}
    if report.get("html"):
        where.append(f"report: {report['html']}")
    if message and " Report: " in message:  # served (report.url): the address a notification quotes
        where.append(f"served report: {message.rsplit(' Report: ', 1)[1]}")
    return [headline if len(headline) <= HEADLINE_MAX else headline[:HEADLINE_MAX - 1] + "…",
            *(f"  {line}" for line in [*details, *where])]


def _split_problems(text: str) -> list[str]:
    """A run's failure text (its reasons joined with '; ') as its reasons: a new one starts at a family check's
    prefix (``judge checks: ``, ``judge canary: ``, ``dispatch: ``); the reasons' own '; ' stay inside them."""
    import re

    kinds = "|".join(re.escape(kind) for kind in _PROBLEM_KINDS)
    return [part for part in re.split(rf"; (?=(?:{kinds}): )", text) if part]


def _pairwise_leaderboards(run, board: str) -> str:
    """BotChat's Arena and GTEval leaderboards (the family's table above is UniEval's), as ``dialogbench export``
    and results.json have them."""
    from dialogbench.report.results import NoResults, format_all_leaderboards

    try:
        return format_all_leaderboards(run.lake, board, views=("botchat_elo", "botchat_gteval"), families=run.families)
    except NoResults as exc:
        return f"(Arena and GTEval leaderboards: {exc})"


def _stopped(args, state) -> NoReturn:
    """A run stopped by SIGTERM / SIGINT (the flow ended Cancelled, the lease is let go): ``--json`` gets what the
    flow says was kept, the temporary server stops, no process of the run is left, one line, exit 130 / 143."""
    from dialogbench.run import stopping
    from tasks.returned import result_of

    data = result_of(state, raise_on_failure=False)
    if args.json and isinstance(data, dict):
        from dialogbench.text.redact import redact

        Path(args.json).write_text(redact(json.dumps(data, indent=2, default=str)))
    stopping.exit_now(stopping.requested())


def cmd_query(args) -> int:
    from dialogbench.lake.query import query, run
    from dialogbench.lake.terminal import print_csv, print_json, print_table

    # The printers run in the query's child process and print to its sys.stdout (a pipe to this one's): looked up
    # when they run, not now.
    if args.format == "csv":
        def printer(con, sql):
            print_csv(con, sql, out=sys.stdout, raw=args.raw)
    elif args.format == "json":
        def printer(con, sql):
            print_json(con, sql, out=sys.stdout)
    else:
        def printer(con, sql):
            relation = query(con, sql)
            if relation is not None:
                print_table(relation, sys.stdout, max_rows=args.max_rows)
    try:
        run(_data_lake(args.lake), args.sql, printer, board=args.board, limits=_limits(args))
    except BrokenPipeError:  # the reader (head, a pager) stopped reading: not an error of the query
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def cmd_export(args) -> int:
    from dialogbench.lake.query import export

    if args.sql is None:
        return _export_leaderboards(args)
    rows = export(_data_lake(args.lake), args.sql, Path(args.out), fmt=args.format, board=args.board,
                  limits=_limits(args), raw=args.raw)
    print(f"{rows} row(s) written to {args.out}")
    return 0


def _export_leaderboards(args) -> int:
    """``export`` without SQL: every leaderboard of ``--board`` (``dialogbench.report.results``) as one JSON file, or as a
    folder of one CSV per leaderboard, outside the lake; a board no run published to is refused (exit 2), named."""
    from dialogbench.lake.query import QueryRefused
    from dialogbench.report.results import NoResults, collect_results, write_csv, write_json
    from dialogbench.run import registry

    out = Path(args.out)
    fmt = args.format or ("json" if out.suffix.lower() == ".json" else None)
    if fmt not in ("json", "csv"):
        raise QueryRefused(f"{out}: the leaderboards export as --format json (one file) or --format csv (a folder, "
                           "one CSV per leaderboard)" + (f", not {fmt}" if fmt else ""))
    lake = _data_lake(args.lake)
    if out.resolve().is_relative_to(lake.root.resolve()):
        raise QueryRefused(f"{out}: is inside the lake {lake.root}; export writes outside it (runs own the lake)")
    if fmt == "csv" and out.exists() and not out.is_dir():
        raise QueryRefused(f"{out}: is a file; --format csv writes a folder of one CSV per leaderboard there")
    try:
        results = collect_results(lake, args.board, families=registry.families())
    except NoResults as exc:
        raise QueryRefused(str(exc)) from None
    if fmt == "json":
        write_json(results, out)
    else:
        write_csv(results, out, raw=args.raw)
    tables = results["leaderboards"]
    _say(f"{len(tables)} leaderboard(s), {sum(len(t['rows']) for t in tables.values())} row(s) of board "
         f"{results['board']} written to {out}{'' if fmt == 'json' else '/ (one CSV each)'}")
    return 0


def _data_lake(lake: str | None):
    """The lake a query or an export reads: one that exists, of this format, and is a lake at all."""
    from dialogbench.run.registry import open_lake
    from dialogbench.lake.version import refuse_not_a_lake

    _refuse_older(lake)
    refuse_not_a_lake(open_lake(_existing_lake(lake)))
    return open_lake(lake or "data_lake")


def _limits(args):
    from dialogbench.lake.limits import Limits

    return Limits(args.timeout, args.memory_limit) if args.memory_limit else Limits(args.timeout)


def _query_seconds(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not 0 <= number < float("inf"):
        raise argparse.ArgumentTypeError(f"expected seconds >= 0 (0: no limit), got {value!r}")
    return number


def _memory(value: str) -> str:
    from dialogbench.lake.limits import memory_size

    try:
        return memory_size(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _limit_flags(parser: argparse.ArgumentParser) -> None:
    from dialogbench.lake.limits import DEFAULT_TIMEOUT_S

    parser.add_argument("--timeout", type=_query_seconds, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                        help=f"stop the query after this long, exit 2 (default {DEFAULT_TIMEOUT_S:g}; 0: no limit)")
    parser.add_argument("--memory-limit", type=_memory, metavar="SIZE",
                        help="the memory the query may use, e.g. 4GB; more stops it, exit 2 (default: half of this "
                        "machine's memory)")


class NoLake(ValueError):
    """A reader pointed at a lake that does not exist (a typo would otherwise answer 0 rows)."""


def _refuse_older(lake: str | None) -> None:
    """Readers (query, export, catalog, report, explore): a missing lake or one of an older format is refused."""
    from dialogbench.run.registry import open_lake
    from dialogbench.lake.version import refuse_older

    refuse_older(open_lake(_existing_lake(lake)))


def _existing_lake(lake: str | None) -> Path:
    root = Path(lake or "data_lake")
    if not root.is_dir():
        raise NoLake(f"{root}: no lake here (no such directory); pass --lake DIR, or run `dialogbench run` first")
    return root


def _lease(args):
    """The lake's lease for a command that writes in it (a run writing the lake is waited for or refused)."""
    from dialogbench.lake.lease import lake_lease
    from dialogbench.lake.version import refuse_foreign
    from dialogbench.run.registry import open_lake

    refuse_foreign(open_lake(args.lake or "data_lake"))  # a folder that is not a lake gets no .lease file either
    return lake_lease(args.lake or "data_lake", wait_s=args.wait, create=False)


def cmd_migrate(args) -> int:
    from dialogbench.run.registry import open_lake
    from dialogbench.lake.version import migrate, refuse_foreign

    with _lease(args):  # refuses a folder that is not a lake before the lease writes its file there
        result = migrate(open_lake(args.lake or "data_lake"))
    print(f"lake format {result['from_format']} -> {result['to_format']}: "
          f"{result['plan_files_rewritten']} plan file(s) rewritten, {result['judgment_files_split']} judgments "
          f"file(s) split into their protocol's verdict table, {result['stage_files_renamed']} file(s) rewritten "
          "with the MT-Bench-101 judge stage's new name (mtbench101_judge)")
    return 0


def cmd_labels(args) -> int:
    """``labels import FILE``: a person's labels of judged items, stored as one more judge (human:<source>)."""
    from dialogbench.judge_checks.labels import LabelError, import_labels
    from dialogbench.run.registry import open_lake

    _refuse_older(args.lake)
    try:
        with _lease(args):
            summary = import_labels(lake=open_lake(args.lake or "data_lake"), path=args.file, source=args.source,
                                    board=args.board)
    except LabelError as exc:
        _say(f"error: {exc}", file=sys.stderr)
        return 2
    for line in summary.lines():
        print(line)
    return 0


def cmd_catalog(args) -> int:
    _refuse_older(args.lake)
    from dialogbench.run.registry import open_lake
    from dialogbench.lake.catalog import build_catalog

    with _lease(args):
        path = build_catalog(open_lake(args.lake or "data_lake"))
    print(path)
    return 0


def cmd_report(args) -> int:
    _refuse_older(args.lake)
    from dialogbench.run import registry
    from dialogbench.report.build import write_report

    lake = registry.open_lake(args.lake or "data_lake")
    with _lease(args):
        paths = write_report(lake, _reader_out(args, lake), board=args.board, families=registry.families())
    for kind, path in paths.items():
        _say(f"{kind}: {path}")
    return 0


def cmd_explore(args) -> int:
    _refuse_older(args.lake)
    from dialogbench.explorer import write_explorer
    from dialogbench.explorer.collect import DEFAULT_LIMIT
    from dialogbench.run import registry

    lake = registry.open_lake(args.lake or "data_lake")
    with _lease(args):
        path = write_explorer(lake, _reader_out(args, lake), limit=args.limit or DEFAULT_LIMIT, board=args.board,
                              families=registry.families())
    _say(f"explorer: {path}")
    return 0


def _reader_out(args, lake) -> Path:
    """Where ``report`` / ``explore`` write: ``--out``, else the board's folder (``--board``), else the top of
    ``<lake>/reports`` (the default board's latest report)."""
    from dialogbench.report.publish import board_folder

    if args.out:
        return Path(args.out)
    return board_folder(lake, args.board) if args.board else lake.root / "reports"


def cmd_serve(args) -> int:
    """Serve ``<lake>/reports`` until Ctrl-C or SIGTERM. Any lake format will do (the pages are already rendered),
    and no lease is taken: the server only reads, and the writers replace each file atomically."""
    from dialogbench.serve import make_server, serve_until_stopped, url

    reports = _existing_lake(args.lake) / "reports"
    server = make_server(reports=reports, host=args.host, port=args.port, verbose=args.verbose,
                         allow_hosts=args.allow_host, workers=args.max_connections, timeout_s=args.timeout)
    print(f"serving {reports} at {url(server)}  (read-only; Ctrl-C stops)", flush=True)
    stopped_by = serve_until_stopped(server)
    print(f"stopped ({stopped_by})", flush=True)
    return 0


def _port(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = -1
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number 0-65535 (0: any free port), got {value!r}")
    return number


def _allowed_host(value: str) -> str:
    from dialogbench.serve.hosts import allowed_name

    try:
        return allowed_name(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a host name or address (no scheme, port or path), got {value!r}") from None


def _serve_seconds(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = 0.0
    if not 0 < number <= 3600:  # NaN fails too
        raise argparse.ArgumentTypeError(f"expected seconds, more than 0 and at most 3600, got {value!r}")
    return number


def cmd_validate(args) -> int:
    """Exit 2 when the config points at something unusable (its lake, a dataset line: what `run` would refuse
    on any machine), 1 when only this machine lacks something (weights, an endpoint URL, an endpoint that does not
    answer or serve the model), else 0. Weights and endpoints are found without loading anything (``locate``)."""
    from dialogbench.run.config import ConfigError
    from dialogbench.run.registry import build_run
    from dialogbench.run.preflight import check, locate
    from dialogbench.text.redact import redact

    run = build_run(args.config, _overrides(args))
    config = run.config
    found = check(run)
    located = locate(run)
    found.machine.extend(located.machine)
    found.notes.extend(located.notes)
    if found.inputs:
        raise ConfigError("\n".join([*found.inputs, *found.machine]))
    families = ", ".join(f.name for f in run.enabled if f.protocol) or "none"
    checks = ", ".join(f.name for f in run.enabled if not f.protocol)
    _say(f"{args.config}: valid ({_count(len(config.models), 'model')}; families: {families}; "
         f"{_count(len(run.stages), 'stage')}; board: {config.board}"
         f"{'; checks: ' + checks if checks else ''})")
    for note in found.notes:
        _say(f"note: {redact(note)}")
    if found.machine:  # a problem can quote what the config says (weights not found: the URL, with its password)
        _say("not runnable on this machine yet:\n" + redact("\n".join(found.machine)))
        return 1
    return 0


def cmd_plan(args) -> int:
    """Per stage and model: the cells still to compute and the tokens they generate at most (and are expected to,
    from the lake's history); nothing is computed or written."""
    from dialogbench.run import sizing
    from dialogbench.run.registry import build_run

    run = build_run(args.config, _overrides(args))
    config = run.config
    rows = sizing.size(config, run.stages, run.lake)
    _say(f"{args.config}: what a run would compute now (lake: {config.lake}, board: {config.board})")
    _say(sizing.render(rows))
    first = [r.stage for r in rows if r.to_compute and not r.max_tokens and r.models == ""]
    if first:  # their outputs are inputs of later stages (BotChat's seeds): those are sized once they exist
        _say(f"note: {', '.join(first)} not computed yet: the stages reading what they make (BotChat's dialogues "
             f"and verdicts for the seeds) are sized after a run has computed them")
    if args.json:
        Path(args.json).write_text(json.dumps([r.to_dict() for r in rows], indent=2) + "\n")
    return 0


def _wait_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                        help="if another run is writing the lake, wait up to this long for it (default: refuse)")


def _board_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--board", help="the board whose leaderboards to read (default: the lake's default board, "
                        "the latest run's made without CLI overrides); `select * from boards` lists them")


def _raw_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--raw", action="store_true", help="csv: write text exactly as stored (by default a cell "
                        "starting with = + - @, a tab or a carriage return gets a leading apostrophe, so a "
                        "spreadsheet shows it rather than running it as a formula)")


def _version() -> str:
    """The installed distribution's version, else the package's own (a source tree that was never installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dialogbench")
    except PackageNotFoundError:
        import dialogbench

        return getattr(dialogbench, "__version__", "unknown")


def build_parser() -> argparse.ArgumentParser:
    from dialogbench.lake.commands import add_repair_parser, add_verify_parser
    from dialogbench.ratings.command import add_elo_parser
    from dialogbench.stats.command import add_compare_parser

    parser = argparse.ArgumentParser(prog="dialogbench", description=__doc__)
    parser.add_argument("--version", action="version", version=f"dialogbench {_version()}",
                        help="print dialogbench's version and exit")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, help_text in (("run", "run the pipeline (a Prefect flow) for a config"),
                            ("validate", "check a config without computing anything"),
                            ("plan", "size a run before it runs: per stage and model, the cells still to compute and "
                                     "the tokens they generate at most (expected, from the lake's history)")):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("--config", help="YAML config, e.g. configs/nightly.yaml (required, except with --model: "
                       "then configs/demo.yaml's protocols, judge and engine settings)")
        p.add_argument("--model", action="append", metavar="SPEC",
                       help="evaluate this model, no YAML needed (repeatable): vllm:PATH_OR_HF_NAME, or "
                       "openai:NAME@URL for an OpenAI-compatible endpoint (its key from the environment variable "
                       "DIALOGBENCH_OPENAI_API_KEY, never the command line); ALIAS= before it names it. Its other "
                       "settings are those of the config's first model of that backend; every family evaluates "
                       "exactly these models, on a board of their own (e.g. demo+model=NAME)")
        p.add_argument("--limit", type=_positive, metavar="K",
                       help="at most the first K items of every family (BotChat seeds, MT-Bench-101 dialogues per "
                       "task, GameEval words and word pairs): a limit the config sets lower stays")
        p.add_argument("--models", type=_csv, metavar="A,B",
                       help="keep only these of the config's models in every family (in the config's order); "
                       "Arena/SpyFall pairs and TofuKingdom assignments naming another model are dropped, and a "
                       "part left with nothing to play is off for this run (a note says which)")
        p.add_argument("--n", type=_ints, help="comma-separated N values for pass@N (generation runs to the largest)")
        p.add_argument("--judge", help="judge of every judged family (BotChat, MT-Bench-101): one of the config's models")
        p.add_argument("--lake", help="lake directory (default: the config's, data_lake)")
        p.add_argument("--board", help="the board to publish to (default: the config's board, or the file's stem; "
                       "with --limit/--models/--n/--judge, the config's board name with the overrides, e.g. "
                       "demo+limit=4, so an ad-hoc run never moves the config's leaderboards)")
        p.add_argument("--devices", metavar="0,1,…",
                       help="the GPUs the run's vLLM engines go on, each model on its own while there are enough "
                       "(default: the config's devices, else CUDA_VISIBLE_DEVICES, else every GPU nvidia-smi lists; "
                       "none: no GPU); with dispatch: {} in the config, also the slots its units run on at once")
        if name == "plan":
            p.add_argument("--json", help="also write the rows as JSON to this file")
        if name in ("run", "plan"):
            p.add_argument("--no-canary", dest="canary", action="store_false", default=None,
                           help="skip the judge canary this run (it repeats stored judgments at most once a night "
                           "per judge; canary.every: run in the config repeats them every run)")
        if name == "run":
            p.add_argument("--verbose", action="store_true",
                           help="log Prefect's task and flow states and vLLM's engine lines too (default: their warnings)")
            p.add_argument("--json", help="also write the run summary as JSON to this file")
            p.add_argument("--rerun", action="store_true",
                           help="record a new run even when the board's latest run holds this config's results "
                           "(config, code and lake unchanged, nothing to compute: with reuse_unchanged_run in the "
                           "config, such a run is said in seconds instead of recomputing nothing)")
            _wait_flag(p)
            p.add_argument("--stop-timeout", type=_seconds, metavar="SECONDS",
                           help="on SIGTERM / SIGINT, how long the chunk in flight may go on before its calls are "
                           "abandoned (default: the config's stop_timeout_s, 20); a second signal stops at once")
    q = sub.add_parser("query", help="run read-only SQL over the lake's views (seeds, generations, judgments, "
                       "runs, …); files outside the lake are out of reach")
    q.add_argument("sql", help="read-only SQL over the lake's views, e.g. \"select * from botchat_unieval\"")
    q.add_argument("--lake", help="lake directory (default: data_lake)")
    q.add_argument("--format", choices=("table", "csv", "json"), default="table")
    q.add_argument("--max-rows", type=_positive, default=100, help="rows the table format shows (default 100)")
    _raw_flag(q)
    _board_flag(q)
    _limit_flags(q)
    e = sub.add_parser("export", help="write a query's result to a file outside the lake (parquet, csv, json); "
                       "without SQL, every leaderboard of the board (json: what results.json beside each report "
                       "holds; csv: a folder with one <view>.csv per leaderboard)")
    e.add_argument("sql", nargs="?", help="read-only SQL over the lake's views whose result is written, e.g. "
                   "\"select * from botchat_unieval\"; leave it out to write every leaderboard of --board with "
                   "its intervals, measured flags and provenance")
    e.add_argument("--out", required=True, help="the file to write (its suffix picks the format); without SQL: "
                   "json writes this file; csv makes this folder and writes one CSV per leaderboard into it, "
                   "named after its view (botchat_elo.csv, gameeval_spyfall.csv, headline.csv, ...), each with "
                   "its own columns")
    e.add_argument("--format", choices=("parquet", "csv", "json"), help="override the format the suffix implies "
                   "(without SQL: json or csv; an --out ending in .json means json)")
    e.add_argument("--lake", help="lake directory (default: data_lake)")
    _raw_flag(e)
    _board_flag(e)
    _limit_flags(e)
    c = sub.add_parser("catalog", help="rebuild <lake>/catalog.duckdb (views for plain `duckdb`)")
    c.add_argument("--lake", help="lake directory (default: data_lake)")
    _wait_flag(c)
    m = sub.add_parser("migrate", help="bring a lake written by an older dialogbench to this version's format")
    m.add_argument("--lake", help="lake directory (default: data_lake)")
    _wait_flag(m)
    lb = sub.add_parser("labels", help="human labels of judged items, compared with the judges as one more judge "
                        "(judge_pairs, the explorer's agreement panel)")
    li = lb.add_subparsers(dest="labels_command", required=True).add_parser(
        "import", help="import a CSV or JSONL file of item, protocol, label (README, \"Judge agreement\"); importing a "
        "source again replaces its labels")
    li.add_argument("file", help="the labels: a CSV file (a header with at least item,protocol,label) or JSONL (one "
                    "{\"item\": …, \"protocol\": …, \"label\": …} a line), by its suffix")
    li.add_argument("--source", help="who labelled (default: the file's name without its suffix): compared as "
                    "judge human:<source>")
    li.add_argument("--lake", help="lake directory (default: data_lake)")
    _board_flag(li)
    _wait_flag(li)
    r = sub.add_parser("report", help="write the HTML + Markdown leaderboard report from the lake")
    r.add_argument("--lake", help="lake directory (default: data_lake)")
    r.add_argument("--out", help="output directory (default: <lake>/reports, or <lake>/reports/boards/<board> with "
                   "--board)")
    _board_flag(r)
    _wait_flag(r)
    x = sub.add_parser("explore", help="write the dialogue explorer (explorer.html): every judged dialogue, "
                       "MT-Bench-101 turn and game with the judge's raw output, filterable")
    x.add_argument("--lake", help="lake directory (default: data_lake)")
    x.add_argument("--out", help="output directory (default: <lake>/reports, or <lake>/reports/boards/<board> with "
                   "--board)")
    _board_flag(x)
    x.add_argument("--limit", type=_positive,
                   help="records per protocol on the page (default 1000; the rest are counted, not shown)")
    _wait_flag(x)
    s = sub.add_parser("serve", help="serve <lake>/reports over HTTP, read-only: an index of the latest report, "
                       "each board's and each run's")
    s.add_argument("--lake", help="lake directory (default: data_lake)")
    s.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; 0.0.0.0: every interface, behind a firewall)")
    s.add_argument("--port", type=_port, default=8765, help="port (default 8765; 0: any free port)")
    s.add_argument("--verbose", action="store_true", help="log one line per request (to stderr)")
    s.add_argument("--allow-host", action="append", default=[], type=_allowed_host, metavar="NAME",
                   help="also answer requests whose Host header is NAME (repeatable; answered without: localhost, "
                        "loopback addresses, the --host address and, bound to 0.0.0.0, this machine's name and "
                        "addresses)")
    s.add_argument("--max-connections", type=_positive, default=64, metavar="N",
                   help="requests answered at once (default 64; 4 times as many connections may wait for theirs)")
    s.add_argument("--timeout", type=_serve_seconds, default=5.0, metavar="SECONDS",
                   help="a connection that has not sent its request within SECONDS is closed, and so is one that "
                        "reads none of the answer for as long (default 5)")
    add_elo_parser(sub)
    add_compare_parser(sub)
    add_verify_parser(sub)
    add_repair_parser(sub)
    return parser


def _no_prefect_chatter(record: logging.LogRecord) -> bool:
    """The terminal's filter under ``run`` without ``--verbose``: Prefect's own lines below WARNING ("Finished in
    state Completed()", one per task run) are left to its UI. Prefect leaves a root handler of ours in place
    (its setup_logging keeps user handlers), so the lines reach the terminal only through this one."""
    return record.levelno >= logging.WARNING or not (record.name == "prefect" or record.name.startswith("prefect."))


def main(argv: list[str] | None = None) -> int:
    from dialogbench.botchat.seeds import DatasetError
    from dialogbench.run.config import ConfigError
    from dialogbench.lake.lease import LakeNotWritable, LeaseHeld, not_writable
    from dialogbench.lake.links import LakeLinkError
    from dialogbench.lake.query import QueryRefused
    from dialogbench.lake.space import as_disk_full
    from dialogbench.lake.version import LakeFormatError
    from dialogbench.lake.commands import run_repair_command, run_verify_command
    from dialogbench.ratings.command import run_elo_command
    from dialogbench.run.registry import open_lake
    from dialogbench.stats.command import run_compare_command
    from dialogbench.serve import ServeError

    parser = build_parser()
    args = parser.parse_args(argv)
    _config_or_default(parser, args)
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
    handlers = {"run": cmd_run, "query": cmd_query, "catalog": cmd_catalog, "validate": cmd_validate, "plan": cmd_plan,
                "report": cmd_report, "explore": cmd_explore, "migrate": cmd_migrate, "export": cmd_export, "labels": cmd_labels,
                "elo": run_elo_command, "verify": lambda a: run_verify_command(a, open_lake(a.lake or "data_lake")),
                "repair": lambda a: run_repair_command(a, open_lake(a.lake or "data_lake")),
                "serve": cmd_serve, "compare": lambda a: run_compare_command(a, open_lake(a.lake or "data_lake"))}
    try:
        return handlers[args.command](args)
    except QueryRefused as exc:  # its message may quote the lake's text: one line, no control character
        from dialogbench.lake.terminal import ONE_LINE, escape

        _say(f"error: {escape(redact(str(exc)), ONE_LINE)}", file=sys.stderr)
        return 2
    except (ConfigError, DatasetError, LakeFormatError, NoLake, ServeError, LakeLinkError, LakeNotWritable) as exc:
        _say(f"error: {redact(str(exc))}", file=sys.stderr)  # a weights URL's password, a token the config holds
        return 2
    except LeaseHeld as exc:  # a distinct code, so a scheduler can tell "busy" from "broken"
        _say(f"error: {redact(str(exc))}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:  # a Ctrl-C before `run` handles SIGINT (or in another command): no traceback
        _say("stopped by SIGINT", file=sys.stderr)
        return 128 + signal.SIGINT
    except Exception as exc:  # a full disk anywhere (a lake write says which file; a report or DuckDB file may not)
        full = as_disk_full(exc, Path(getattr(args, "lake", None) or "data_lake"))
        if full is not None:
            _say(f"error: {full}", file=sys.stderr)
            return DISK_FULL
        refused = not_writable(exc)  # a read-only file or folder met past the lease: one line naming it
        if refused is None:
            raise
        _say(f"error: {redact(refused)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
