"""A fourth protocol family, as small as one can be: each model repeats each configured word, then a judge
grades each reply. It is what a new generate-then-judge benchmark adds (a config section, its tables, its
stages, a prompt and a parser) and registers with one line."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from dialogbench.run import registry
from dialogbench.backends import get_backend, sampling_for
from dialogbench.cells import Cell, Emit, Planned, Stage, Table
from dialogbench.cells.shared_tables import verdict_table
from dialogbench.run.config import FamilySection
from dialogbench.run.family_spec import Family
from dialogbench.cells.judging import JudgeStage, judge_chunk
from dialogbench.cells.keys import fingerprint, model_fingerprint

ECHOES = Table("toy_echoes", pa.schema([("cell_key", pa.string()), ("item_id", pa.string()), ("model", pa.string()),
                                        ("reply", pa.string()), ("run_id", pa.string())]),
               partition=("model",), done="true")


GRADES = verdict_table("toy_grades", [("repeated", pa.bool_())], answer=("repeated",))


class EchoConfig(FamilySection):
    OVERRIDES = {"models": ("models",), "judge": ("judge",)}
    words: list[str]
    models: list[str] | None = None
    judge: str | None = None


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


@dataclass(frozen=True)
class Reply:
    model: str
    generation_key: str
    text: str


class Grade(JudgeStage):
    name, table = "toy_grade", GRADES

    def __init__(self, config) -> None:
        super().__init__(judge=config.model(config.toy.judge), chunk_size=2)

    def plan(self, config, lake) -> Planned:
        fp, models = model_fingerprint(self.judge), config.toy.models or [m.name for m in config.models]
        rows = lake.read(ECHOES.name, ECHOES.schema).to_pylist()
        return Planned([Cell(fingerprint("grade", r["cell_key"], fp), r["item_id"], {"model": r["model"]},
                             judge=self.judge.name, payload=Reply(r["model"], r["cell_key"], r["reply"]))
                        for r in rows if r["model"] in models and r["item_id"] in config.toy.words])

    def compute(self, config, cells: list[Cell], emit: Emit) -> None:
        judge_chunk(judge=self.judge, cells=cells, emit=emit, protocol=self.name, output_format=lambda c: None,
                    prompt=lambda c: [{"role": "user", "content": f"Did {c.payload.text!r} repeat {c.item_id!r}?"}],
                    parse=lambda c, text: {"parsed": text in ("yes", "no"), "repeated": text == "yes"})


def stages(config) -> list[Stage]:
    return [*(Echo(name) for name in config.toy.models or [m.name for m in config.models]),
            *([Grade(config)] if config.toy.judge else [])]


FAMILY = registry.register(Family(name="toy", title="Toy echo", section=EchoConfig, stages=stages,
                                  tables=(ECHOES, GRADES)))
