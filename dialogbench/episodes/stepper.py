"""The one episode engine: step every episode in flight together, one backend call per model a step.

Each step takes every pending request of every episode in flight, groups them by model (models in the
order they first appear, requests in episode order) and sends each group as ONE batch (``batch.send``:
one token count, fitting of the over-budget prompts, one ``generate``). Then every episode in flight
resolves its replies, finished ones go to ``on_done`` and their slots to the next queued episodes, so
at most ``concurrency`` are in flight and batches stay full.
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping, Sequence, TypeVar

from dialogbench.episodes.batch import send
from dialogbench.episodes.progress import Progress
from dialogbench.episodes.protocol import Episode, Reply, Request, Seat
from dialogbench.episodes.stats import RunStats

E = TypeVar("E", bound=Episode)


def step(active: Sequence[Episode], *, seats: Mapping[str, Seat], stats: RunStats,
         on_call: Callable[[str, list[Reply]], None] | None = None) -> None:
    """One step: one backend call per model with pending requests, then every episode resolves."""
    groups: dict[str, list[tuple[int, Request]]] = {}
    for i, episode in enumerate(active):
        for request in episode.pending():
            groups.setdefault(request.model, []).append((i, request))
    replies: list[list[Reply]] = [[] for _ in active]
    for model, group in groups.items():
        got = send(seats[model], [request for _, request in group])
        stats.backend_calls += 1
        stats.moves += len(got)
        stats.batch_sizes.append(len(got))
        stats.trimmed_prompts += sum(r.trimmed for r in got)
        if on_call is not None:
            on_call(model, got)
        for (i, _), reply in zip(group, got):
            replies[i].append(reply)
    for episode, mine in zip(active, replies):
        episode.resolve(mine)
    stats.steps += 1


def run_episodes(episodes: Iterable[E], *, seats: Mapping[str, Seat], concurrency: int | None = None,
                 on_done: Callable[[list[E]], None] | None = None,
                 on_call: Callable[[str, list[Reply]], None] | None = None,
                 on_step: Callable[[RunStats], None] | None = None,
                 progress: Progress | None = None) -> RunStats:
    """Step ``episodes`` (at most ``concurrency`` in flight, None: all) until all are done.

    ``on_call(model, replies)`` sees each backend call's replies before any episode does (write
    rows there and a killed run keeps them); ``on_done(episodes)`` gets the episodes that finished
    in a step, after it; ``on_step(stats)`` runs after every step. Backend exceptions propagate."""
    if concurrency is not None and concurrency < 1:
        raise ValueError(f"concurrency must be at least 1 (got {concurrency})")
    queue, active, stats = iter(episodes), [], RunStats()
    progress = progress or Progress()
    progress.start()

    def refill() -> None:
        while concurrency is None or len(active) < concurrency:
            episode = next(queue, None)
            if episode is None:
                return
            active.append(episode)

    refill()
    while active:
        step(active, seats=seats, stats=stats, on_call=on_call)
        done = [e for e in active if e.done]
        if done:
            active[:] = [e for e in active if not e.done]
            stats.finished += len(done)
            if on_done is not None:
                on_done(done)
        refill()
        if on_step is not None:
            on_step(stats)
        progress.tick(stats, in_flight=len(active))
    return stats
