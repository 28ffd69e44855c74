"""Does tonight fit? ``dialogbench plan``'s hours: each sized row's tokens at its models' throughput, the GPUs they
hold, and, for ``--hours N``, the GPUs (and boxes) the night needs to end within N hours.

Throughput, per model: ``throughput_tok_s`` in its config (what ``bench/gpu.py`` measures on the GPU it will run on)
when set, else what the lake measured (completion tokens over backend seconds of every recorded call of the model),
else unknown (the row's hours are then unknown, and the summary says which models lack one). A row's GPUs are its
models' engine asks (``dispatch.placement.ask``: tensor x pipeline parallel); an endpoint or a scripted model holds
none (its hours are wall time, not GPU time).

The arithmetic of ``--hours N``: a unit (a model's own work, or a group of a game's players: ``dispatch.units``) is
not split across GPUs, except its stages that split in ``dispatch.shards`` parts (their hours divided by the shards),
so the night takes at least its longest unit's hours, whatever the GPUs; below that, GPUs
needed = ceil(GPU-hours / N), and never fewer than the largest single ask. Judging on endpoints is wall time beside
it. Boxes = GPUs / the config's ``devices`` (one box's GPUs) when it names them."""

from __future__ import annotations

import math
from dataclasses import dataclass

from dialogbench.cells.shared_tables import BACKEND_CALLS_TABLE
from dialogbench.dispatch.placement import ask
from dialogbench.dispatch.units import WORK_ROLES
from dialogbench.lake import Lake


@dataclass(frozen=True)
class Throughput:
    tok_s: float
    source: str  # "config" or "lake"


def measured(lake: Lake) -> dict[str, float]:
    """model -> completion tokens a second over every call the lake recorded of it (none that took no time)."""
    if not lake.has(BACKEND_CALLS_TABLE.name):
        return {}
    calls = lake.relation_sql(BACKEND_CALLS_TABLE.name, BACKEND_CALLS_TABLE.schema)
    with lake.connect() as con:
        rows = con.sql(f"SELECT model, sum(completion_tokens), sum(seconds) FROM {calls} GROUP BY model").fetchall()
    return {model: tokens / seconds for model, tokens, seconds in rows if seconds and tokens}


def throughputs(config, lake: Lake) -> dict[str, Throughput]:
    """Every model's throughput that is known: the config's, else the lake's."""
    found = {m: Throughput(t, "lake") for m, t in measured(lake).items()}
    for model in config.models:
        if model.throughput_tok_s is not None:
            found[model.name] = Throughput(model.throughput_tok_s, "config")
    return found


def gpus(model) -> int:
    """The GPUs ``model``'s engine holds: its ask, 1 for the transformers backend on a GPU, 0 for the rest."""
    if (a := ask(model)) is not None:
        return a.gpus
    return 1 if model.backend == "transformers" and model.device != "cpu" else 0


@dataclass(frozen=True)
class Hours:
    """One sized row's time: ``hours`` of its models at their throughput, ``gpu_hours`` = hours x their GPUs."""

    runs_on: tuple[str, ...]
    tokens: int
    hours: float | None
    gpu_hours: float | None
    gpus: int
    parts: int = 1  # the shards its cells are computed in at once (``dispatch.shards``, a stage that splits)


def row_hours(row, models: list, known: dict[str, Throughput], *, parts: int = 1) -> Hours:
    """``row``'s (a ``sizing.Size``) tokens (expected, else its bound) at the throughput of ``models`` (the ones that
    generate them: a judge's for its verdicts), side by side when several (a game's players take turns: their mean)."""
    tokens = row.expected_tokens if row.expected_tokens is not None else row.max_tokens
    names = tuple(m.name for m in models)
    held = sum(gpus(m) for m in models)
    rates = [known[n].tok_s for n in names if n in known]
    if not tokens:
        return Hours(names, 0, 0.0, 0.0, held, parts)
    if not names or len(rates) < len(names):
        return Hours(names, tokens, None, None, held, parts)
    hours = tokens / (sum(rates) / len(rates)) / 3600
    return Hours(names, tokens, hours, hours * held, held, parts)


@dataclass(frozen=True)
class Fit:
    hours: float
    gpu_hours: float | None
    longest_unit: tuple[str, float] | None
    gpus_needed: int | None
    boxes_needed: int | None
    box_gpus: int | None
    fits: bool | None
    unknown: tuple[str, ...]  # models on GPUs whose throughput is unknown (no verdict without them)
    wall_hours: float | None  # the rows that hold no GPU (endpoints), one after the other
    untimed: tuple[str, ...] = ()  # models on no GPU (endpoints) whose throughput is unknown

    def to_dict(self) -> dict:
        return {"hours": self.hours, "gpu_hours": self.gpu_hours, "fits": self.fits, "gpus_needed": self.gpus_needed,
                "boxes_needed": self.boxes_needed, "box_gpus": self.box_gpus, "unknown": list(self.unknown),
                "longest_unit": None if self.longest_unit is None else {"unit": self.longest_unit[0],
                                                                        "hours": self.longest_unit[1]},
                "wall_hours": self.wall_hours, "untimed": list(self.untimed)}

    def lines(self) -> list[str]:
        """What ``plan --hours`` says: the verdict first."""
        if self.unknown:
            return [f"does it fit in {self.hours:g} h? unknown: no throughput for {', '.join(self.unknown)} (set "
                    "models[].throughput_tok_s, e.g. from bench/gpu.py on that GPU, or run once: the lake measures "
                    "it)"]
        out = []
        name, longest = self.longest_unit or ("-", 0.0)
        if not self.gpus_needed:
            out.append(f"no GPU work to fit in {self.hours:g} h: every model to run is an endpoint or runs on no GPU")
        elif self.fits:
            out.append(f"fits in {self.hours:g} h on {self.gpus_needed} GPU(s)"
                       + (f" = {self.boxes_needed} box(es) of {self.box_gpus}" if self.box_gpus else "")
                       + f": {self.gpu_hours:,.1f} GPU-hours, the longest unit {name} {longest:,.2f} h")
        else:
            out.append(f"does not fit in {self.hours:g} h: unit {name} alone takes {longest:,.2f} h on its GPUs (a "
                       "unit's work is not split across GPUs: a faster engine, a higher throughput_tok_s, or fewer "
                       f"items; {self.gpu_hours:,.1f} GPU-hours in all)")
        if self.wall_hours:
            out.append(f"endpoint and CPU work beside it: {self.wall_hours:,.2f} h of calls one after the other "
                       "(their own concurrency shortens it)")
        if self.untimed:
            out.append(f"not counted: {', '.join(self.untimed)} (on no GPU of ours, throughput unknown: set "
                       "throughput_tok_s to count their time)")
        return out


def fit(rows: list[tuple[object, Hours]], *, hours: float, box_gpus: int | None) -> Fit:
    """Whether the work of ``rows`` (each a sized row and its ``Hours``) ends within ``hours``; a unit is the models a
    row runs on (its ``runs_on``: one model's stages run one after the other on its GPUs)."""
    unknown = sorted({n for _, h in rows if h.hours is None and h.tokens and h.gpus for n in h.runs_on})
    untimed = sorted({n for _, h in rows if h.hours is None and h.tokens and not h.gpus for n in h.runs_on})
    per_unit_hours: dict[str, float] = {}
    gpu_hours, wall, largest = 0.0, 0.0, 0
    for _, h in rows:
        if h.hours is None:
            continue
        if h.gpus:
            gpu_hours += h.gpu_hours or 0.0
            largest = max(largest, h.gpus)
            unit = "+".join(h.runs_on)
            per_unit_hours[unit] = per_unit_hours.get(unit, 0.0) + h.hours / h.parts  # its shards at once
        else:
            wall += h.hours
    longest = max(per_unit_hours.items(), key=lambda kv: kv[1], default=None)
    if unknown:
        return Fit(hours, None, longest, None, None, box_gpus, None, tuple(unknown), wall, tuple(untimed))
    needed = max(math.ceil(gpu_hours / hours - 1e-9), largest) if gpu_hours else 0
    boxes = math.ceil(needed / box_gpus) if box_gpus and needed else None
    fits = longest is None or longest[1] <= hours
    return Fit(hours, gpu_hours, longest, needed, boxes, box_gpus, fits, (), wall, tuple(untimed))


def hours_of(rows: list, stages: list, config, known: dict[str, Throughput]) -> list[tuple[object, Hours]]:
    """Each sized row with its ``Hours``: a chatbot's or players' row runs on its own models (a game's group), a
    judge's on the stage's judges."""
    by_name = {s.name: s for s in stages}
    out = []
    for row in rows:
        stage = by_name[row.stage]
        parts = 1
        if stage.role in WORK_ROLES and row.models and stage.models(config):
            names = row.models.split(", ")  # a game's players; a lake's model no longer in the config has none
            models = [m for m in config.models if m.name in names]
            if config.dispatch is not None and len(names) == 1 and stage.splits(config):
                parts = config.dispatch.shards
        else:
            models = stage.models(config)
        out.append((row, row_hours(row, models, known, parts=parts)))
    return out


UNIT_COLUMNS = ("unit", "tokens", "tok_s", "source", "hours", "gpus", "gpu_hours")


def per_unit(rows: list[tuple[object, Hours]], known: dict[str, Throughput]) -> list[dict]:
    """One line per set of models that computes (a unit: a model's own work, a game's group, a judge's verdicts):
    its tokens, their throughput and its source, hours, GPUs and GPU-hours. Hours are unknown (None) when one of its
    models has no throughput."""
    units: dict[tuple[str, ...], dict] = {}
    for _, h in rows:
        if not h.tokens or not h.runs_on:
            continue
        line = units.setdefault(h.runs_on, {"unit": "+".join(h.runs_on), "tokens": 0, "hours": 0.0,
                                            "gpus": h.gpus, "gpu_hours": 0.0})
        line["tokens"] += h.tokens
        line["hours"] = None if h.hours is None or line["hours"] is None else line["hours"] + h.hours
        line["gpu_hours"] = None if line["hours"] is None else line["hours"] * line["gpus"]
    for names, line in units.items():
        rates = [known[n] for n in names if n in known]
        line["tok_s"] = round(sum(r.tok_s for r in rates) / len(rates)) if len(rates) == len(names) else None
        line["source"] = "/".join(sorted({r.source for r in rates})) if line["tok_s"] else "-"
    return sorted(units.values(), key=lambda u: -(u["hours"] or 0))


def render_units(lines: list[dict]) -> str:
    cells = [[("-" if v is None else f"{v:,}" if isinstance(v, int) else f"{v:,.2f}" if isinstance(v, float) else v)
              for v in (line[c] for c in UNIT_COLUMNS)] for line in lines]
    table = [list(UNIT_COLUMNS), *cells]
    widths = [max(len(str(row[i])) for row in table) for i in range(len(UNIT_COLUMNS))]
    return "\n".join("  ".join(str(v).ljust(w) if i in (0, 3) else str(v).rjust(w)
                               for i, (v, w) in enumerate(zip(row, widths))) for row in table)
