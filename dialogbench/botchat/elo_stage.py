"""Arena ratings: bootstrap Elo and Bradley–Terry per (judge, N) from the parsed arena comparisons."""

from __future__ import annotations

import json
import logging

from dialogbench.botchat.tables import ELO_TABLE
from dialogbench.cells import Cell, Emit, Planned, Stage
from dialogbench.cells.keys import fingerprint
from dialogbench.lake import Lake
from dialogbench.lake.catalog import connect
from dialogbench.ratings.command import rate
from dialogbench.ratings.games import Games
from dialogbench.run.runs import now

log = logging.getLogger("dialogbench.botchat.elo")


class ArenaRatings(Stage):
    """A cell per (judge, N) of the current arena plan, keyed by its games and the Elo settings;
    cached when that is the input of its latest stored ratings. Unparseable verdicts are not games
    (they are counted in ``botchat_arena`` and ``judge_reliability``)."""

    name = "botchat_elo"
    table = ELO_TABLE
    records_plan = False

    def plan(self, config, lake: Lake) -> Planned:
        elo = config.botchat.arena.elo
        with connect(lake, board=config.board) as con:  # the run's board: its current arena cells and ratings
            games = con.sql("""select judge, n, cell_key, model_a, model_b, winner from botchat_arena
                               where parsed order by judge, n, cell_key""").to_arrow_table().to_pylist()
            stored = {(r[0], r[1]): json.loads(r[2]).get("input_key") for r in con.sql(
                "select judge, n, arg_max(settings, created_at) from elo group by judge, n").fetchall()}
        groups: dict[tuple[str, int], list[dict]] = {}
        for game in games:
            groups.setdefault((game["judge"], game["n"]), []).append(game)
        cells = [Cell(fingerprint(elo.model_dump(), [(g["cell_key"], g["winner"]) for g in group]), f"N={n}",
                      judge=judge, payload=(n, group)) for (judge, n), group in sorted(groups.items())]
        todo = [c for c in cells if stored.get((c.judge, c.payload[0])) != c.key]
        return Planned(cells, detail={"games": len(games)}, todo=todo)

    def compute(self, config, cells: list[Cell], emit: Emit) -> None:
        elo, created, rows = config.botchat.arena.elo, now(), []
        for cell in cells:
            n, group = cell.payload
            settings = json.dumps({**elo.model_dump(), "input_key": cell.key}, sort_keys=True)
            rated = rate(Games.from_records([g["model_a"] for g in group], [g["model_b"] for g in group],
                                            [g["winner"] for g in group]),
                         rounds=elo.rounds, repeats=elo.repeats, seed=elo.seed, bt_rounds=elo.bt_rounds,
                         init=elo.init, scale=elo.scale, k=elo.k)
            rows += [{"run_id": emit.run_id, "judge": cell.judge, "n": n, "model": r["model"], "elo": r["elo"],
                      "elo_std": r["elo_std"], "ci_low": r["elo_p2_5"], "ci_high": r["elo_p97_5"], "bt": r["bt"],
                      "bt_ci_low": r["bt_ci_low"], "bt_ci_high": r["bt_ci_high"], "games": r["games"],
                      "settings": settings, "created_at": created, "board": config.board} for r in rated["ratings"]]
            log.info("elo: judge %s, N=%d: %d games, %d models", cell.judge, n, len(group), len(rated["ratings"]))
        emit(rows, computed=len(cells))
