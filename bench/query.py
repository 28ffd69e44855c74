"""Ad-hoc query speed: the query path (a connection with no file access whose views read the lake's files through
Arrow datasets of open files, ``lake.query.read_only_connection``) against the views reading the same files with
DuckDB's ``read_parquet`` (``lake.catalog.connect``: what the query path used before, and what the report and the
saved catalog still use), on the synthetic lake of ``bench/report.py`` at the paper's scale (14 models x 547 seeds,
Arena on 222 seeds: 94,682 verdicts), as written (one file a table) and split into ``--split`` files a table (a lake
after many nightly runs). Both readers run in one process, alternately, so they share the machine's load.

    .venv/bin/python bench/query.py [--repeats 5] [--split 40] [--out bench/results/query.json]

For each lake: building the connection and its views, and each query of ``QUERIES`` (docs/querying.md's, and a
few typical ones), medians of ``--repeats`` taken in turns; the ratio after / before; and ``dialogbench query`` end to
end for three of them (a process per run: Python start, imports, views, the query, csv out; with ``--before``, also
the older checkout's), medians of ``--cli-repeats``. Writes the JSON and prints a table."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO_ROOT / "bench" / "results" / "query.json"
QUERIES = {
    "unieval n in (4, 8)": "SELECT * FROM botchat_unieval WHERE n IN (4, 8)",
    "runs by start": "SELECT stage, planned, cached, computed, failed FROM runs ORDER BY started_at",
    "elo": "SELECT * FROM botchat_elo",
    "arena comparisons": "SELECT model_a, model_b, winner FROM botchat_arena WHERE parsed",
    "pair rates": "SELECT * FROM botchat_pair_rates",
    "gteval": "SELECT * FROM botchat_gteval",
    "lengths": "SELECT * FROM botchat_lengths",
    "count generations": "SELECT count(*) FROM generations",
    "one dialogue": "SELECT utterances FROM generations WHERE model = 'model-03' AND item_id = 'MT-7'",
    "verdicts per judge": "SELECT judge, protocol, count(*), avg(parsed::int) FROM judgments GROUP BY ALL",
}
CLI_QUERIES = ("arena comparisons", "one dialogue", "unieval n in (4, 8)")


def medians(fns: dict, repeats: int) -> dict[str, float]:
    """Each of ``fns`` (label -> callable) run ``repeats`` times, taking turns (so both see the same load), and the
    median seconds of each."""
    samples: dict[str, list[float]] = {label: [] for label in fns}
    for _ in range(repeats):
        for label, fn in fns.items():
            start = time.perf_counter()
            fn()
            samples[label].append(time.perf_counter() - start)
    return {label: statistics.median(times) for label, times in samples.items()}


def split_lake(source: Path, target: Path, parts: int) -> int:
    """``source``'s tables rewritten as ``parts`` committed files each (same rows); returns the file count."""
    import pyarrow.parquet as pq

    from dialogbench.run.registry import open_lake
    from dialogbench.lake.version import ensure_current

    lake = open_lake(target)
    ensure_current(lake)
    for table_dir in sorted(p for p in source.iterdir() if p.is_dir()):
        table = pq.read_table(open_lake(source).files(table_dir.name))
        step = -(-table.num_rows // parts)
        for start in range(0, table.num_rows, step):
            lake.write(table_dir.name, table.slice(start, step))
    return sum(len(lake.files(p.name)) for p in target.iterdir() if p.is_dir())


def readers(root: Path, repeats: int) -> dict:
    """Connection build and each query, for the read_parquet views (before) and the query path (after)."""
    from dialogbench.run.registry import open_lake
    from dialogbench.lake.catalog import connect
    from dialogbench.lake.query import read_only_connection

    def before():
        return connect(open_lake(root))

    def after():
        return read_only_connection(open_lake(root))

    def build(make) -> None:
        with make():
            pass

    result = {"build_s": medians({"before": lambda: build(before), "after": lambda: build(after)}, repeats),
              "query_s": {}, "rows": {}}
    with before() as old, after() as new:
        for name, sql in QUERIES.items():
            result["rows"][name] = {"before": len(old.sql(sql).fetchall()), "after": len(new.sql(sql).fetchall())}
            result["query_s"][name] = medians({"before": lambda: old.sql(sql).fetchall(),
                                               "after": lambda: new.sql(sql).fetchall()}, repeats)
    for name, rows in result["rows"].items():
        assert rows["before"] == rows["after"], (name, rows)
    result["ratio"] = {"build": result["build_s"]["after"] / result["build_s"]["before"],
                       **{name: t["after"] / t["before"] for name, t in result["query_s"].items()}}
    result["total_query_s"] = {label: sum(t[label] for t in result["query_s"].values()) for label in ("before", "after")}
    return result


def cli_seconds(root: Path, checkouts: dict[str, Path], repeats: int) -> dict[str, dict[str, float]]:
    """``dialogbench query … --format csv`` end to end (a process each: Python, imports, views, the query, output),
    per query of ``CLI_QUERIES`` and checkout (label -> its root), taking turns."""
    found = {}
    for name in CLI_QUERIES:
        def command(checkout: Path):
            env = {**os.environ, "PYTHONPATH": str(checkout)}
            return lambda: subprocess.run([sys.executable, "-m", "dialogbench.cli", "query", QUERIES[name], "--lake",
                                           str(root), "--format", "csv"], env=env, check=True,
                                          stdout=subprocess.DEVNULL, cwd=checkout)
        found[name] = medians({label: command(checkout) for label, checkout in checkouts.items()}, repeats)
    return found


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(REPO_ROOT))
    from bench.record import ended, record
    from bench.report import model_names, size_parser, synthetic_lake
    from dialogbench.run.environment import commit
    from dialogbench.lake.version import ensure_current
    from dialogbench.run.registry import open_lake

    parser = size_parser(__doc__)
    parser.add_argument("--split", type=int, default=40, help="files a table in the second lake")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--before", type=Path, help="a checkout of the code before (e.g. `git archive <commit> | tar "
                        "-x -C /tmp/before`): `dialogbench query` is timed end to end with it too")
    parser.add_argument("--cli-repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)

    result = {**record(script=__file__, argv=argv), "code": {"commit": commit(REPO_ROOT)}, "lakes": {}}
    with tempfile.TemporaryDirectory(prefix="dialogbench-query-bench-") as tmp:
        one = Path(tmp) / "one-file-a-table"
        ensure_current(open_lake(one))  # the format marker first, as a run writes it
        rows = synthetic_lake(one, models=model_names(args.models), seeds=args.seeds, arena_seeds=args.arena_seeds)
        split = Path(tmp) / f"{args.split}-files-a-table"
        files = split_lake(one, split, args.split)
        for name, root, count in ((one.name, one, len(list(one.rglob("*.parquet")))), (split.name, split, files)):
            checkouts = {**({"before": args.before} if args.before else {}), "after": REPO_ROOT}
            result["lakes"][name] = {"files": count, "rows": rows, **readers(root, args.repeats),
                                     "cli_query_s": cli_seconds(root, checkouts, args.cli_repeats)}
    ended(result)
    print(format_result(result))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, default=str) + "\n")
    return 0


def format_result(result: dict) -> str:
    lines = []
    for name, lake in result["lakes"].items():
        lines += [f"{name}: {lake['files']} files", f"  {'':28} {'before':>9} {'after':>9} {'after/before':>13}",
                  f"  {'connection + views':28} {lake['build_s']['before'] * 1000:7.0f}ms "
                  f"{lake['build_s']['after'] * 1000:7.0f}ms {lake['ratio']['build']:12.2f}x"]
        for query, t in lake["query_s"].items():
            lines.append(f"  {query:28} {t['before'] * 1000:7.1f}ms {t['after'] * 1000:7.1f}ms "
                         f"{lake['ratio'][query]:12.2f}x")
        total = lake["total_query_s"]
        lines += [f"  {'all queries':28} {total['before'] * 1000:7.0f}ms {total['after'] * 1000:7.0f}ms "
                  f"{total['after'] / total['before']:12.2f}x", "  dialogbench query, end to end:"]
        for query, t in lake["cli_query_s"].items():
            ratio = f"{t['after'] / t['before']:12.2f}x" if "before" in t else ""
            lines.append(f"  {query:28} {t.get('before', float('nan')):8.2f}s {t['after']:8.2f}s {ratio}")
        lines.append("")
    load = result["machine"]
    lines.append(f"load average {load['loadavg_at_start'][0]:.2f} -> {load['loadavg_at_end'][0]:.2f} "
                 f"({load['nproc']} CPUs); code {result['code']['commit'] or 'unknown'}")
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        sys.path[0] = str(REPO_ROOT)  # this checkout's dialogbench, not an installed one (nor bench/'s modules)
    sys.exit(main())
