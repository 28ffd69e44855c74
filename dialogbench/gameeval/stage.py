"""The GameEval stage of one game: plan the missing games, play them batched, write each as it ends.

A game already in the lake is cached unless it ended with ``backend_error`` (then it is replayed, and
the newest row wins in the views). Finished games are written in small batches (every
``WRITE_EVERY_GAMES`` games or ``WRITE_EVERY_S`` seconds) so a killed run loses at most those; games
still in flight are replayed from the start on the next run, with the same seeds.
"""

from __future__ import annotations

import logging
import time
from collections import Counter

import pyarrow as pa

from dialogbench import schedule
from dialogbench.backends import get_backend, release_except
from dialogbench.config import Config
from dialogbench.gameeval.cells import GAMES, game_sampling, limits, plan_setups
from dialogbench.gameeval.game import Game, GameSetup
from dialogbench.gameeval.play import Seat, play
from dialogbench.lake import Lake
from dialogbench.lake.schemas import FAILURES, GAMEEVAL_GAMES, PLANS
from dialogbench.runs import StageReport, now
from dialogbench.schedule import release_before

log = logging.getLogger("dialogbench.gameeval")
TABLE = "gameeval_games"
WRITE_EVERY_GAMES = 64
WRITE_EVERY_S = 30.0


def stage_name(game: str) -> str:
    return f"gameeval_{game}"


def missing(lake: Lake, setups: list[GameSetup]) -> list[GameSetup]:
    """The setups with no stored game (a game that ended on backend errors counts as missing)."""
    if not setups:
        return []
    with lake.connect() as con:
        con.register("planned", pa.table({"cell_key": [s.cell_key for s in setups]}))
        done = {r[0] for r in con.sql(f"""SELECT DISTINCT cell_key FROM {lake.relation_sql(TABLE, GAMEEVAL_GAMES)}
                                          WHERE end_reason IS DISTINCT FROM 'backend_error'""").fetchall()}
    return [s for s in setups if s.cell_key not in done]


def record_plan(lake: Lake, game: str, setups: list[GameSetup], run_id: str) -> None:
    created = now()
    rows = [{"run_id": run_id, "stage": stage_name(game), "cell_key": s.cell_key, "item_id": s.item_id,
             "model": ";".join(f"{role}={model}" for role, model in s.assignment.items()), "judge": None,
             "created_at": created, "task": None} for s in setups]
    lake.write("plans", pa.Table.from_pylist(rows, schema=PLANS), partition={"stage": stage_name(game)},
               name=f"{run_id}.parquet")


class _Writer:
    """Buffers finished games; writes the games and their backend failures together."""

    def __init__(self, lake: Lake, game: str, run_id: str, backends: dict[str, str]) -> None:
        self.lake, self.game, self.run_id = lake, game, run_id
        self.backends = backends  # model name → backend, for each row's provenance
        self.constrained = 0
        self.buffer: list[Game] = []
        self.last = time.monotonic()
        self.outcomes: Counter[str] = Counter()
        self.written = self.failed = self.chat_errors = 0

    def add(self, games: list[Game]) -> None:
        self.buffer += games
        if len(self.buffer) >= WRITE_EVERY_GAMES or time.monotonic() - self.last >= WRITE_EVERY_S:
            self.flush()

    def flush(self) -> None:
        if not self.buffer:
            return
        games, self.buffer, self.last = self.buffer, [], time.monotonic()
        created = now()
        failures = [{"cell_key": g.setup.cell_key, "stage": stage_name(self.game), "item_id": g.setup.item_id,
                     "model": g.players[player].model, "judge": None, "error": error, "run_id": self.run_id,
                     "created_at": created} for g in games for player, error in g.backend_errors]
        self.lake.write("failures", pa.Table.from_pylist(failures, schema=FAILURES), partition={"stage": stage_name(self.game)})
        rows = [{**g.row(run_id=self.run_id), "backend": "; ".join(sorted({self.backends[m] for m in
                                                                        g.setup.assignment.values()}))} for g in games]
        self.lake.write(TABLE, pa.Table.from_pylist(rows, schema=GAMEEVAL_GAMES), partition={"game": self.game})
        for g in games:
            self.outcomes[g.outcome or g.end_reason] += 1
            self.chat_errors += g.chat_errors
            self.constrained += g.constrained_moves
            self.failed += g.end_reason == "backend_error"
        self.written += len(games)


def run_game(config: Config, game: str, run_id: str) -> StageReport:
    """Plan, play and write every missing ``game`` cell of the config."""
    stage = stage_name(game)
    settings = config.gameeval
    if not settings.enabled or not getattr(settings, game).enabled:
        return StageReport(stage, detail={"enabled": False})
    lake = Lake(config.lake)
    release_before(config, schedule.game_stage(game))
    setups = plan_setups(config, game)
    record_plan(lake, game, setups, run_id)
    todo = missing(lake, setups)
    report = StageReport(stage, planned=len(setups), cached=len(setups) - len(todo))
    if not todo:
        log.info("%s: all %d games cached", game, len(setups))
        return report
    start = time.perf_counter()
    cls, game_limits = GAMES[game], limits(config, game)
    writer = _Writer(lake, game, run_id, {m.name: m.backend for m in config.gameeval_models()})
    groups: dict[tuple[str, ...], list[GameSetup]] = {}
    for setup in todo:  # games that need the same models play together (Ask-Guess: one model at a time)
        groups.setdefault(tuple(sorted(set(setup.assignment.values()))), []).append(setup)
    order = sorted(groups)
    calls = steps = moves = trimmed = 0
    for i, names in enumerate(order):
        seats = {}
        for name in names:
            model = config.model(name)
            sampling = game_sampling(config, model)
            seats[name] = Seat(get_backend(model), sampling, max(model.context_window - sampling.max_tokens, 16))
        log.info("%s: playing %d games of %s (%d cached in all), %d at a time", game, len(groups[names]),
                 " vs ".join(names), report.cached, settings.concurrency)
        stats = play((cls(s, **game_limits) for s in groups[names]), seats=seats, concurrency=settings.concurrency,
                     on_done=writer.add)
        calls, steps, moves, trimmed = (calls + stats.backend_calls, steps + stats.steps, moves + stats.moves,
                                        trimmed + stats.trimmed_prompts)
        later = [config.model(n) for group in order[i + 1:] for n in group]
        after = schedule.stage_after(config, schedule.game_stage(game))
        release_except([*later, *(schedule.models_from(config, after) if after else [])])
    writer.flush()
    report.computed, report.failed = writer.written - writer.failed, writer.failed
    report.seconds = time.perf_counter() - start
    report.detail = {"backend_calls": calls, "steps": steps, "moves": moves, "chat_errors": writer.chat_errors,
                     "constrained_moves": writer.constrained,
                     "trimmed_prompts": trimmed, "model_groups": len(order),
                     "outcomes": dict(sorted(writer.outcomes.items()))}
    log.info("%s: %d games in %d steps (%d backend calls, %d moves), outcomes %s, %d chat errors",
             game, writer.written, steps, calls, moves, dict(writer.outcomes), writer.chat_errors)
    return report
