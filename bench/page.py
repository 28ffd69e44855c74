"""docs/benchmarks.md, written from the benches' own JSON: the one place measured figures live.

Run from the repository root::

    .venv/bin/python bench/page.py [--results bench/results] [--out docs/benchmarks.md] [--check]

Every ``bench/results/*.json`` a bench wrote carries, through ``bench/record.py``, its bench, the command that
produced it, its UTC time and its machine; ``EXTRACTORS`` has one small function per bench that picks the headline
figures out of its numbers. The page is one table (figure, value, machine, date, command), grouped by bench, so a
figure is never typed by hand, never goes stale without its date showing it, and always says how to measure it again.
``--check`` writes nothing and exits 1, with a diff, when the page differs from what the JSON gives (a hand edit, or a
result committed without its page). Importing this module does no work.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path
from typing import Any, Callable

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RESULTS = REPO_ROOT / "bench" / "results"
DEFAULT_OUT = REPO_ROOT / "docs" / "benchmarks.md"
REGENERATE = ".venv/bin/python bench/page.py"

Row = tuple[str, str]  # (figure, value)
INTRO = """# Benchmarks: the measured figures

Every figure the project has measured, with the machine it ran on, the date and the command that measured it. The
manual's pages and [bench/README.md](../bench/README.md) (what each bench measures and how to read it) link here
instead of quoting numbers, which go stale. Nothing on this page is typed by hand: `bench/page.py` writes it from the
JSON each bench writes to `bench/results/` (committed), so after running a bench, regenerate the page:

```sh
{command}
{command} --check     # writes nothing; exit 1 and a diff when this page is not what the JSON gives
```

`machine` is the number of cores and the 1-minute load average when the bench started → ended. The reference machine
is a shared 2-core box: a load above 2 means other work (often a test run) shared the cores, so compare figures
measured in one run rather than figures of different dates. Back to the [README](../README.md).

"""


class MissingField(KeyError):
    """A field an extractor needs is not in the result (its dotted path, e.g. ``protocol.bt_fit_s``)."""


class ResultError(ValueError):
    """A result file the page cannot be built from: the message names the file and what is wrong."""


def get(data: Any, path: str, *keys: str) -> Any:
    """``data``'s field at a dotted ``path`` (a list index may be a part: ``bootstrap_elo.-1.games``), then at
    ``keys`` taken as they are (keys holding dots: ``get(data, "paths", "/report.html")``); MissingField naming the
    whole path when any part is absent."""
    value, parts = data, [*path.split("."), *keys]
    for part in parts:
        try:
            value = value[int(part)] if isinstance(value, list) else value[part]
        except (KeyError, IndexError, TypeError, ValueError):
            raise MissingField(path + "".join(f"[{k!r}]" for k in keys)) from None
    return value


# ------------------------------------------------------------------------------------------ numbers as text

def number(x: float) -> str:
    """Three significant figures (whole numbers from 100 up), thousands separated: 0.00412, 0.25, 3.14, 18.0, 230,
    1,139."""
    x = float(x)
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def seconds(x: float) -> str:
    """Seconds, in milliseconds under one."""
    return f"{number(x)} s" if abs(x) >= 1 else millis(x)


def millis(x_s: float) -> str:
    """Seconds shown in milliseconds."""
    return f"{number(x_s * 1000)} ms"


def ratio(x: float) -> str:
    return f"{number(x)}×"


def count(n: int) -> str:
    return f"{int(n):,}"


def size(n_bytes: int) -> str:
    return f"{number(n_bytes / 1e6)} MB" if n_bytes >= 1e6 else f"{number(n_bytes / 1e3)} kB"


def mib(x: float) -> str:
    return f"{number(x)} MiB"


def percent(x: float) -> str:
    """A share (0.0412) as a percentage (4.12%)."""
    return f"{number(x * 100)}%"


def known(show: Callable[[Any], str], x: Any) -> str:
    """``show(x)``, or "n/a" where the bench wrote None (a figure it could not measure: no psutil, no base row)."""
    return "n/a" if x is None else show(x)


# ------------------------------------------------------------------------------------------ one extractor per bench

def elo(data: dict) -> list[Row]:
    """bench/elo.py: the vectorised bootstrap per size and its speed-up over a per-round loop; the paper's protocol,
    the Bradley–Terry fit and its bootstrap."""
    rows = []
    for i in range(len(get(data, "bootstrap_elo"))):
        at = f"bootstrap_elo.{i}"
        label = f"{count(get(data, f'{at}.games'))} games, {get(data, f'{at}.models')} models"
        rows += [(f"`bootstrap_elo`, {count(get(data, f'{at}.rounds'))} shuffles, {label}",
                  seconds(get(data, f"{at}.bootstrap_s"))),
                 (f"its speed-up over one `elo_sequential` per shuffle (estimated from a few), {label}",
                  ratio(get(data, f"{at}.naive_est_s") / get(data, f"{at}.bootstrap_s")))]
    games = f"{count(get(data, 'protocol.games'))} games"
    rows += [(f"`repeated_bootstrap_elo` ({get(data, 'protocol.repeats')} × {count(get(data, 'protocol.rounds'))}), "
              f"{games}", seconds(get(data, "protocol.repeated_bootstrap_elo_s"))),
             (f"Bradley–Terry fit, {games}", millis(get(data, "protocol.bt_fit_s"))),
             (f"Bradley–Terry bootstrap ({count(get(data, 'protocol.bt_rounds'))} resamples), {games}",
              seconds(get(data, "protocol.bt_bootstrap_s")))]
    return rows


def report(data: dict) -> list[Row]:
    """bench/report.py: rendering the report and the explorer of a synthetic lake (medians of the repeats)."""
    scale = (f"{get(data, 'models')} models × {count(get(data, 'seeds'))} seeds, Arena on "
             f"{count(get(data, 'arena_seeds'))}")
    repeats = len(get(data, "write_report_s"))
    live, snapshot = get(data, "write_report_live_median_s"), get(data, "write_report_median_s")
    return [(f"`write_report`, median of {repeats} ({scale})", seconds(snapshot)),
            (f"`write_report` with every query computing its views from the files (no `Snapshot`), same run",
             f"{seconds(live)} ({live / snapshot:.1f}× the Snapshot's; same page: "
             f"{'yes' if get(data, 'same_page_live') else 'NO'})"),
            (f"`write_explorer`, median of {repeats} ({scale})", seconds(get(data, "write_explorer_median_s"))),
            (f"report.html / explorer.html size ({scale})",
             f"{size(get(data, 'bytes.html'))} / {size(get(data, 'bytes.explorer'))}")]


def serve(data: dict) -> list[Row]:
    """bench/serve.py: ``dialogbench serve`` answering each page over a fresh connection."""
    rows = [("`dialogbench serve` up (process start to its address printed)", seconds(get(data, "serve_startup_s")))]
    runs = count(get(data, "runs"))
    for path in get(data, "paths"):
        cold, median, p95 = (get(data, "paths", path, f) for f in ("cold_ms", "median_ms", "p95_ms"))
        shown = "/runs/<id>/report.html" if path.startswith("/runs/") else path
        rows.append((f"GET `{shown}` ({size(get(data, 'paths', path, 'bytes'))}; {runs} runs listed): "
                     f"first request / median / p95 of {get(data, 'paths', path, 'requests')}",
                     f"{number(cold)} / {number(median)} / {number(p95)} ms"))
    return rows


def query(data: dict) -> list[Row]:
    """bench/query.py: the query path (Arrow datasets of open files) against ``read_parquet`` views, per lake; the
    ratio is the query path's time over the views'."""
    rows = []
    for name in get(data, "lakes"):
        at = f"lakes.{name}"
        lake = f"{count(get(data, f'{at}.files'))} files"
        rows += [(f"connection + views, query path vs `read_parquet` ({lake})",
                  f"{seconds(get(data, f'{at}.build_s.after'))} vs {seconds(get(data, f'{at}.build_s.before'))} "
                  f"({ratio(get(data, f'{at}.ratio.build'))})"),
                 (f"{len(get(data, f'{at}.query_s'))} typical queries in all, query path vs `read_parquet` ({lake})",
                  f"{seconds(get(data, f'{at}.total_query_s.after'))} vs "
                  f"{seconds(get(data, f'{at}.total_query_s.before'))} "
                  f"({ratio(get(data, f'{at}.total_query_s.after') / get(data, f'{at}.total_query_s.before'))})")]
        for query_name in get(data, f"{at}.cli_query_s"):
            rows.append((f"`dialogbench query` end to end, {query_name} ({lake})",
                         seconds(get(data, f"{at}.cli_query_s", query_name, "after"))))
    return rows


def stats(data: dict) -> list[Row]:
    """bench/stats.py: the statistics of a run's snapshot, (a) intervals, (b) paired comparisons, (c) night over
    night, at the sizes the JSON records."""
    sizes = get(data, "sizes")
    if "lake" in sizes:
        scale = f"a lake's own units, {count(get(data, 'sizes.rounds'))} resamples"
    else:
        scale = (f"{'paper scale' if get(data, 'paper_scale') else 'not paper scale'}: {get(data, 'sizes.models')} "
                 f"models, {count(get(data, 'sizes.seeds'))} seeds, {count(get(data, 'sizes.dialogues'))} dialogues, "
                 f"{count(get(data, 'sizes.rounds'))} resamples")
    return [(f"(a) units read + intervals, {count(get(data, 'series'))} series ({scale})",
             seconds(get(data, "read_units_s") + get(data, "intervals_s"))),
            (f"(b) paired comparisons, {count(get(data, 'pairs'))} pairs ({scale})", seconds(get(data, "compare_s"))),
            (f"(a) + (b) ({scale})", seconds(get(data, "intervals_and_pairs_s"))),
            (f"(c) night over night, {count(get(data, 'changes'))} tests ({scale})",
             seconds(get(data, "changes_units_s") + get(data, "changes_tests_s"))),
            (f"total, wall (CPU of all threads) ({scale}; target under {get(data, 'checks.target_s'):g} s)",
             f"{seconds(get(data, 'total_s'))} ({seconds(get(data, 'total_cpu_s'))})")]


def lake_integrity(data: dict) -> list[Row]:
    """bench/lake_integrity.py: what the checksummed file records cost on a synthetic lake."""
    lake = f"{count(get(data, 'files'))} files of {get(data, 'rows_per_file')} rows"
    rows = [(f"`Lake.write` per file, median ({lake})", millis(get(data, "write_ms_median") / 1000)),
            (f"building every view, median ({lake})", seconds(get(data, "views_s_median")))]
    if "quick_check_s_median" in data:  # absent when another checkout without the records was timed
        rows += [(f"run-start `quick_check`, median ({lake})", millis(get(data, "quick_check_s_median"))),
                 (f"full `verify`, median ({lake})", millis(get(data, "verify_s_median")))]
    return rows


def botchat_pipeline(data: dict) -> list[Row]:
    """bench/botchat_pipeline.py: (1) the pipeline's generated tok/s against the raw backend's on the same calls and
    the overhead, (2) the backend calls of lock-step generation, (3) the demo run and its cached rerun; a part skipped
    (``--skip-demo``) or failed is not in the JSON and gives no row."""
    rows = []
    if "pipeline_overhead" in data:
        at = "pipeline_overhead"
        repeats = get(data, f"{at}.repeats")
        scale = f"{get(data, f'{at}.model')}, {count(get(data, f'{at}.seeds'))} seeds to N = {get(data, f'{at}.n')}"
        rows += [(f"generated tok/s, pipeline vs raw `backend.generate`, median of {repeats} ({scale})",
                  f"{number(get(data, f'{at}.pipeline_tok_s'))} vs {number(get(data, f'{at}.raw_tok_s'))}"),
                 (f"pipeline overhead, 1 − pipeline ÷ raw tok/s: median (best of {repeats}) ({scale}; target under "
                  f"{percent(get(data, f'{at}.overhead_target'))})",
                  f"{known(percent, get(data, f'{at}.overhead'))} "
                  f"({known(percent, get(data, f'{at}.overhead_best'))})"),
                 (f"share of the pipeline's wall time outside `backend.generate`, median ({scale})",
                  known(percent, get(data, f"{at}.non_backend_share")))]
    if "backend_calls" in data:
        calls = get(data, "backend_calls")
        sizes = " / ".join(count(get(data, f"backend_calls.{i}.seeds")) for i in range(len(calls)))
        rows.append((f"backend calls to N = {get(data, 'backend_calls.0.n')}, scripted, for {sizes} seeds (lock-step: "
                     f"N − 2 = {get(data, 'backend_calls.0.expected')} whatever the seeds)",
                     " / ".join(str(get(data, f"backend_calls.{i}.calls")) for i in range(len(calls)))))
    if "demo_rerun" in data:
        at, limit = "demo_rerun", get(data, "demo_rerun.limit")
        demo = f"`dialogbench run` of {Path(get(data, f'{at}.config')).name}" + (f", {limit} seeds" if limit else "")
        rows += [(f"{demo}: first run / cached rerun ({count(get(data, f'{at}.second.computed'))} cells computed) "
                  f"wall time, rerun ÷ first",
                  f"{seconds(get(data, f'{at}.first.wall_seconds'))} / "
                  f"{seconds(get(data, f'{at}.second.wall_seconds'))} ({ratio(get(data, f'{at}.rerun_ratio'))})"),
                 (f"{demo}: the first run's peak RSS, whole process tree / largest process",
                  f"{known(mib, get(data, f'{at}.first.peak_tree_rss_mib'))} / "
                  f"{known(mib, get(data, f'{at}.first.max_process_rss_mib'))}")]
    return rows


def engines(data: dict) -> list[Row]:
    """bench/engines.py: (1) per engine, its start-up, BotChat generation and UniEval tok/s and peak memory, and
    vLLM's ratios to transformers; (2) the pipeline's seconds over plain ``model.generate``'s; (3) the demo's wall time
    and peak memory per layout, and the first layout's ratios to the others. A part skipped gives no row."""
    rows = []
    for name in data.get("engines") or {}:
        at = f"engines.{name}"
        gen, free = f"{at}.generation", f"{at}.unieval_free"
        rows += [(f"{name}: start-up, `get_backend` ({get(data, f'{at}.model')})",
                  seconds(get(data, f"{at}.startup_seconds"))),
                 (f"{name}: BotChat generation, {get(data, f'{gen}.conversations')} conversations × "
                  f"{get(data, f'{gen}.max_tokens')} tokens, greedy", f"{number(get(data, f'{gen}.tok_s'))} tok/s"),
                 (f"{name}: UniEval free / constrained, {get(data, f'{free}.conversations')} dialogues × "
                  f"{get(data, f'{free}.max_tokens')} tokens",
                  f"{number(get(data, f'{free}.tok_s'))} / {number(get(data, f'{at}.unieval_constrained.tok_s'))} "
                  f"tok/s"),
                 (f"{name}: peak RSS of its process tree", known(mib, get(data, f"{at}.peak_rss_mib")))]
    if data.get("engine_ratios"):
        rows.append(("vllm ÷ transformers: BotChat generation tok/s / start-up / peak memory",
                     " / ".join(known(ratio, get(data, f"engine_ratios.{key}"))
                                for key in ("generation_tok_s", "startup_seconds", "peak_rss_mib"))))
    if "pipeline_vs_generate" in data:
        at = "pipeline_vs_generate"
        rows.append((f"pipeline ÷ plain `model.generate` seconds, median of {get(data, f'{at}.repeats')} "
                     f"({get(data, f'{at}.seeds')} seeds to N = {get(data, f'{at}.n')}; goal ≤ "
                     f"{get(data, f'{at}.target'):.2f})",
                     f"{known(ratio, get(data, f'{at}.ratio'))} (`backend.generate` only: "
                     f"{known(ratio, get(data, f'{at}.backend_ratio'))})"))
    if "demo" in data:
        limit = get(data, "demo.limit")
        demo = f"the demo ({Path(get(data, 'demo.config')).name}{f', {limit} seeds' if limit else ''})"
        for i in range(len(get(data, "demo.runs"))):
            at = f"demo.runs.{i}"
            code = get(data, f"{at}.returncode")
            rows.append((f"{demo}, {get(data, f'{at}.label')} ({get(data, f'{at}.backends')}): wall time / peak RSS "
                         f"of the process tree",
                         f"{seconds(get(data, f'{at}.wall_seconds'))} / {number(get(data, f'{at}.peak_rss_gib'))} GiB"
                         if code == 0 else f"failed (exit {code})"))
        first = get(data, "demo.runs.0.label")
        for label in get(data, "demo.ratios"):
            rows.append((f"{demo}, {first} ÷ {label}: wall time / peak memory",
                         f"{known(ratio, get(data, 'demo.ratios', label, 'wall'))} / "
                         f"{known(ratio, get(data, 'demo.ratios', label, 'peak'))}"))
    return rows


def omp_threads(data: dict) -> list[Row]:
    """bench/omp_threads.py: per number of busy processes beside and per thread variant, the median generation time,
    tok/s, CPU seconds, and the time and CPU over vLLM's default (``bound``) at the same load."""
    work = (f"{get(data, 'args.conversations')} chats × {get(data, 'args.tokens')} tokens, median of "
            f"{get(data, 'args.repeats')}")
    rows = []
    for i in range(len(get(data, "rows"))):
        at = f"rows.{i}"
        variant, hogs = get(data, f"{at}.variant"), get(data, f"{at}.hogs")
        value = (f"{seconds(get(data, f'{at}.gen_s_median'))}, {number(get(data, f'{at}.tok_per_s'))} tok/s, "
                 f"{number(get(data, f'{at}.gen_cpu_s_median'))} CPU s")
        if variant != "bound" and get(data, f"{at}.time_vs_bound") is not None:
            value += (f" ({ratio(get(data, f'{at}.time_vs_bound'))} the time, {ratio(get(data, f'{at}.cpu_vs_bound'))} "
                      f"the CPU of `bound`)")
        rows.append((f"`{variant}`, {hogs} busy process{'' if hogs == 1 else 'es'} beside: generation of {work}",
                     value))
    return rows


def cached_rerun(data: dict) -> list[Row]:
    """bench/cached_rerun.py: per source tree, the cached rerun's wall and CPU seconds, and (``--with-rerun``) the
    same run with ``--rerun`` and their paired ratio; with several trees, each one's ratios to the first."""
    trees = list(get(data, "trees"))
    lake = f" on a copy of {Path(data['from_lake']).name}" if data.get("from_lake") else ""
    config = f"{Path(get(data, 'config')).name}{lake}"
    rows = []
    for tree in trees:
        where = f"; `{tree}`" if len(trees) > 1 else ""
        runs = len(get(data, "trees", tree, "seconds"))
        reused = runs and all(get(data, "trees", tree, "reused"))
        rows.append((f"cached rerun{', answered from the latest run' if reused else ''}: wall (CPU of its process "
                     f"tree), median of {runs} ({config}{where})",
                     f"{seconds(get(data, 'trees', tree, 'median_s'))} "
                     f"({seconds(get(data, 'trees', tree, 'median_cpu_s'))})"))
        if "median_rerun_s" in get(data, "trees", tree):
            rows += [(f"the same run with `--rerun` (recorded, computes nothing), median of {runs} ({config}{where})",
                      seconds(get(data, "trees", tree, "median_rerun_s"))),
                     (f"`--rerun` ÷ cached rerun, median of the {runs} back-to-back pairs ({config}{where})",
                      ratio(get(data, "trees", tree, "paired_rerun_over_cached")))]
    for tree in trees[1:]:
        rows.append((f"`{tree}` ÷ `{trees[0]}`: cached rerun wall / CPU / CPU paired by repeat ({config})",
                     " / ".join(ratio(get(data, key, tree))
                                for key in ("ratio_to_first", "cpu_ratio_to_first", "paired_cpu_ratio_to_first"))))
    return rows


def artifacts(data: dict) -> list[Row]:
    """bench/artifacts.py: what a run spends publishing to the Prefect UI and snapshotting its history, beside its wall
    time, for the first run and the cached reruns; the disk each cached rerun adds."""
    overrides = get(data, "overrides")
    config = Path(get(data, "config")).name + (f" with {', '.join(overrides)}" if overrides else "")
    first = "first_run"
    rows = [(f"first run: wall time ({config})", seconds(get(data, f"{first}.wall_s"))),
            (f"first run: publishing {count(get(data, f'{first}.artifacts'))} artifacts and "
             f"{count(get(data, f'{first}.progress_updates'))} progress updates (its share of the wall time) "
             f"({config})",
             f"{seconds(get(data, f'{first}.publish_s'))} ({percent(get(data, f'{first}.share_of_wall'))})"),
            (f"first run: the history snapshot, {count(get(data, f'{first}.history_rows'))} rows (its share of the "
             f"wall time) ({config})",
             f"{seconds(get(data, f'{first}.history_s'))} ({percent(get(data, f'{first}.history_share_of_wall'))})")]
    reruns = len(get(data, "cached_reruns"))
    if reruns:
        rows += [(f"cached rerun, median of {reruns}: publishing / history snapshot / wall time ({config})",
                  " / ".join(seconds(get(data, key)) for key in
                             ("cached_median_publish_s", "cached_median_history_s", "cached_median_wall_s"))),
                 (f"disk each cached rerun adds: history tables / whole lake / Prefect home ({config})",
                  " / ".join(size(get(data, "bytes_per_cached_rerun", key))
                             for key in ("history_tables", "lake", "prefect_home")))]
    return rows


def scale_out(data: dict) -> list[Row]:
    """bench/scale_out.py: one dispatched run per number of slots (work pool workers, GPUs of this box): the
    dispatched units' seconds with their speed-up and its target, the whole run's; judging while the units generate
    against after them."""
    server = {"sqlite": "Prefect server on SQLite", "postgres": "Prefect server on PostgreSQL"}[data.get("server", "sqlite")]
    scale = f"{get(data, 'models')} models × {get(data, 'delay_s'):g} s per call, {server}"
    rows = []
    for i in range(len(get(data, "rows"))):
        at = f"rows.{i}"
        mode, slots = get(data, f"{at}.mode"), get(data, f"{at}.slots")
        if mode.startswith("judging"):
            continue
        units = get(data, f"{at}.dispatch_s")
        value = (f"units {seconds(units)} ({known(ratio, get(data, f'{at}.speedup_dispatch'))}, target "
                 f"{ratio(get(data, f'{at}.target_dispatch'))}); " if units is not None else "")
        rows.append((f"dispatched run, {mode} = {slots}: the units (speed-up; target) and the whole run (speed-up) "
                     f"({scale})",
                     f"{value}whole run {seconds(get(data, f'{at}.wall_s'))} "
                     f"({ratio(get(data, f'{at}.speedup_run'))})"))
    judged = get(data, "judging.wall_s")
    if len(judged) == 2:
        during, after = judged["judging while generating"], judged["judging after"]
        rows.append((f"judging while the units generate vs after them: whole run ({get(data, 'judging.models')} "
                     f"chatbots on {get(data, 'judging.gpus')} GPUs, judge {get(data, 'judging.judge_delay_s'):g} s "
                     f"per cell)", f"{seconds(during)} vs {seconds(after)} ({ratio(after / during)})"))
    return rows


def gpu(data: dict) -> list[Row]:
    """bench/gpu.py: the embedded model through our transformers backend on one GPU: generated tokens a second per
    micro-batch size, and W data-parallel shards (W engines on the one GPU) against one."""
    scale = (f"{get(data, 'settings.conversations')} conversations, ≤ {get(data, 'settings.tokens')} new tokens, "
             f"greedy, {get(data, 'machine.gpu')}")
    rows = []
    for i in range(len(get(data, "batch_sizes"))):
        at = f"batch_sizes.{i}"
        rows.append((f"transformers backend, micro-batch {get(data, f'{at}.batch_size')}: generated tokens/s "
                     f"(peak GPU memory) ({scale})",
                     f"{number(get(data, f'{at}.tok_s'))} tok/s ({mib(get(data, f'{at}.peak_gpu_mib'))})"))
    for i in range(len(get(data, "shards"))):
        at = f"shards.{i}"
        rows.append((f"{get(data, f'{at}.shards')} data-parallel shard(s) of micro-batch "
                     f"{get(data, f'{at}.per_shard.0.batch_size')} on the one GPU: tokens/s (speed-up over one; "
                     f"slowest engine load) ({scale})",
                     f"{number(get(data, f'{at}.tok_s'))} tok/s ({ratio(get(data, f'{at}.speedup'))}; "
                     f"{seconds(get(data, f'{at}.slowest_load_s'))})"
                     + ("" if get(data, f"{at}.started_together") else
                        "; a shard started late, so the speed-up is an upper bound")))
    return rows


def delta_lake(data: dict) -> list[Row]:
    """bench/delta_lake.py: writers racing ``insert_missing`` on the Delta cell store, on a folder and on S3 (moto's
    server): the median wall time, and whether each cell was stored once."""
    race = (f"{get(data, 'writers')} writers × {get(data, 'rounds')} rounds of insert_missing, "
            f"{get(data, 'per_writer')} of {get(data, 'keys')} new cells each a round, "
            f"median of {get(data, 'repeats')}")
    return [(f"Delta cell store, {name}: race wall time; each cell stored once ({race})",
             f"{seconds(get(data, f'backends.{name}.wall_s_median'))}; "
             f"{'yes' if get(data, f'backends.{name}.each_cell_once') else 'NO'}")
            for name in get(data, "backends")]


def lake_tables(data: dict) -> list[Row]:
    """bench/lake_tables.py: a Delta lake against a folder lake through ``Lake``: commits, a view's read, a stage's
    anti-join, and the Delta lake's read after compaction."""
    scale = f"{get(data, 'chunks')} commits of {get(data, 'rows')} cells, median of {get(data, 'repeats')}"
    rows = [(f"lake tables, {what}: folder lake vs Delta lake ({scale})",
             f"{seconds(get(data, f'kinds.files.{key}'))} vs {seconds(get(data, f'kinds.delta.{key}'))} "
             f"({ratio(get(data, f'ratios.{key}'))} the folder lake's time)")
            for what, key in (("the commits", "write_s"), ("a view reading the table", "read_s"),
                              ("a stage's plan (anti-join)", "plan_s"))]
    rows.append((f"lake tables, Delta lake after compact: files, compact time, the view's read ({scale})",
                 f"{count(get(data, 'kinds.delta.files'))} → {count(get(data, 'kinds.delta.files_compacted'))} files; "
                 f"{seconds(get(data, 'kinds.delta.compact_s'))}; "
                 f"read {seconds(get(data, 'kinds.delta.read_compacted_s'))}"))
    return rows


def gameeval(data: dict) -> list[Row]:
    """bench/gameeval.py: Ask-Guess games per minute with every game in flight (one backend call per step) against one
    game at a time, and how many games the two modes played identically."""
    scale = (f"{get(data, 'games')} games of {get(data, 'rounds')} rounds at most, {get(data, 'model')}, "
             f"temperature {get(data, 'temperature'):g}")
    return [(f"Ask-Guess games per minute, batched vs one at a time ({scale})",
             f"{number(get(data, 'batched.games_per_min'))} vs {number(get(data, 'sequential.games_per_min'))} "
             f"({ratio(get(data, 'speedup'))})"),
            (f"backend calls, batched vs one at a time ({scale})",
             f"{count(get(data, 'batched.backend_calls'))} vs {count(get(data, 'sequential.backend_calls'))}"),
            (f"games played identically in both modes ({scale})",
             f"{get(data, 'identical_games')} / {get(data, 'games')}")]


def mtbench101(data: dict) -> list[Row]:
    """bench/mtbench101.py: golden-context generation through the pipeline against the raw backend (tok/s, overhead);
    the judge's requests per second against a local server at each concurrency, and the speed-up over the first."""
    at = "golden_generation"
    scale = (f"{get(data, f'{at}.model')}, {get(data, f'{at}.dialogues')} dialogues of "
             f"{', '.join(get(data, f'{at}.tasks'))}, {get(data, f'{at}.turns')} judged turns")
    repeats = len(get(data, f"{at}.pipeline_seconds"))
    rows = [(f"golden-context generation, pipeline vs raw `backend.generate` tok/s, median of {repeats} ({scale})",
             f"{number(get(data, f'{at}.pipeline_tok_s'))} vs {number(get(data, f'{at}.raw_tok_s'))} "
             f"(overhead {percent(get(data, f'{at}.overhead'))})")]
    fan = (f"{get(data, 'judge_fanout.requests')} requests to a local server answering in "
           f"{get(data, 'judge_fanout.latency_ms')} ms")
    levels = list(get(data, "judge_fanout.levels"))
    for level in levels:
        failed = get(data, "judge_fanout.levels", level, "failed")
        rows.append((f"judge fan-out, {level} concurrent: requests/s (speed-up over {levels[0]}) ({fan})",
                     f"{number(get(data, 'judge_fanout.levels', level, 'requests_per_s'))} "
                     f"({ratio(get(data, 'judge_fanout.levels', level, 'speedup'))})"
                     + (f", {failed} failed" if failed else "")))
    return rows


def probes(data: dict) -> list[Row]:
    """bench/probes.py: what the judges' known-answer probes cost in a first run and in a cached rerun: the run's wall
    time and the probe stages' seconds, their cells, and their judge calls beside the rest of the run's."""
    config = Path(get(data, "config")).name
    rows = []
    for key, run in (("first_run", "first run"), ("cached_rerun", "cached rerun")):
        rows += [(f"{run}: wall time / the probe stages ({config})",
                  f"{seconds(get(data, f'{key}.wall_s'))} / {seconds(get(data, f'{key}.probe_stage_s'))}"),
                 (f"{run}: probe cells computed / cached ({config})",
                  f"{count(get(data, f'{key}.probe_cells_computed'))} / "
                  f"{count(get(data, f'{key}.probe_cells_cached'))}"),
                 (f"{run}: judge calls (conversations), the probes' vs the rest of the run's ({config})",
                  f"{count(get(data, f'{key}.probe_judge_calls'))} "
                  f"({count(get(data, f'{key}.probe_judge_conversations'))}) vs "
                  f"{count(get(data, f'{key}.other_judge_calls'))} "
                  f"({count(get(data, f'{key}.other_judge_conversations'))})")]
    return rows


# The benches whose results the page shows, in the page's order; a result of any other bench is an error.
def suite(data: dict) -> list[Row]:
    """bench/suite.py: ``make test``'s wall and CPU seconds (its exit status when it failed), then each part's
    seconds and counts."""
    workers = get(data, "workers")
    status = "" if get(data, "exit") == 0 else f", exit {get(data, 'exit')}"
    rows = [("`make test` after set-up: wall (CPU of the processes it waited for)",
             f"{seconds(get(data, 'wall_s'))} ({seconds(get(data, 'cpu_s'))}){status}")]
    names = (f"part 1: every file on {workers} workers", "part 2: the `alone` tests, two at a time")
    for i, name in enumerate(names[:len(get(data, "parts"))]):
        counts = get(data, f"parts.{i}.counts")
        tally = ", ".join(f"{n:,} {word}" for word, n in counts.items() if word not in ("deselected", "warning", "warnings"))
        rows.append((f"{name} ({tally})", seconds(get(data, f"parts.{i}.seconds"))))
    return rows


EXTRACTORS: dict[str, Callable[[dict], list[Row]]] = {
    "elo": elo,
    "stats": stats,
    "report": report,
    "serve": serve,
    "query": query,
    "lake_integrity": lake_integrity,
    "botchat_pipeline": botchat_pipeline,
    "engines": engines,
    "omp_threads": omp_threads,
    "cached_rerun": cached_rerun,
    "artifacts": artifacts,
    "scale_out": scale_out,
    "gpu": gpu,
    "delta_lake": delta_lake,
    "lake_tables": lake_tables,
    "gameeval": gameeval,
    "mtbench101": mtbench101,
    "probes": probes,
    "suite": suite,
}


# ------------------------------------------------------------------------------------------ the page

def machine(data: dict) -> str:
    """E.g. "2 cores, load 4.4→5.1": the 1-minute load average when the bench started (and ended, if recorded);
    then the GPU, for a bench that ran on one."""
    cores, start = get(data, "machine.nproc"), get(data, "machine.loadavg_at_start")
    load = f"load {start[0]:.1f}"
    end = data["machine"].get("loadavg_at_end")
    if end:
        load += f"→{end[0]:.1f}"
    gpu = data["machine"].get("gpu")
    return f"{cores} cores, {load}{', ' + gpu if gpu else ''}"


def cell(text: str) -> str:
    return text.replace("|", "\\|")


def rows_of(path: Path, *, root: Path = REPO_ROOT) -> tuple[str, list[list[str]]]:
    """One result file's bench and table rows (figure, value, machine, date, command); ResultError naming the file
    and the field when it cannot give them."""
    name = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ResultError(f"{name}: not a readable JSON result ({exc})") from None
    try:
        bench = get(data, "bench")
        if bench not in EXTRACTORS:
            raise ResultError(f"{name}: bench {bench!r} has no extractor in bench/page.py's EXTRACTORS (known: "
                              f"{', '.join(EXTRACTORS)}): add one that picks its headline figures")
        found = EXTRACTORS[bench](data)
        facts = [machine(data), get(data, "utc")[:10], f"`{get(data, 'command')}`"]
    except MissingField as missing:
        hint = (" (bench/record.py's fields: the bench does not record itself yet, or wrote this file before it did)"
                if missing.args[0].split(".")[0] in ("bench", "command", "utc", "machine") else "")
        raise ResultError(f"{name}: missing field {missing.args[0]!r}{hint}") from None
    return bench, [[cell(figure), cell(value), *map(cell, facts)] for figure, value in found]


def render(results: Path, *, root: Path = REPO_ROOT) -> str:
    """The page for every ``*.json`` in ``results``: grouped by bench in EXTRACTORS' order, files by name."""
    by_bench: dict[str, list[list[str]]] = {}
    for path in sorted(results.glob("*.json")):
        bench, rows = rows_of(path, root=root)
        by_bench.setdefault(bench, []).extend(rows)
    lines = [INTRO.format(command=REGENERATE).rstrip("\n"), "",
             "| figure | value | machine | date | command |", "|---|---|---|---|---|"]
    for bench in EXTRACTORS:
        if bench in by_bench:
            lines.append(f"| **[bench/{bench}.py](../bench/{bench}.py)** | | | | |")
            lines += [f"| {' | '.join(row)} |" for row in by_bench[bench]]
    if not by_bench:
        lines.append("| (no results in bench/results yet) | | | | |")
    return "\n".join(lines) + "\n"


def check(page: Path, expected: str) -> list[str]:
    """A unified diff from the page as it is to what the JSON gives; empty when they are equal."""
    current = page.read_text(encoding="utf-8") if page.exists() else ""
    return list(difflib.unified_diff(current.splitlines(), expected.splitlines(), f"{page} (as it is)",
                                     f"{page} (from the JSON)", lineterm=""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS, help="the benches' JSON (bench/results)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the page (docs/benchmarks.md)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 with a diff when the page differs")
    args = parser.parse_args(argv)
    try:
        page = render(args.results)
    except ResultError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.check:
        diff = check(args.out, page)
        if diff:
            print("\n".join(diff), file=sys.stderr)
            print(f"\n{args.out} is not what {args.results} gives: run {REGENERATE}", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(page, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
