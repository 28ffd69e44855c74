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
    return [(f"`write_report`, median of {repeats} ({scale})", seconds(get(data, "write_report_median_s"))),
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


# The benches whose results the page shows, in the page's order; a result of any other bench is an error.
EXTRACTORS: dict[str, Callable[[dict], list[Row]]] = {
    "elo": elo,
    "stats": stats,
    "report": report,
    "serve": serve,
    "query": query,
    "lake_integrity": lake_integrity,
}


# ------------------------------------------------------------------------------------------ the page

def machine(data: dict) -> str:
    """E.g. "2 cores, load 4.4→5.1": the 1-minute load average when the bench started (and ended, if recorded)."""
    cores, start = get(data, "machine.nproc"), get(data, "machine.loadavg_at_start")
    load = f"load {start[0]:.1f}"
    end = data["machine"].get("loadavg_at_end")
    if end:
        load += f"→{end[0]:.1f}"
    return f"{cores} cores, {load}"


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
