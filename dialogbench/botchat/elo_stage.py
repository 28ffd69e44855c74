"""Arena ratings: bootstrap Elo and Bradley–Terry per (judge, N) from the parsed arena comparisons."""

from __future__ import annotations

import json
import logging
import time

import pyarrow as pa

from dialogbench.config import EloConfig
from dialogbench.keys import fingerprint
from dialogbench.lake import Lake
from dialogbench.lake.catalog import connect
from dialogbench.lake.schemas import ELO
from dialogbench.ratings.command import rate
from dialogbench.ratings.games import Games
from dialogbench.runs import StageReport, now

log = logging.getLogger("dialogbench.botchat.elo")


def compute_elo(*, lake: Lake, elo: EloConfig, run_id: str) -> StageReport:
    """Rate every (judge, N) of the current arena plan; unparseable verdicts are not games (they
    are counted in ``botchat_arena`` and ``judge_reliability``). A (judge, N) whose games and settings
    are those of its latest stored ratings is cached; the others go into one ``elo`` file per run."""
    start = time.perf_counter()
    with connect(lake) as con:
        games = con.sql("""select judge, n, cell_key, model_a, model_b, winner from botchat_arena
                           where parsed order by judge, n, cell_key""").to_arrow_table().to_pylist()
        stored = {(r[0], r[1]): json.loads(r[2]).get("input_key") for r in con.sql(
            "select judge, n, arg_max(settings, created_at) from elo group by judge, n").fetchall()}
    groups: dict[tuple[str, int], list[dict]] = {}
    for game in games:
        groups.setdefault((game["judge"], game["n"]), []).append(game)
    rows, created, cached = [], now(), 0
    for (judge, n), group in sorted(groups.items()):
        input_key = fingerprint(elo.model_dump(), [(g["cell_key"], g["winner"]) for g in group])
        if stored.get((judge, n)) == input_key:
            cached += 1
            continue
        settings = json.dumps({**elo.model_dump(), "input_key": input_key}, sort_keys=True)
        rated = rate(Games.from_records([g["model_a"] for g in group], [g["model_b"] for g in group],
                                        [g["winner"] for g in group]),
                     rounds=elo.rounds, repeats=elo.repeats, seed=elo.seed, bt_rounds=elo.bt_rounds,
                     init=elo.init, scale=elo.scale, k=elo.k)
        for r in rated["ratings"]:
            rows.append({"run_id": run_id, "judge": judge, "n": n, "model": r["model"], "elo": r["elo"],
                         "elo_std": r["elo_std"], "ci_low": r["elo_p2_5"], "ci_high": r["elo_p97_5"],
                         "bt": r["bt"], "bt_ci_low": r["bt_ci_low"], "bt_ci_high": r["bt_ci_high"],
                         "games": r["games"], "settings": settings,
                         "created_at": created})
        log.info("elo: judge %s, N=%d: %d games, %d models", judge, n, len(group), len(rated["ratings"]))
    lake.write("elo", pa.Table.from_pylist(rows, schema=ELO), partition={"run_id": run_id})
    return StageReport("botchat_elo", planned=len(groups), cached=cached, computed=len(groups) - cached,
                       seconds=time.perf_counter() - start, detail={"games": len(games)})
