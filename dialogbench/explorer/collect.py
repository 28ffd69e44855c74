"""Everything the explorer page shows, asked of every family the run was built with that has an ``explorer`` (in
their order): their records and shared texts merged, what each protocol had before the cap, and the lake's latest
run; and the board's trend charts (``explorer.trends``: the report's), read on the same connection."""

from __future__ import annotations

from collections.abc import Sequence

from dialogbench.explorer import trends
from dialogbench.explorer.records import Source
from dialogbench.lake import Lake
from dialogbench.lake.catalog import connect
from dialogbench.report.tables import Section
from dialogbench.run.family_spec import Family

DEFAULT_LIMIT = 1000  # records per protocol on one page (the rest are counted, not shown)
LATEST_RUN_SQL = ("select run_id, board from runs where board is not distinct from (select board from current_board) "
                  "order by started_at desc, run_id desc limit 1")


def collect(lake: Lake, *, families: Sequence[Family], limit: int = DEFAULT_LIMIT, board: str | None = None) -> dict:
    """The page's data for ``board`` (None: the lake's default board): ``records`` (as JSON values), ``texts``
    (shared dialogues by key), ``protocols`` (per protocol: its family and title, records in the lake, unparsed,
    shown, unparsed shown), ``families`` (name -> title), ``notes``, ``limit``, ``run`` (the board's latest run id,
    or None) and ``board``; of ``families``, the run's, those with an ``explorer``."""
    return collect_page(lake, families=families, limit=limit, board=board, with_trends=False)[0]


def collect_page(lake: Lake, *, families: Sequence[Family], limit: int = DEFAULT_LIMIT, board: str | None = None,
                 with_trends: bool = True) -> tuple[dict, Section | None]:
    """``collect``'s data and the board's "Trends" section (``explorer.trends.read``; None without ``with_trends``),
    read on one connection."""
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    data: dict = {"records": [], "texts": {}, "protocols": {}, "families": {}, "notes": [], "limit": limit}
    with connect(lake, board=board) as con:
        latest = Source(con, limit).read(LATEST_RUN_SQL) or []
        data["run"] = latest[0]["run_id"] if latest else None
        data["board"] = latest[0]["board"] if latest else board
        for family in families:
            if family.explorer is None:
                continue
            source = Source(con, limit)
            part = family.explorer(source)
            data["families"][family.name] = family.title
            data["records"] += [r.to_json() for r in part.records]
            data["texts"].update(part.texts)
            data["notes"] += part.notes
            for protocol, counts in source.totals.items():
                data["protocols"][protocol] = {"family": family.name, "title": part.titles.get(protocol, protocol),
                                               **counts}
        charts = trends.read(Source(con, limit), families=families) if with_trends else None
    seen: set[str] = set()
    for r in data["records"]:
        if r["id"] in seen:
            raise ValueError(f"two explorer records share the id {r['id']!r}")
        seen.add(r["id"])
    return data, charts
