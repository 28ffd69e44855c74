"""``dialogbench plan``'s hours: each row's tokens at its models' throughput, GPU-hours, and whether a night fits in
N hours on how many GPUs (``dialogbench.run.capacity``)."""

from __future__ import annotations

import dataclasses
import json

import pyarrow as pa
import pytest

from dialogbench.cli import main
from dialogbench.cells.shared_tables import BACKEND_CALLS_TABLE
from dialogbench.run import capacity
from dialogbench.run.config import ModelConfig
from dialogbench.run.registry import open_lake
from dialogbench.run.sizing import Size
from tests.conftest import chatbot


def _row(stage: str, models: str, *, expected: int | None, bound: int) -> Size:
    return Size(stage, models, planned=1, cached=0, to_compute=1, waiting=0, max_tokens=bound,
                expected_tokens=expected, expected_seconds=None, estimate="protocol" if expected else "bound")


def _vllm(name: str, *, tp: int = 1, tok_s: float | None = None) -> ModelConfig:
    return ModelConfig(name=name, backend="vllm", weights=f"org/{name}", engine={"tensor_parallel_size": tp},
                       throughput_tok_s=tok_s)


def test_a_row_s_hours_are_its_expected_tokens_at_its_models_throughput_and_gpus():
    big, small = _vllm("big", tp=4), _vllm("small")
    known = {"big": capacity.Throughput(1000.0, "config"), "small": capacity.Throughput(3000.0, "lake")}
    h = capacity.row_hours(_row("generate:big", "big", expected=7_200_000, bound=99_000_000), [big], known)
    assert (h.tokens, h.hours, h.gpus, h.gpu_hours) == (7_200_000, 2.0, 4, 8.0)  # the estimate, not the bound
    bound = capacity.row_hours(_row("judge", "big", expected=None, bound=3_600_000), [small], known)
    assert (bound.tokens, bound.hours, bound.gpus) == (3_600_000, pytest.approx(1 / 3), 1)  # no estimate: the bound
    pair = capacity.row_hours(_row("spyfall", "big, small", expected=7_200_000, bound=1), [big, small], known)
    assert pair.gpus == 5 and pair.hours == pytest.approx(1.0)  # players take turns: their mean throughput
    unknown = capacity.row_hours(_row("generate:x", "x", expected=10, bound=10), [_vllm("x")], known)
    assert unknown.hours is None and unknown.gpu_hours is None


def test_a_night_fits_on_the_gpus_its_gpu_hours_need_unless_one_unit_alone_is_longer():
    a, b = _vllm("a"), _vllm("b", tp=2)
    known = {"a": capacity.Throughput(1000.0, "config"), "b": capacity.Throughput(1000.0, "config")}
    rows = [(r, capacity.row_hours(r, [m], known)) for r, m in (
        (_row("generate:a", "a", expected=3_600_000 * 3, bound=1), a),   # 3 h on 1 GPU
        (_row("answer:a", "a", expected=3_600_000 * 2, bound=1), a),     # 2 h more of the same unit
        (_row("generate:b", "b", expected=3_600_000 * 4, bound=1), b))]  # 4 h on 2 GPUs
    verdict = capacity.fit(rows, hours=8, box_gpus=8)
    assert verdict.gpu_hours == pytest.approx(13.0) and verdict.longest_unit == ("a", pytest.approx(5.0))
    assert (verdict.fits, verdict.gpus_needed, verdict.boxes_needed) == (True, 2, 1)  # ceil(13 / 8), >= b's ask
    assert verdict.lines()[0].startswith("fits in 8 h on 2 GPU(s) = 1 box(es) of 8: 13.0 GPU-hours")
    tight = capacity.fit(rows, hours=4, box_gpus=None)
    assert tight.fits is False and tight.gpus_needed == 4  # 13 GPU-hours / 4 h, but unit a alone takes 5 h
    assert tight.lines()[0].startswith("does not fit in 4 h: unit a alone takes 5.00 h")
    sharded = [(r, h if r.stage != "answer:a" else dataclasses.replace(h, parts=2)) for r, h in rows]
    assert capacity.fit(sharded, hours=8, box_gpus=None).longest_unit == ("a", pytest.approx(4.0))  # 3 h + 2 h / 2
    missing = capacity.fit([*rows, (r := _row("generate:c", "c", expected=5, bound=5),
                                    capacity.row_hours(r, [_vllm("c")], known))], hours=8, box_gpus=None)
    assert missing.fits is None and missing.unknown == ("c",) and "no throughput for c" in missing.lines()[0]


def test_throughput_is_the_config_s_else_the_lake_s_measure(make_config, lake_dir):
    config = make_config(limit=1, n=[4])
    lake = open_lake(config.lake)
    calls = [{"run_id": "r", "stage": "generate:bot-a", "role": "chatbot", "model": m, "backend": "vllm",
              "conversations": 1, "failed": 0, "prompt_tokens": 1, "completion_tokens": t, "seconds": s, "cost": None,
              "started_at": None} for m, t, s in (("bot-a", 300, 2.0), ("bot-a", 100, 2.0), ("bot-b", 50, 0.0))]
    lake.write(BACKEND_CALLS_TABLE.name, pa.Table.from_pylist(calls, schema=BACKEND_CALLS_TABLE.schema),
               partition={"run_id": "r"})
    assert capacity.measured(lake) == {"bot-a": 100.0}  # 400 tokens in 4 s; a call that took no time: no measure
    config.models[0] = config.models[0].model_copy(update={"throughput_tok_s": 250.0})
    found = capacity.throughputs(config, lake)
    assert found[config.models[0].name] == capacity.Throughput(250.0, "config")


def test_plan_hours_says_whether_the_night_fits_and_writes_it_as_json(config_file, lake_dir, tmp_path, capsys):
    path = config_file(models=[chatbot("bot-a")], limit=2, n=[4])
    assert main(["plan", "--config", str(path), "--hours", "8", "--json", str(tmp_path / "plan.json")]) == 0
    out = capsys.readouterr().out
    assert "per unit:" in out and "gpu_hours" in out
    assert "no GPU work to fit in 8 h" in out  # scripted models and judge hold no GPU
    written = json.loads((tmp_path / "plan.json").read_text())
    assert written["fit"]["hours"] == 8 and written["fit"]["gpus_needed"] == 0
    assert {u["unit"] for u in written["units"]} >= {"bot-a"}


def test_plan_hours_must_be_a_positive_number(config_file, lake_dir, capsys):
    path = config_file(models=[chatbot("bot-a")], limit=1, n=[4])
    for bad in ("0", "-1", "nan", "inf", "x"):
        with pytest.raises(SystemExit) as exc:
            main(["plan", "--config", str(path), "--hours", bad])
        assert exc.value.code == 2
        assert "expected a positive number" in capsys.readouterr().err


def test_plan_hours_on_a_lake_that_holds_a_model_no_longer_in_the_config(make_config, config_file, lake_dir, capsys):
    """The lake's lengths rows name every chatbot it generated for, a dropped one too: planning the smaller config
    sizes what it has and names no model it lacks (a KeyError once, in the README's run of `plan --hours`)."""
    from tests.stage_runner import run_all

    run_all(make_config(models=[chatbot("bot-a"), chatbot("bot-b")], limit=1, n=[4]), "r1")
    smaller = config_file(models=[chatbot("bot-a")], limit=1, n=[4])
    assert main(["plan", "--config", str(smaller), "--hours", "1"]) == 0
    assert "no GPU work to fit in 1 h" in capsys.readouterr().out
