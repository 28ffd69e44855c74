"""The command line's grammar: every ``dialogbench`` command, its flags and their help (``elo``, ``compare``,
``verify`` and ``repair`` add their own, beside their code). Building it imports no command's machinery: each
command imports what it needs when it runs, so ``--help`` or a bad flag never waits for Prefect."""

from __future__ import annotations

import argparse

from dialogbench.commands.args import (add_board_flag, add_limit_flags, add_raw_flag, add_wait_flag, allowed_host,
                                       comma_separated, comma_separated_ints, port, positive_float, positive_int,
                                       seconds)

DESCRIPTION = """``dialogbench``: run the pipeline, check a config, query the lake (read-only) or export a query's result,
rebuild the catalog, render the report or the dialogue explorer, serve the reports over HTTP, migrate an older lake,
rate comparisons."""


def installed_version() -> str:
    """The installed distribution's version, else the package's own (a source tree that was never installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dialogbench")
    except PackageNotFoundError:
        import dialogbench

        return getattr(dialogbench, "__version__", "unknown")


def build_parser() -> argparse.ArgumentParser:
    from dialogbench.lake.commands import add_repair_parser, add_verify_parser
    from dialogbench.lake.delta.commands import add_delta_parsers
    from dialogbench.ratings.command import add_elo_parser
    from dialogbench.stats.command import add_compare_parser

    parser = argparse.ArgumentParser(prog="dialogbench", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"dialogbench {installed_version()}",
                        help="print dialogbench's version and exit")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_config_commands(sub)
    _add_lake_commands(sub)
    _add_page_commands(sub)
    add_elo_parser(sub)
    add_compare_parser(sub)
    add_verify_parser(sub)
    add_repair_parser(sub)
    add_delta_parsers(sub)
    return parser


def _add_config_commands(sub) -> None:
    """``run``, ``validate``, ``plan``: a config (or ``--model``) and the overrides they share."""
    for name, help_text in (("run", "run the pipeline (a Prefect flow) for a config"),
                            ("validate", "check a config without computing anything"),
                            ("plan", "size a run before it runs: per stage and model, the cells still to compute and "
                                     "the tokens they generate (at most, and expected from the lake's history or "
                                     "the protocol's lengths); per unit, hours and GPU-hours; --hours N: does it fit")):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("--config", help="YAML config, e.g. configs/nightly.yaml (required, except with --model: "
                       "then configs/demo.yaml's protocols, judge and engine settings)")
        p.add_argument("--model", action="append", metavar="SPEC",
                       help="evaluate this model, no YAML needed (repeatable): vllm:PATH_OR_HF_NAME, or "
                       "openai:NAME@URL for an OpenAI-compatible endpoint (its key from the environment variable "
                       "DIALOGBENCH_OPENAI_API_KEY, never the command line); ALIAS= before it names it. Its other "
                       "settings are those of the config's first model of that backend; every family evaluates "
                       "exactly these models, on a board of their own (e.g. demo+model=NAME)")
        p.add_argument("--limit", type=positive_int, metavar="K",
                       help="at most the first K items of every family (BotChat seeds, MT-Bench-101 dialogues per "
                       "task, GameEval words and word pairs): a limit the config sets lower stays")
        p.add_argument("--models", type=comma_separated, metavar="A,B",
                       help="keep only these of the config's models in every family (in the config's order); "
                       "Arena/SpyFall pairs and TofuKingdom assignments naming another model are dropped, and a "
                       "part left with nothing to play is off for this run (a note says which)")
        p.add_argument("--n", type=comma_separated_ints, help="comma-separated N values for pass@N (generation runs to the largest)")
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
            p.add_argument("--json", help="also write the rows, units and verdict as JSON to this file")
            p.add_argument("--hours", type=positive_float, metavar="N",
                           help="does the night fit in N hours? the GPUs (and boxes of the config's devices) it "
                           "needs, from each unit's tokens at its model's throughput (throughput_tok_s in the "
                           "config, else measured in the lake)")
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
            add_wait_flag(p)
            p.add_argument("--stop-timeout", type=seconds, metavar="SECONDS",
                           help="on SIGTERM / SIGINT, how long the chunk in flight may go on before its calls are "
                           "abandoned (default: the config's stop_timeout_s, 20); a second signal stops at once")


def _add_lake_commands(sub) -> None:
    """``query``, ``export``, ``catalog``, ``migrate``, ``labels``: the lake read or kept."""
    q = sub.add_parser("query", help="run read-only SQL over the lake's views (seeds, generations, judgments, "
                       "runs, …); files outside the lake are out of reach")
    q.add_argument("sql", help="read-only SQL over the lake's views, e.g. \"select * from botchat_unieval\"")
    q.add_argument("--lake", help="lake directory (default: data_lake)")
    q.add_argument("--format", choices=("table", "csv", "json"), default="table")
    q.add_argument("--max-rows", type=positive_int, default=100, help="rows the table format shows (default 100)")
    add_raw_flag(q)
    add_board_flag(q)
    add_limit_flags(q)
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
    add_raw_flag(e)
    add_board_flag(e)
    add_limit_flags(e)
    c = sub.add_parser("catalog", help="rebuild <lake>/catalog.duckdb (views for plain `duckdb`)")
    c.add_argument("--lake", help="lake directory (default: data_lake)")
    add_wait_flag(c)
    m = sub.add_parser("migrate", help="bring a lake written by an older dialogbench to this version's format")
    m.add_argument("--lake", help="lake directory (default: data_lake)")
    add_wait_flag(m)
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
    add_board_flag(li)
    add_wait_flag(li)


def _add_page_commands(sub) -> None:
    """``report``, ``explore``, ``serve``: the lake's pages written or served."""
    r = sub.add_parser("report", help="write the HTML + Markdown leaderboard report from the lake")
    r.add_argument("--lake", help="lake directory (default: data_lake)")
    r.add_argument("--out", help="output directory (default: <lake>/reports, or <lake>/reports/boards/<board> with "
                   "--board)")
    add_board_flag(r)
    add_wait_flag(r)
    x = sub.add_parser("explore", help="write the dialogue explorer (explorer.html): every judged dialogue, "
                       "MT-Bench-101 turn and game with the judge's raw output, filterable")
    x.add_argument("--lake", help="lake directory (default: data_lake)")
    x.add_argument("--out", help="output directory (default: <lake>/reports, or <lake>/reports/boards/<board> with "
                   "--board)")
    add_board_flag(x)
    x.add_argument("--limit", type=positive_int,
                   help="records per protocol on the page (default 1000; the rest are counted, not shown)")
    add_wait_flag(x)
    s = sub.add_parser("serve", help="serve <lake>/reports over HTTP, read-only: an index of the latest report, "
                       "each board's and each run's")
    s.add_argument("--lake", help="lake directory (default: data_lake)")
    s.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; 0.0.0.0: every interface, behind a firewall)")
    s.add_argument("--port", type=port, default=8765, help="port (default 8765; 0: any free port)")
    s.add_argument("--verbose", action="store_true", help="log one line per request (to stderr)")
    s.add_argument("--allow-host", action="append", default=[], type=allowed_host, metavar="NAME",
                   help="also answer requests whose Host header is NAME (repeatable; answered without: localhost, "
                        "loopback addresses, the --host address and, bound to 0.0.0.0, this machine's name and "
                        "addresses)")
    s.add_argument("--max-connections", type=positive_int, default=64, metavar="N",
                   help="requests answered at once (default 64; 4 times as many connections may wait for theirs)")
    s.add_argument("--timeout", type=seconds, default=5.0, metavar="SECONDS",
                   help="a connection that has not sent its request within SECONDS is closed, and so is one that "
                        "reads none of the answer for as long (default 5)")
