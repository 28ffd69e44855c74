"""The GameEval stage of one game: the missing games, played batched, written as they end.

A game already in the lake is cached unless it ended with ``backend_error`` (then it is replayed, and
the newest row wins in the views). Finished games are written in small batches (every
``WRITE_EVERY_GAMES`` games or ``WRITE_EVERY_S`` seconds) so a killed run loses at most those; games
still in flight are replayed from the start on the next run, with the same seeds.
"""

from __future__ import annotations

import logging
import time
from collections import Counter

from dialogbench.backends import get_backend, release_except
from dialogbench.cells import Cell, Emit, Planned, Stage
from dialogbench.gameeval.cells import GAMES, game_models, game_sampling, limits, plan_setups
from dialogbench.gameeval.config import players
from dialogbench.gameeval.game import Game, GameSetup
from dialogbench.gameeval.play import Seat, play
from dialogbench.gameeval.tables import GAMES_TABLE
from dialogbench.lake import Lake
from dialogbench.text.lengths import words_to_tokens

log = logging.getLogger("dialogbench.gameeval")
WRITE_EVERY_GAMES = 64
MOVE_WORDS = 30  # a move the games' rules ask for (a question, an answer, a description, a vote): a sentence or two
WRITE_EVERY_S = 30.0


def stage_name(game: str) -> str:
    return f"gameeval_{game}"


class _Writer:
    """Buffers finished games; emits the games and their backend failures together."""

    def __init__(self, emit: Emit, cells: dict[str, Cell], backends: dict[str, str]) -> None:
        self.emit, self.cells = emit, cells
        self.backends = backends  # model name → backend, for each row's provenance
        self.buffer: list[Game] = []
        self.last = time.monotonic()
        self.outcomes: Counter[str] = Counter()
        self.written = self.failed = self.chat_errors = self.constrained = self.placeholder = 0

    def add(self, games: list[Game]) -> None:
        self.buffer += games
        if len(self.buffer) >= WRITE_EVERY_GAMES or time.monotonic() - self.last >= WRITE_EVERY_S:
            self.flush()

    def flush(self) -> None:
        if not self.buffer:
            return
        games, self.buffer, self.last = self.buffer, [], time.monotonic()
        failed = sum(g.end_reason == "backend_error" for g in games)
        self.emit([{**g.row(run_id=self.emit.run_id),
                    "backend": "; ".join(sorted({self.backends[m] for m in g.setup.assignment.values()}))}
                   for g in games],
                  [(self.cells[g.setup.cell_key], error, g.players[player].model)
                   for g in games for player, error in g.backend_errors],
                  computed=len(games) - failed, failed=failed)
        for g in games:
            self.outcomes[g.outcome or g.end_reason] += 1
            self.chat_errors += g.chat_errors
            self.constrained += g.constrained_moves
            self.placeholder += g.placeholder_moves
        self.written += len(games)


class PlayGames(Stage):
    """Every game of one kind the config asks for; the latest plan of the stage is the current one."""

    table = GAMES_TABLE
    plan_per_models = False
    role = "player"

    def __init__(self, game: str) -> None:
        self.game = game
        self.name = stage_name(game)

    def models(self, config):
        return game_models(config, self.game)

    def splits(self, config) -> bool:
        """Ask-Guess: each game is one model's alone, apart from every other (SpyFall and TofuKingdom split by their
        groups of players already)."""
        return self.game == "askguess"

    def tokens_per_cell(self, config) -> int:
        """Every move a game may make (``Game.max_moves``, each after its retries) at its player's most tokens."""
        most = GAMES[self.game].max_moves(**limits(config, self.game))
        return most * max((game_sampling(config, m).max_tokens for m in self.models(config)), default=0)

    def typical_tokens_per_cell(self, config) -> float | None:
        """Every move a game may make (as the bound: a game cut short makes fewer), each as long as a move the rules
        ask for: a question, an answer, a description or a vote, one or two sentences (``MOVE_WORDS``), at most its
        player's max_tokens. The lake's history replaces it after the first run."""
        most = GAMES[self.game].max_moves(**limits(config, self.game))
        cap = min((game_sampling(config, m).max_tokens for m in self.models(config)), default=0)
        return most * words_to_tokens(MOVE_WORDS, cap=cap)

    def model_groups(self, config):
        """Each group of players that plays together (``compute``'s order): one model for Ask-Guess, the pair of a
        SpyFall game, the three camps of a TofuKingdom game."""
        groups = sorted({tuple(sorted(set(s.assignment.values()))) for s in plan_setups(config, self.game)})
        return [[config.model(n) for n in group] for group in groups]

    def plan(self, config, lake: Lake) -> Planned:
        return Planned([Cell(s.cell_key, s.item_id, s.assignment, payload=s) for s in plan_setups(config, self.game)])

    def compute(self, config, cells: list[Cell], emit: Emit) -> None:
        """Play every cell's game, batched: games that need the same models play together (Ask-Guess:
        one model at a time), a model group's engines are released when no later group or stage needs them."""
        game = self.game
        writer = _Writer(emit, {c.key: c for c in cells}, {m.name: m.backend for m in players(config)})
        groups: dict[tuple[str, ...], list[GameSetup]] = {}
        for cell in cells:
            groups.setdefault(tuple(cell.models), []).append(cell.payload)
        order = sorted(groups)
        try:
            calls, steps, moves, trimmed = self._play_groups(config, groups, order, writer)
        finally:  # a stopped run (or a failing one) keeps the games that ended; those in flight replay next run
            writer.flush()
        emit.detail = {"backend_calls": calls, "steps": steps, "moves": moves, "chat_errors": writer.chat_errors,
                       "constrained_moves": writer.constrained, "placeholder_moves": writer.placeholder,
                       "trimmed_prompts": trimmed, "model_groups": len(order),
                       "outcomes": dict(sorted(writer.outcomes.items()))}
        log.info("%s: %d games in %d steps (%d backend calls, %d moves), outcomes %s, %d chat errors, "
                 "%d moves repeating the prompt's placeholder", game, writer.written, steps, calls, moves,
                 dict(writer.outcomes), writer.chat_errors, writer.placeholder)

    def _play_groups(self, config, groups: dict[tuple[str, ...], list[GameSetup]], order: list[tuple[str, ...]],
                     writer: _Writer) -> tuple[int, int, int, int]:
        game, settings = self.game, config.gameeval
        cls, game_limits = GAMES[game], limits(config, game)
        calls = steps = moves = trimmed = 0
        for i, names in enumerate(order):
            seats = {}
            for name in names:
                model = config.model(name)
                sampling = game_sampling(config, model)
                seats[name] = Seat(get_backend(model), sampling, max(model.context_window - sampling.max_tokens, 16))
            log.info("%s: playing %d games of %s, %d at a time", game, len(groups[names]), " vs ".join(names),
                     settings.concurrency)
            stats = play((cls(s, **game_limits) for s in groups[names]), seats=seats,
                         concurrency=settings.concurrency, on_done=writer.add)
            calls, steps, moves, trimmed = (calls + stats.backend_calls, steps + stats.steps, moves + stats.moves,
                                            trimmed + stats.trimmed_prompts)
            later = [config.model(n) for group in order[i + 1:] for n in group]
            release_except([*later, *writer.emit.after])  # its later groups' players, the later stages' models
        return calls, steps, moves, trimmed
