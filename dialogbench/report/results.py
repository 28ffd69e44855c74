"""A board's leaderboards as one JSON-able dict (``results.json``), as CSV files, and as plain-text tables.

``collect_results(lake, board, families=...)`` reads every leaderboard view of every family it is handed (the views
its history ``Metric``s are read from, plus ``EXTRA_VIEWS``: BotChat's UniEval at the human dialogue's length) and
``headline`` (every headline number of the board's latest run with its cluster-bootstrap 95% interval, rank range,
``measured`` and ``complete``), each whole: every column the view has, its interval columns (``*_ci_low`` /
``*_ci_high``, ``ci_low`` / ``ci_high``) and its ``measured`` / ``not_measured`` flags included::

    {"board": "nightly", "run_id": "...", "generated_at": "2026-...+00:00",
     "provenance": {"config": ..., "commit": ..., "versions": {...}, "host": ..., "gpu": ..., "started_at": ...,
                    "finished_at": ..., "config_fp": ..., "models": [...], "judges": [...], "runs": 3,
                    "dialogbench": "0.1.0", "failed": null},
     "leaderboards": {"botchat/botchat_elo": {"columns": ["model", "n", ...], "rows": [{"model": ..., ...}]},
                      ...,
                      "core/headline": {...}}}

A leaderboard's key is ``<family>/<view>`` (``core`` for ``headline``); a view this checkout does not define is left
out. A judged leaderboard's rows (BotChat's UniEval, Arena and GTEval, MT-Bench-101's: a metric of it has a judge's
``protocol``; GameEval's have none) end with ``self_judged``: whether the row's model is the row's judge, by name or by
the weights and revision of the run's recorded config (``judge_checks.self_judging``: self-enhancement bias); so do
``headline``'s, null on a row of a family without a judge. The text tables mark such a model ``†`` and end with the
legend. Rows are ordered as a leaderboard reads (its keys, then its first metric best first, then the model); values are
plain JSON (times as ISO 8601 text, NaN as null). ``write_results`` writes it beside a report as ``results.json``
(temp file + rename); ``write_csv`` writes one CSV per leaderboard (``<view>.csv``) into a folder (what
``dialogbench export --format csv`` writes); ``format_all_leaderboards`` gives the tables ``dialogbench run`` prints.
A board no run published to is a ``NoResults`` naming the board and the boards there are."""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection, Sequence

import duckdb

from dialogbench import __version__
from dialogbench.run.boards import describe
from dialogbench.run.family_spec import Family
from dialogbench.history.metric import Metric
from dialogbench.judge_checks.self_judging import LEGEND, Identity, identities_from_yaml, marked, same_model
from dialogbench.lake import Lake
from dialogbench.lake.catalog import connect
from dialogbench.text.redact import redact
from dialogbench.report.build import _atomic_write
from dialogbench.run.runs import now
from dialogbench.stats.shown import read_shown, slice_text

RESULTS = "results.json"
HEADLINE = ("core", "headline")
# leaderboard views a family shows that no history Metric reads: (family, view) -> the metrics of its text table
EXTRA_VIEWS: dict[tuple[str, str], tuple[Metric, ...]] = {
    ("botchat", "botchat_unieval_gt"): (
        Metric(view="botchat_unieval_gt", name="pass_rate", keys=("judge",), low="pass_ci_low", high="pass_ci_high",
               n="dialogues", protocol="botchat_unieval"),),
}
TITLES = {"botchat_unieval": "BotChat UniEval pass@N", "botchat_unieval_gt": "BotChat UniEval at the human length",
          "botchat_gteval": "BotChat GTEval (Win + Tie vs the human dialogue)", "botchat_elo": "BotChat Arena Elo",
          "mtbench101_leaderboard": "MT-Bench-101 (avg of the 13 tasks)", "mtbench101_tasks": "MT-Bench-101 per task",
          "gameeval_askguess": "GameEval Ask-Guess", "gameeval_spyfall": "GameEval SpyFall",
          "gameeval_tofukingdom": "GameEval TofuKingdom", "judge_probes": "Judge known-answer probes"}


class NoResults(ValueError):
    """A board with no run recorded (or a lake with none): there are no leaderboards to write."""


@dataclass(frozen=True)
class Leaderboard:
    family: str
    view: str
    metrics: tuple[Metric, ...]

    @property
    def key(self) -> str:
        return f"{self.family}/{self.view}"

    @property
    def judged(self) -> bool:
        """A judge's verdicts make its numbers (a metric of it names the judge's ``protocol``)."""
        return any(m.protocol for m in self.metrics)

    def order_sql(self) -> str:
        """Its keys, its first metric best first, then the model (``order by all`` where it has no metric)."""
        if not self.metrics:
            return "order by all"
        first = self.metrics[0]
        value = first.value or f'"{first.name}"'
        keys = [f'"{k}"' for k in first.keys]
        return "order by " + ", ".join([*keys, f"{value} {'desc' if first.higher_is_better else 'asc'} nulls last",
                                        f'"{first.model}"'])


def leaderboards(*, families: Sequence[Family]) -> list[Leaderboard]:
    """Every leaderboard view of ``families`` (the run's, in their order; each view once, with the metrics read from
    it), then ``headline``."""
    found: dict[tuple[str, str], list[Metric]] = {}
    for family in families:
        for metric in family.metrics:
            found.setdefault((family.name, metric.view), []).append(metric)
        for (name, view), metrics in EXTRA_VIEWS.items():
            if name == family.name:
                found.setdefault((name, view), []).extend(metrics)
    return [*(Leaderboard(f, v, tuple(m)) for (f, v), m in found.items()), Leaderboard(*HEADLINE, ())]


def plain(value: Any) -> Any:
    """``value`` as plain JSON: times as ISO text, decimals as floats, NaN and infinities as null, a DuckDB map as
    a dict, containers element by element."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, decimal.Decimal):
        return plain(float(value))
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, dict):
        if set(value) == {"key", "value"} and isinstance(value["key"], list):  # a MAP as older DuckDBs return it
            return {str(k): plain(v) for k, v in zip(value["key"], value["value"])}
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)


def _read(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> tuple[list[str], list[dict]] | None:
    try:
        relation = con.execute(sql, params or [])
    except duckdb.CatalogException:  # the view is not defined in this checkout
        return None
    columns = [d[0] for d in relation.description]
    return columns, [dict(zip(columns, row)) for row in relation.fetchall()]


def _board(con: duckdb.DuckDBPyConnection, board: str | None, *, require_run: bool = True) -> str | None:
    """The board the connection reads, refused with NoResults when no run published to it (unless not
    ``require_run``: then ``board`` as given, or the lake's default board, None on a lake with no run)."""
    known = [r[0] for r in con.execute("select board from boards").fetchall()]
    current = con.execute("select board from current_board").fetchone()
    current = current[0] if current else None
    if not require_run:
        return board if board is not None else current
    if board is not None and board not in known:
        raise NoResults(f"board {board!r}: no run has published to it, so it has no leaderboards (boards in this "
                        f"lake: {describe(known)}); `dialogbench query \"select * from boards\"` lists them")
    if current is None:
        raise NoResults("no run recorded in this lake, so no board has leaderboards; run `dialogbench run` first")
    return current


def _provenance(con: duckdb.DuckDBPyConnection, run_id: str | None) -> dict:
    header = (_read(con, "select * from report_header") or ([], [{}]))[1]
    h = header[0] if header else {}
    run_id = run_id or h.get("run_id")
    fp = _read(con, "select config_fp from run_configs where run_id = ? order by created_at desc limit 1", [run_id])
    provenance = {
        "run_id": run_id, "config": redact(h["config"]) if h.get("config") else None, "commit": h.get("commit"),
        "versions": plain(h.get("versions")) or {}, "host": h.get("host"), "gpu": h.get("gpu"),
        "started_at": plain(h.get("started_at")), "finished_at": plain(h.get("finished_at")),
        "first_started_at": plain(h.get("first_started_at")), "runs": h.get("runs"),
        "config_fp": fp[1][0]["config_fp"] if fp and fp[1] else None,
        "models": plain(h.get("models")) or [], "judges": plain(h.get("judges")) or [], "dialogbench": __version__}
    return provenance


def judged_families(*, families: Sequence[Family]) -> set[str]:
    """The names of ``families`` whose numbers a judge makes (a metric with a ``protocol``): BotChat, MT-Bench-101."""
    return {f.name for f in families if any(m.protocol for m in f.metrics)}


def run_identities(con: duckdb.DuckDBPyConnection, run_id: str | None) -> dict[str, Identity]:
    """The models and judges of the run's recorded effective config (``run_configs``) by name, to their identity
    (``self_judging.identities_from_yaml``): so a candidate that is its judge under another name is found as the
    report finds it; none for a run that recorded no config (names alone then decide)."""
    read = _read(con, "select config from run_configs where run_id = ? order by created_at desc limit 1", [run_id])
    return identities_from_yaml(read[1][0]["config"] if read and read[1] else None)


def with_self_judged(lb: Leaderboard, columns: list[str], rows: list[dict], *, judged: Collection[str],
                     known: dict[str, Identity]) -> tuple[list[str], list[dict]]:
    """``columns`` and ``rows`` of ``lb`` with ``self_judged`` last where its rows name a model and its judge: on a
    judged leaderboard, whether the model is the row's judge (``self_judging.same_model``); on ``headline``, the same
    for a row of a ``judged`` family and null for the others (GameEval's, the judge checks'). Any other leaderboard,
    or one whose view has no ``judge`` column, as it is."""
    model = lb.metrics[0].model if lb.metrics else "model"
    headline = (lb.family, lb.view) == HEADLINE
    if not (lb.judged or headline) or model not in columns or "judge" not in columns or "self_judged" in columns:
        return columns, rows
    return [*columns, "self_judged"], [
        {**r, "self_judged": same_model(str(r[model]), r["judge"], known)
         if not headline or r.get("family") in judged else None} for r in rows]


def collect_results(lake: Lake, board: str | None = None, *, families: Sequence[Family], run_id: str | None = None,
                    failed: str | None = None, require_run: bool = True) -> dict:
    """The board's leaderboards (None: the lake's default board) as one JSON-able dict (the module's docstring has
    its shape). ``run_id``: the run the results are of (default: the board's latest); ``failed``: that run's failure
    message, if it failed (kept under provenance). NoResults when no run published to the board, unless not
    ``require_run`` (a run publishing its own results: the leaderboards as the views read them, empty or not).
    ``families``: the run's, whose leaderboards are read. A judged leaderboard's rows say whether the model is its
    judge (``self_judged``: ``with_self_judged``, by the run's recorded config)."""
    with connect(lake, board=board) as con:
        name = _board(con, board, require_run=require_run)
        provenance = {**_provenance(con, run_id), "failed": failed}
        known, judged = run_identities(con, provenance["run_id"]), judged_families(families=families)
        boards = {}
        for lb in leaderboards(families=families):
            read = _read(con, f'select * from "{lb.view}" {lb.order_sql()}')
            if read is not None:
                columns, rows = with_self_judged(lb, *read, judged=judged, known=known)
                boards[lb.key] = {"columns": columns, "rows": [{c: plain(r[c]) for c in columns} for r in rows]}
    return {"board": name, "run_id": provenance["run_id"], "generated_at": now().isoformat(),
            "provenance": provenance, "leaderboards": boards}


def results_json(results: dict) -> str:
    return json.dumps(results, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_json(results: dict, path: Path) -> Path:
    """``results`` as JSON at ``path`` (its folder made), replaced atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(path, results_json(results), newline="")
    return path


def write_results(lake: Lake, board: str | None, out_dir: Path, *, families: Sequence[Family],
                  run_id: str | None = None, failed: str | None = None, require_run: bool = True) -> Path:
    """``out_dir/results.json``: ``collect_results`` of ``board`` (its folder made), written to a temp file and
    renamed into place (a reader never sees half of it); returns its path."""
    return write_json(collect_results(lake, board, families=families, run_id=run_id, failed=failed,
                                      require_run=require_run), Path(out_dir) / RESULTS)


def _csv_cell(value: Any, raw: bool) -> Any:
    from dialogbench.text.csvsafe import guard_cell

    if isinstance(value, (dict, list)):
        value = json.dumps(value, ensure_ascii=False)
    return value if raw else guard_cell(value)


def write_csv(results: dict, folder: Path, *, raw: bool = False) -> dict[str, Path]:
    """One CSV per leaderboard of ``results`` in ``folder`` (made if missing): ``<view>.csv`` (view names are unique
    across families; ``headline.csv`` for ``core/headline``), a header of its columns, then its rows; a list or map
    cell as JSON text, null as an empty cell; a text cell a spreadsheet would run as a formula gets a leading
    apostrophe unless ``raw`` (``csvsafe``). Each file is replaced atomically. Returns the files by leaderboard."""
    from dialogbench.text.csvsafe import guard

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for key, table in results["leaderboards"].items():
        text = io.StringIO()
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(table["columns"] if raw else [guard(c) for c in table["columns"]])
        for row in table["rows"]:
            writer.writerow([_csv_cell(row[c], raw) for c in table["columns"]])
        path = folder / f"{key.split('/', 1)[1]}.csv"
        _atomic_write(path, text.getvalue(), newline="")
        written[key] = path
    return written


# ---- the plain-text tables `dialogbench run` prints ----

def _number(value: Any, like: Any = None) -> str:
    """A float with 3 decimals (1 from 100 up, as Elo; ``like``: the number whose size decides), anything else as
    text; "-" for none."""
    if value is None:
        return "-"
    if isinstance(value, float):
        size = like if isinstance(like, (int, float)) else value
        return f"{value:.{1 if abs(size) >= 100 else 3}f}"
    return str(value)


def _value_column(metric: Metric) -> str:
    return f"value:{metric.name}"


def _text_table(header: list[str], lines: list[list[str]]) -> str:
    widths = [max(len(line[i]) for line in [header, *lines]) for i in range(len(header))]
    out = ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in [header, *lines]]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)


def _table(lb: Leaderboard, table: dict, shown) -> str:
    """One leaderboard as text: the model (marked ``†`` when it is its judge: ``self_judged``), the keys, each
    metric with its 95% interval (the run's recorded one, else the view's own) and the ranks it allows, the cells it
    rests on, and "not measured" where so."""
    columns, rows = table["columns"], table["rows"]
    metrics = [m for m in lb.metrics if _value_column(m) in columns]
    if not metrics:  # a view whose metric columns this checkout lacks: every column as it is
        return _text_table(columns, [[_number(r[c]) for c in columns] for r in rows])
    first = metrics[0]
    keys = [k for k in first.keys if k in columns]
    header = [first.model, *keys, *(m.name for m in metrics), "ranks", *([first.n] if first.n in columns else [])]
    measured = "measured" in columns
    lines = []
    for row in rows:
        cells = [marked(str(row.get(first.model)), row.get("self_judged") is True),
                 *(_number(row.get(k)) for k in keys)]
        ranks = ""
        for metric in metrics:
            value = row.get(_value_column(metric))
            where = slice_text(**{k: row.get(k) for k in metric.keys})
            interval = shown.interval(lb.view, metric.name, row.get(metric.model), where, value)
            if interval is None and metric.low in columns and row.get(metric.low) is not None:
                interval = (row[metric.low], row[metric.high])
            if measured and row.get("measured") is False:
                cells.append("not measured")
                continue
            low, high = (_number(float(v), value) for v in interval) if interval else (None, None)
            cells.append(_number(value) + (f" [{low}, {high}]" if interval and value is not None else ""))
            if metric is first:
                ranks = shown.rank_text(lb.view, metric.name, row.get(metric.model), where, value)
        lines.append([*cells, ranks or "-", *([_number(row.get(first.n))] if first.n in columns else [])])
    why = sorted({r["not_measured"] for r in rows if measured and r.get("measured") is False and r.get("not_measured")})
    return "\n".join([_text_table(header, lines), *(f"not measured: {w}" for w in why)])


def _with_values(con: duckdb.DuckDBPyConnection, lb: Leaderboard, *, judged: Collection[str],
                 known: dict[str, Identity]) -> dict | None:
    """The leaderboard's rows with each metric's value (its SQL expression over the view) as ``value:<metric>``, and
    ``self_judged`` where the leaderboard is judged (``with_self_judged``)."""
    values = []
    for metric in lb.metrics:
        expression = metric.value or f'"{metric.name}"'
        values.append(f'{expression} AS "{_value_column(metric)}"')
    try:
        read = _read(con, f'select *, {", ".join(values)} from "{lb.view}" {lb.order_sql()}')
    except duckdb.BinderException:  # a metric's column is not in this checkout's view
        read = _read(con, f'select * from "{lb.view}" order by all')
    if read is None:
        return None
    columns, rows = with_self_judged(lb, *read, judged=judged, known=known)
    return {"columns": columns, "rows": [{c: plain(r[c]) for c in columns} for r in rows]}


def format_all_leaderboards(lake: Lake, board: str | None = None, *, families: Sequence[Family],
                            views: Collection[str] | None = None) -> str:
    """Every leaderboard of ``families`` (the run's) of ``board`` (None: the lake's default board) as plain-text
    tables, Arena and GTEval included: per leaderboard a title line (with its ``<family>/<view>`` key), then a row per
    model and slice with each metric and its 95% interval ``[low, high]`` (the interval the board's latest run
    recorded, a cluster bootstrap, when it is of the value shown; else the view's own, such as Wilson's), ``ranks``
    (the ranks the first metric's interval allows, as recorded), the cells it rests on, and "not measured" (with why,
    under the table) where the board's judge checks refused the number; "(no rows yet)" for an empty one. A model
    rated by a judge that is the model itself (``self_judged``) is marked ``†``, and the tables end with the legend,
    once. NoResults when no run published to the board. ``views``: only these leaderboards (e.g. the ones a run's
    family tables do not show)."""
    with connect(lake, board=board) as con:
        name = _board(con, board)
        run_id = _provenance(con, None)["run_id"]
        known, judged = run_identities(con, run_id), judged_families(families=families)
        shown = read_shown(con)
        selves = False
        parts = [f"leaderboards of board {name} (latest run {run_id}; [95% interval]; ranks: the ranks the first "
                 "number's interval allows)"]
        for lb in leaderboards(families=families):
            if not lb.metrics or (views is not None and lb.view not in views) or \
                    (table := _with_values(con, lb, judged=judged, known=known)) is None:
                continue
            title = f"{TITLES.get(lb.view, lb.view)} ({lb.key})"
            parts.append(f"\n{title}\n" + (_table(lb, table, shown) if table["rows"] else "(no rows yet)"))
            selves = selves or any(r.get("self_judged") is True for r in table["rows"])
    return "\n".join([*parts, *([f"\n{LEGEND}"] if selves else [])])
