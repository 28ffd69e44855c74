"""What a family gives the explorer (``Family.explorer``): ``explorer(source) -> Part``. ``source`` reads the
catalog's views (``read``) and keeps each protocol's records to the page's cap (``capped``); the ``Part`` holds
the family's records, each in the one format the page renders, and the dialogues they share (``texts``).

A record is one judged thing: a judge verdict with what the judge read (a dialogue, two side by side, an answer in
its context), or a game with its transcript. Its body is a list of blocks (``dialogue``, ``turns``, ``text``,
``fields``): the page renders those kinds and nothing family-specific."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb

Rows = list[dict]


@dataclass(frozen=True)
class Record:
    """``id`` is unique on the page (the cell key, prefixed with the protocol); ``protocol`` its stage
    (botchat_unieval, mtbench101, gameeval_spyfall, …); ``models`` the model(s) it is about; ``judge`` the judge
    (None: nothing judged it, e.g. a game the rules score); ``verdict`` a short label the page filters on
    ("Yes", "score 7", "ST"; "unparsed" when the judge's reply could not be read); ``parsed`` False marks it
    unparseable; ``raw_output`` the judge's reply as it came; ``result`` what was parsed from it (name -> value);
    ``blocks`` what the judge read or the game's moves; ``search`` extra text the free-text search matches."""

    id: str
    family: str
    protocol: str
    title: str
    models: tuple[str, ...]
    judge: str | None
    verdict: str
    parsed: bool
    raw_output: str | None = None
    result: dict[str, Any] = field(default_factory=dict)
    blocks: tuple[dict, ...] = ()
    search: str = ""

    def to_json(self) -> dict:
        return {"id": self.id, "family": self.family, "protocol": self.protocol, "title": self.title,
                "models": list(self.models), "judge": self.judge, "verdict": self.verdict, "parsed": self.parsed,
                "raw": self.raw_output, "result": {k: plain(v) for k, v in self.result.items()},
                "blocks": list(self.blocks), "search": self.search}


@dataclass
class Part:
    """A family's records and the texts they share by key (a BotChat dialogue judged by several protocols is
    stored once): ``texts[key] = {"lines": [...], "speakers": [...], "seed": k}`` (``seed``: the first k lines are
    the dataset's, not the model's). ``notes`` are shown at the top of the page (where a text came from, …);
    ``titles`` name its protocols ("UniEval")."""

    records: list[Record] = field(default_factory=list)
    texts: dict[str, dict] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    titles: dict[str, str] = field(default_factory=dict)  # protocol -> its name on the page ("UniEval")


# The body blocks. ``dialogue`` shows a shared text (``texts[ref]``) up to its ``upto``-th line, line ``mark``
# highlighted with ``note``; ``turns`` inline rows (who, text, note, raw, bad); ``text`` one passage; ``fields``
# name / value pairs.

def dialogue(title: str, ref: str, *, upto: int | None = None, mark: int | None = None,
             note: str | None = None) -> dict:
    return {"kind": "dialogue", "title": title, "ref": ref, "upto": upto, "mark": mark, "note": note}


def turn(who: str, text: str | None, *, note: str | None = None, raw: str | None = None, bad: str | None = None,
         mark: bool = False) -> dict:
    """One row of a ``turns`` block: ``note`` under the text (a player's private thought), ``raw`` the model's
    reply as it came (folded), ``bad`` why the move was invalid (the row is flagged)."""
    return {"who": who, "text": text, "note": note, "raw": raw, "bad": bad, "mark": mark}


def turns(title: str, rows: list[dict]) -> dict:
    return {"kind": "turns", "title": title, "rows": rows}


def text(title: str, body: str | None, *, folded: bool = False) -> dict:
    return {"kind": "text", "title": title, "text": body, "folded": folded}


def fields(title: str, pairs: dict[str, Any]) -> dict:
    return {"kind": "fields", "title": title, "pairs": [[k, plain(v)] for k, v in pairs.items()]}


def plain(value: Any) -> Any:
    """A JSON value: str / int / float / bool / None as they are, anything else (dates, maps) as text."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return ", ".join(f"{k}: {v}" for k, v in value.items())
    return str(value)


@dataclass
class Source:
    """What a family's ``explorer`` reads from: the catalog connection and the page's cap (``limit`` records per
    protocol). ``capped`` records how many each protocol had before the cap (``totals``)."""

    con: duckdb.DuckDBPyConnection
    limit: int
    totals: dict[str, dict[str, int]] = field(default_factory=dict)

    def read(self, sql: str, params: Sequence = ()) -> Rows | None:
        """The rows of ``sql`` as dicts; None when a view it reads does not exist (a lake from before it)."""
        try:
            relation = self.con.execute(sql, list(params))
        except duckdb.CatalogException:
            return None
        columns = [d[0] for d in relation.description]
        return [dict(zip(columns, row)) for row in relation.fetchall()]

    def capped(self, protocol: str, sql: str, params: Sequence = (), *, by: str = "model",
               order: str = "item_id, cell_key") -> Rows:
        """The rows of ``sql`` (which has a boolean ``parsed`` column), at most ``limit`` of them: an even share of
        each ``by`` group (a model), each group's unparsed rows first, then by ``order``; returned by ``by``, then
        ``order``. The rows before the cap are counted in ``totals[protocol]`` (records, unparsed, shown)."""
        counts = self.read(f"select count(*) as records, count(*) filter (where not parsed) as unparsed "
                           f"from ({sql})", params)
        if counts is None:
            return []
        rows = self.read(f"""
            with found as ({sql}),
            ranked as (
                select *, row_number() over (partition by {by} order by parsed, {order}) as explorer_rank_
                from found
            ),
            kept as (
                select * from ranked order by explorer_rank_, {by}, {order} limit {int(self.limit)}
            )
            select * exclude (explorer_rank_) from kept order by {by}, {order}""", params) or []
        total = self.totals.setdefault(protocol, {"records": 0, "unparsed": 0, "shown": 0, "unparsed_shown": 0})
        total["records"] += counts[0]["records"]
        total["unparsed"] += counts[0]["unparsed"]
        total["shown"] += len(rows)
        total["unparsed_shown"] += sum(1 for r in rows if not r["parsed"])
        return rows

    def keyed(self, sql: str, keys: Sequence[str]) -> Rows:
        """``sql`` with ``{}`` filled by one placeholder per key (``where cell_key in ({})``): a filter DuckDB
        pushes below an unnest, where a join would read every row. No keys: no rows."""
        keys = list(keys)
        if not keys:
            return []
        return self.read(sql.format(", ".join("?" * len(keys))), keys) or []
