"""A fourth protocol family, as small as one can be: each model repeats each configured word. It is
what a new benchmark adds (a config section, a table, a stage) and registers with one line."""

from __future__ import annotations

import pyarrow as pa

from dialogbench import registry
from dialogbench.backends import get_backend, sampling_for
from dialogbench.cells import Cell, Emit, Planned, Stage, Table
from dialogbench.config import FamilySection
from dialogbench.family import Family
from dialogbench.keys import fingerprint, model_fingerprint

ECHOES = Table("toy_echoes", pa.schema([("cell_key", pa.string()), ("item_id", pa.string()), ("model", pa.string()),
                                        ("reply", pa.string()), ("run_id", pa.string())]),
               partition=("model",), done="true")


class EchoConfig(FamilySection):
    OVERRIDES = {"models": ("models",)}
    words: list[str]
    models: list[str] | None = None


class Echo(Stage):
    table = ECHOES

    def __init__(self, model: str) -> None:
        self.model, self.name = model, f"echo:{model}"

    def models(self, config):
        return [config.model(self.model)]

    def plan(self, config, lake) -> Planned:
        fp = model_fingerprint(config.model(self.model))
        return Planned([Cell(fingerprint("echo", w, fp), w, {"model": self.model}) for w in config.toy.words])

    def compute(self, config, cells: list[Cell], emit: Emit) -> None:
        model = config.model(self.model)
        replies = get_backend(model).generate([[{"role": "user", "content": f"Repeat: {c.item_id}"}] for c in cells],
                                              sampling=sampling_for(model))
        emit([{"cell_key": c.key, "item_id": c.item_id, "model": self.model, "reply": r.text, "run_id": emit.run_id}
              for c, r in zip(cells, replies) if r.ok], [(c, r.error, None) for c, r in zip(cells, replies) if not r.ok])


def stages(config) -> list[Stage]:
    return [Echo(name) for name in config.toy.models or [m.name for m in config.models]]


FAMILY = registry.register(Family(name="toy", title="Toy echo", section=EchoConfig, stages=stages, tables=(ECHOES,)))
