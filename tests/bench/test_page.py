"""docs/benchmarks.md is what bench/page.py writes from the committed bench/results: a hand-typed figure, or a result
committed without its page, fails here. The extractors pick the figures a bench's JSON holds, and a result the page
cannot show is an error that names its file and what is missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import page
from bench.record import record

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "bench" / "results"
PAGE = REPO / "docs" / "benchmarks.md"


def lake_integrity_result(**fields) -> dict:
    """A result as bench/lake_integrity.py writes it (bench/record.py's fields first)."""
    return {"bench": "lake_integrity", "command": ".venv/bin/python bench/lake_integrity.py --files 2",
            "utc": "2026-11-29T12:38:41+00:00",
            "machine": {"nproc": 2, "loadavg_at_start": [0.42, 0.3, 0.2], "loadavg_at_end": [1.25, 0.5, 0.3]},
            "files": 26, "rows_per_file": 4, "write_ms_median": 4.194, "views_s_median": 0.2501,
            "quick_check_s_median": 0.0085, "verify_s_median": 0.0251, **fields}


def write(folder: Path, name: str, data: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(data))
    return path


def test_the_committed_page_is_what_the_committed_results_give():
    assert sorted(RESULTS.glob("*.json")), "bench/results holds no result: the page would show no figure"
    expected = page.render(RESULTS)
    diff = page.check(PAGE, expected)
    assert not diff, ("docs/benchmarks.md is not what bench/results gives (edited by hand, or a result committed "
                      "without it): run .venv/bin/python bench/page.py\n" + "\n".join(diff[:40]))


def test_every_committed_result_gives_figures_with_machine_date_and_command():
    for path in sorted(RESULTS.glob("*.json")):
        bench, rows = page.rows_of(path)
        assert rows, path
        for figure, value, machine, date, command in rows:
            assert figure and any(c.isdigit() for c in value), (path, figure, value)
            assert machine.startswith(f"{json.loads(path.read_text())['machine']['nproc']} cores, load "), machine
            assert len(date) == 10 and date[4] == date[7] == "-", date
            assert command.startswith(f"`.venv/bin/python bench/{bench}.py"), command


def test_an_extractor_picks_the_figures_of_a_synthetic_result():
    assert page.EXTRACTORS["lake_integrity"](lake_integrity_result()) == [
        ("`Lake.write` per file, median (26 files of 4 rows)", "4.19 ms"),
        ("building every view, median (26 files of 4 rows)", "250 ms"),
        ("run-start `quick_check`, median (26 files of 4 rows)", "8.50 ms"),
        ("full `verify`, median (26 files of 4 rows)", "25.1 ms")]
    before = lake_integrity_result()  # another checkout's, timed without the records: no check figures
    del before["quick_check_s_median"], before["verify_s_median"]
    assert [figure for figure, _ in page.EXTRACTORS["lake_integrity"](before)] == [
        "`Lake.write` per file, median (26 files of 4 rows)", "building every view, median (26 files of 4 rows)"]


def test_a_row_carries_the_results_machine_date_and_command(tmp_path):
    path = write(tmp_path / "results", "lake_integrity.json", lake_integrity_result())
    bench, rows = page.rows_of(path, root=tmp_path)
    assert bench == "lake_integrity"
    assert rows[0] == ["`Lake.write` per file, median (26 files of 4 rows)", "4.19 ms", "2 cores, load 0.4→1.2",
                       "2026-11-29", "`.venv/bin/python bench/lake_integrity.py --files 2`"]


def test_the_page_groups_rows_by_bench_and_escapes_pipes(tmp_path):
    results = tmp_path / "results"
    write(results, "b.json", lake_integrity_result(command="python bench/lake_integrity.py | tee x"))
    write(results, "a.json", {**lake_integrity_result(), "files": 520})
    text = page.render(results, root=tmp_path)
    table = text[text.index("| figure | value | machine | date | command |"):].splitlines()
    assert table[2] == "| **[bench/lake_integrity.py](../bench/lake_integrity.py)** | | | | |"
    assert "520 files" in table[3] and "26 files" in table[7]  # files by name: a.json, then b.json
    assert table[7].endswith("| `python bench/lake_integrity.py \\| tee x` |")
    assert ".venv/bin/python bench/page.py --check" in text


def test_an_unknown_bench_is_an_error_naming_the_file_and_the_bench(tmp_path):
    write(tmp_path / "results", "mystery.json", lake_integrity_result(bench="mystery"))
    with pytest.raises(page.ResultError, match=r"results/mystery\.json: bench 'mystery' has no extractor"):
        page.render(tmp_path / "results", root=tmp_path)


def test_a_missing_field_is_an_error_naming_the_file_and_the_field(tmp_path):
    data = lake_integrity_result()
    del data["views_s_median"]
    write(tmp_path / "results", "lake_integrity.json", data)
    with pytest.raises(page.ResultError, match=r"results/lake_integrity\.json: missing field 'views_s_median'"):
        page.render(tmp_path / "results", root=tmp_path)
    nested = lake_integrity_result(machine={"loadavg_at_start": [0.4, 0.3, 0.2]})
    write(tmp_path / "results", "lake_integrity.json", nested)
    with pytest.raises(page.ResultError, match=r"missing field 'machine\.nproc'.*bench/record\.py"):
        page.render(tmp_path / "results", root=tmp_path)
    unrecorded = lake_integrity_result()
    del unrecorded["bench"]  # a bench that does not record itself yet
    write(tmp_path / "results", "lake_integrity.json", unrecorded)
    with pytest.raises(page.ResultError, match=r"lake_integrity\.json: missing field 'bench'"):
        page.render(tmp_path / "results", root=tmp_path)
    (tmp_path / "results" / "lake_integrity.json").write_text("{not json")
    with pytest.raises(page.ResultError, match=r"lake_integrity\.json: not a readable JSON result"):
        page.render(tmp_path / "results", root=tmp_path)


def test_check_fails_with_a_diff_on_a_hand_edit_and_writing_makes_it_pass(tmp_path, capsys):
    results, out = tmp_path / "results", tmp_path / "benchmarks.md"
    write(results, "lake_integrity.json", lake_integrity_result())
    assert page.main(["--results", str(results), "--out", str(out)]) == 0
    assert page.main(["--results", str(results), "--out", str(out), "--check"]) == 0
    out.write_text(out.read_text().replace("4.19 ms", "3.00 ms"))
    capsys.readouterr()
    assert page.main(["--results", str(results), "--out", str(out), "--check"]) == 1
    err = capsys.readouterr().err
    assert "-| `Lake.write` per file, median (26 files of 4 rows) | 3.00 ms" in err
    assert "+| `Lake.write` per file, median (26 files of 4 rows) | 4.19 ms" in err
    assert "run .venv/bin/python bench/page.py" in err
    write(results, "other.json", lake_integrity_result(bench="other"))
    assert page.main(["--results", str(results), "--out", str(out), "--check"]) == 2
    assert "other.json: bench 'other'" in capsys.readouterr().err


def test_a_bench_records_its_command_and_the_page_reads_it(tmp_path):
    """bench/elo.py at a tiny size writes bench/record.py's fields, and the page shows its figures with them."""
    from bench import elo

    out = tmp_path / "results" / "elo.json"
    argv = ["--sizes", "200", "--rounds", "100", "--bt-games", "200", "--bt-rounds", "100", "--repeats", "2",
            "--out", str(out)]
    assert elo.main(argv) == 0
    data = json.loads(out.read_text())
    assert data["command"] == ".venv/bin/python bench/elo.py " + " ".join(argv)
    assert data["bench"] == "elo" and data["machine"]["nproc"] >= 1 and data["utc"].endswith("+00:00")
    bench, rows = page.rows_of(out, root=tmp_path)
    assert bench == "elo" and rows[0][0] == "`bootstrap_elo`, 100 shuffles, 200 games, 14 models"
    assert rows[0][4] == f"`{data['command']}`"


def test_record_reads_argv_as_argparse_does(monkeypatch):
    monkeypatch.setattr("sys.argv", ["bench/stats.py", "--quick", "--out", "a b.json"])
    assert record(script="/x/bench/stats.py")["command"] == ".venv/bin/python bench/stats.py --quick --out 'a b.json'"
    assert record(script="/x/bench/stats.py", argv=[])["command"] == ".venv/bin/python bench/stats.py"
    assert record(script="/x/bench/stats.py", argv=[])["bench"] == "stats"


def test_every_extractor_names_a_bench_script():
    for bench in page.EXTRACTORS:
        assert (REPO / "bench" / f"{bench}.py").is_file(), bench


# ------------------------------------------------------------------------------------------ every bench on the page

# Every bench/*.py is one of these two: a bench, which records itself (bench/record.py) and has an extractor, or not
# a bench (why beside it). A new script that is in neither fails here until it is placed.
BENCHES = ("elo", "stats", "report", "serve", "query", "lake_integrity", "botchat_pipeline", "engines", "omp_threads",
           "cached_rerun", "artifacts", "scale_out", "gpu", "delta_lake", "lake_tables", "gameeval", "mtbench101", "probes", "suite")
NOT_BENCHES = {"__init__.py": "the package", "page.py": "writes docs/benchmarks.md from the results",
               "record.py": "the recorder itself",
               "runs.py": "runs `dialogbench run` for artifacts.py and probes.py; writes nothing"}


def test_every_bench_records_itself_and_has_an_extractor():
    scripts = {path.name for path in (REPO / "bench").glob("*.py")}
    assert scripts == {f"{bench}.py" for bench in BENCHES} | set(NOT_BENCHES), (
        "bench/ has a script that is neither in BENCHES (it records itself and has an extractor) nor in NOT_BENCHES")
    assert set(page.EXTRACTORS) == set(BENCHES)
    for bench in BENCHES:
        assert "record(script=__file__, argv=argv)" in (REPO / "bench" / f"{bench}.py").read_text(), (
            f"bench/{bench}.py does not record itself with bench/record.py")


def recorded(bench: str, argv: list[str]) -> dict:
    """bench/record.py's fields of a run of ``bench`` with ``argv``, as its ``main`` takes them."""
    return record(script=str(REPO / "bench" / f"{bench}.py"), argv=argv)


def page_rows(tmp_path: Path, result: dict) -> list[tuple[str, str]]:
    """The (figure, value) rows docs/benchmarks.md shows for ``result``, written as the benches write JSON (a
    dict's integer keys become strings), each with the result's command."""
    path = tmp_path / "results" / f"{result['bench']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2, default=str))
    bench, rows = page.rows_of(path, root=tmp_path)
    assert bench == result["bench"] and {row[4] for row in rows} == {f"`{result['command']}`"}
    return [(figure, value) for figure, value, *_ in rows]


def test_botchat_pipeline_rows(tmp_path):
    """Part 1 measured on the scripted backend (its timings then set), part 2 measured, part 3 as ``demo_rerun``
    returns it; a skipped demo gives no row of its own."""
    from bench import botchat_pipeline as bench
    from dialogbench.botchat.prompts import SYSTEM_PROMPT
    from tests.conftest import DATASET

    seeds = bench.read_selected_seeds(DATASET, 2)
    overhead = bench.pipeline_overhead(model=bench.scripted_model("page-scripted"), seeds=seeds,
                                       system_prompt=SYSTEM_PROMPT, n_target=3, repeats=1, log=lambda _: None)
    overhead.update(model="smollm2-135m", repeats=3, pipeline_tok_s=41.52, raw_tok_s=44.1, overhead=0.0585,
                    overhead_best=0.031, non_backend_share=0.0712)
    calls = bench.backend_calls(seeds, sizes=(1, 2), n=3)

    def run(wall: float, computed: int, cached: int) -> dict:  # run_measured's figures and _stage_totals'
        stages = {"stages": [{"stage": "generate:smollm2-135m", "planned": 24, "computed": computed,
                              "cached": cached, "failed": 0, "seconds": wall / 2}]}
        return {"wall_seconds": wall, "returncode": 0, "peak_tree_rss_mib": 2210.4, "max_process_rss_mib": None,
                **bench._stage_totals(stages)}

    first, second = run(412.5, 24, 0), run(18.31, 0, 24)
    demo = {"config": str(REPO / "configs" / "demo.yaml"), "limit": 2, "first": first, "second": second,
            "rerun_ratio": round(second["wall_seconds"] / first["wall_seconds"], 4),
            "peak_rss_mib_first": first["peak_tree_rss_mib"], "work_dir": None}
    argv = ["--demo-limit", "2"]
    result = {**recorded("botchat_pipeline", argv), "args": vars(bench.build_parser().parse_args(argv)),
              "pipeline_overhead": overhead, "backend_calls": calls, "demo_rerun": demo, "seconds": 500.0}
    rows = [("generated tok/s, pipeline vs raw `backend.generate`, median of 3 (smollm2-135m, 2 seeds to N = 3)",
             "41.5 vs 44.1"),
            ("pipeline overhead, 1 − pipeline ÷ raw tok/s: median (best of 3) (smollm2-135m, 2 seeds to N = 3; "
             "target under 20.0%)", "5.85% (3.10%)"),
            ("share of the pipeline's wall time outside `backend.generate`, median (smollm2-135m, 2 seeds to N = 3)",
             "7.12%"),
            ("backend calls to N = 3, scripted, for 1 / 2 seeds (lock-step: N − 2 = 1 whatever the seeds)", "1 / 1"),
            ("`dialogbench run` of demo.yaml, 2 seeds: first run / cached rerun (0 cells computed) wall time, "
             "rerun ÷ first", "412 s / 18.3 s (0.0444×)"),
            ("`dialogbench run` of demo.yaml, 2 seeds: the first run's peak RSS, whole process tree / largest "
             "process", "2,210 MiB / n/a")]
    assert page_rows(tmp_path, result) == rows
    del result["demo_rerun"]
    assert page_rows(tmp_path, {**result, "demo_skipped": "--skip-demo"}) == rows[:4]


def engine_worker_result(engine: str, *, seconds: float, startup_s: float, peak_mib: float) -> dict:
    """One engine's JSON as ``engine_worker`` and ``run_worker`` write it, each call summed up by ``_summary`` from
    its replies: half end by EOS (9 tokens), half at max_tokens."""
    from bench import engines as bench
    from dialogbench.backends.base import Completion

    def call(conversations: int, max_tokens: int, **checks) -> dict:
        replies = [Completion(text=f"reply {i}", prompt_tokens=200, completion_tokens=max_tokens if i % 2 else 9)
                   for i in range(conversations)]
        return {**bench._summary(replies, seconds, max_tokens=max_tokens, counts_eos=engine == "vllm"), **checks}

    return {"engine": engine, "model": "smollm2-135m", "weights": "pkg://smollm2.gguf", "batch_size": None,
            "engine_settings": {}, "pid": 1, "export": {"seconds": None}, "import_seconds": 2.0,
            "versions": {"transformers": "5.19.0"}, "startup_seconds": startup_s, "ready_seconds": startup_s + 4,
            "rss_after_startup_mib": 900.0, "version": engine, "warmup_seconds": 0.5, "prefix_cache_reset": True,
            "counts_eos": engine == "vllm", "generation": call(4, 64),
            "unieval_free": call(2, 48, parsed=2, constrained=0),
            "unieval_constrained": call(2, 48, parsed=2, constrained=2),
            "worker_wall_seconds": startup_s + 30, "peak_rss_mib": peak_mib, "rss_samples": 90,
            "peak_processes": [{"pid": 1, "name": "python", "rss_mib": peak_mib}]}


def test_engines_rows(tmp_path):
    """Part 1 from two engine workers' JSON (``engines_part``), part 2 as ``pipeline_worker`` returns it, part 3 with
    a failed run, which the ratios leave out (``demo_ratios``)."""
    from bench import engines as bench

    part = bench.engines_part({"transformers": engine_worker_result("transformers", seconds=2.0, startup_s=12.5,
                                                                    peak_mib=1210.0),
                               "vllm": engine_worker_result("vllm", seconds=0.8, startup_s=25.0, peak_mib=3630.0)})
    pipeline = {"model": "smollm2-135m", "batch_size": 64, "seeds": 16, "n": 6, "repeats": 3, "backend_calls": 4,
                "conversations": 64, "max_tokens": 64, "pipeline_tokens": [900] * 3, "plain_tokens": [900] * 3,
                "pipeline_seconds": [10.4] * 3, "backend_seconds": [10.0] * 3, "plain_seconds": [9.8] * 3,
                "pipeline_median_seconds": 10.4, "backend_median_seconds": 10.0, "plain_median_seconds": 9.8,
                "pipeline_tok_s": 86.5, "backend_tok_s": 90.0, "plain_tok_s": 91.8, "ratio": 1.061,
                "backend_ratio": 1.02, "target": 1.1, "same_texts": True}
    runs = [{"label": label, "config": f"demo-{label}.yaml", "backends": backends, "returncode": code,
             "timed_out": False, "wall_seconds": wall, "peak_rss_gib": peak, "rss_samples": 100, "peak_processes": [],
             "computed": 120, "cached": 0, "failed": 0}
            for label, backends, code, wall, peak in (("as-is", "vllm", 0, 420.0, 3.1),
                                                      ("processes", "vllm", 0, 610.0, 5.2),
                                                      ("transformers", "transformers", 1, 75.0, 1.0))]
    demo = {"config": str(REPO / "configs" / "demo.yaml"), "limit": None, "runs": runs, "work_dir": None,
            "ratios": bench.demo_ratios(runs)}
    argv = ["--demo"]
    result = {**recorded("engines", argv), "args": vars(bench.resolve_sizes(bench.build_parser().parse_args(argv))),
              **part, "pipeline_vs_generate": pipeline, "demo": demo, "seconds": 1500.0}
    assert "texts" not in part["engines"]["vllm"]["generation"]  # engines_part keeps samples only
    assert page_rows(tmp_path, result) == [
        ("transformers: start-up, `get_backend` (smollm2-135m)", "12.5 s"),
        ("transformers: BotChat generation, 4 conversations × 64 tokens, greedy", "73.0 tok/s"),
        ("transformers: UniEval free / constrained, 2 dialogues × 48 tokens", "28.5 / 28.5 tok/s"),
        ("transformers: peak RSS of its process tree", "1,210 MiB"),
        ("vllm: start-up, `get_backend` (smollm2-135m)", "25.0 s"),
        ("vllm: BotChat generation, 4 conversations × 64 tokens, greedy", "180 tok/s"),
        ("vllm: UniEval free / constrained, 2 dialogues × 48 tokens", "70.0 / 70.0 tok/s"),
        ("vllm: peak RSS of its process tree", "3,630 MiB"),
        ("vllm ÷ transformers: BotChat generation tok/s / start-up / peak memory", "2.47× / 2.00× / 3.00×"),
        ("pipeline ÷ plain `model.generate` seconds, median of 3 (16 seeds to N = 6; goal ≤ 1.10)",
         "1.06× (`backend.generate` only: 1.02×)"),
        ("the demo (demo.yaml), as-is (vllm): wall time / peak RSS of the process tree", "420 s / 3.10 GiB"),
        ("the demo (demo.yaml), processes (vllm): wall time / peak RSS of the process tree", "610 s / 5.20 GiB"),
        ("the demo (demo.yaml), transformers (transformers): wall time / peak RSS of the process tree",
         "failed (exit 1)"),
        ("the demo (demo.yaml), as-is ÷ processes: wall time / peak memory", "0.689× / 0.596×")]


def test_omp_threads_rows(tmp_path):
    from bench import omp_threads as bench

    def row(variant: str, hogs: int, gen_s: list[float], cpu_s: list[float]) -> dict:
        measured = {"load_s": 3.2, "gen_s": gen_s, "gen_cpu_s": cpu_s, "tokens": 1536, "threads": None}
        return bench.summarise(variant=variant, hogs=hogs, result=measured)

    argv = ["--hogs", "0,1", "--variants", "bound,unbound1"]
    rows = bench.with_ratios([row("bound", 0, [5.1, 5.0, 5.3], [10.0, 10.1, 9.9]),
                              row("unbound1", 0, [8.0, 8.2, 7.9], [8.0, 8.1, 7.9]),
                              row("bound", 1, [40.0, 38.0, 41.0], [70.0, 72.0, 69.0]),
                              row("unbound1", 1, [9.0, 9.4, 9.1], [9.0, 9.2, 9.1])])
    args = {k: v for k, v in vars(bench.parser().parse_args(argv)).items() if k != "worker"}
    result = {**recorded("omp_threads", argv), "rows": rows, "args": args}
    work = "24 chats × 64 tokens, median of 3"
    assert page_rows(tmp_path, result) == [
        (f"`bound`, 0 busy processes beside: generation of {work}", "5.10 s, 301 tok/s, 10.0 CPU s"),
        (f"`unbound1`, 0 busy processes beside: generation of {work}",
         "8.00 s, 192 tok/s, 8.00 CPU s (1.57× the time, 0.8× the CPU of `bound`)"),
        (f"`bound`, 1 busy process beside: generation of {work}", "40.0 s, 38.4 tok/s, 70.0 CPU s"),
        (f"`unbound1`, 1 busy process beside: generation of {work}",
         "9.10 s, 169 tok/s, 9.10 CPU s (0.227× the time, 0.13× the CPU of `bound`)")]


def test_cached_rerun_rows(tmp_path):
    """One tree with --with-rerun (the reused rerun, the --rerun run, their paired ratio); two trees without it."""
    from bench import cached_rerun as bench

    tree = str(REPO)
    argv = ["--config", "configs/demo.yaml", "--from-lake", "data_lake", "--repeats", "2", "--with-rerun"]
    one = bench.summarise(config=str(REPO / "configs" / "demo.yaml"), models=["vllm"], from_lake="data_lake",
                          first_runs={tree: 300.0}, times={tree: [18.2, 17.6]}, cpus={tree: [12.5, 12.1]},
                          reruns={tree: [231.0, 228.4]}, reused={tree: [True, True]})
    assert page_rows(tmp_path, {**recorded("cached_rerun", argv), **one}) == [
        ("cached rerun, answered from the latest run: wall (CPU of its process tree), median of 2 "
         "(demo.yaml on a copy of data_lake)", "17.9 s (12.3 s)"),
        ("the same run with `--rerun` (recorded, computes nothing), median of 2 (demo.yaml on a copy of data_lake)",
         "230 s"),
        ("`--rerun` ÷ cached rerun, median of the 2 back-to-back pairs (demo.yaml on a copy of data_lake)",
         "12.8×")]
    trees = {"/tmp/before": [40.0, 44.0], tree: [20.0, 24.0]}
    two = bench.summarise(config=str(REPO / "bench" / "demo_scripted.yaml"), models=["scripted"], from_lake=None,
                          first_runs={t: 60.0 for t in trees}, times=trees,
                          cpus={"/tmp/before": [30.0, 36.0], tree: [15.0, 12.0]}, reruns={t: [] for t in trees},
                          reused={t: [False, False] for t in trees})
    argv = ["--config", "bench/demo_scripted.yaml", "--tree", "/tmp/before", "--tree", "."]
    assert page_rows(tmp_path, {**recorded("cached_rerun", argv), **two}) == [
        ("cached rerun: wall (CPU of its process tree), median of 2 (demo_scripted.yaml; `/tmp/before`)",
         "42.0 s (33.0 s)"),
        (f"cached rerun: wall (CPU of its process tree), median of 2 (demo_scripted.yaml; `{tree}`)",
         "22.0 s (13.5 s)"),
        (f"`{tree}` ÷ `/tmp/before`: cached rerun wall / CPU / CPU paired by repeat (demo_scripted.yaml)",
         "0.524× / 0.409× / 0.417×")]


def artifacts_run(*, wall_s: float, artifacts: int, publish_s: float, history_s: float, lake_bytes: int) -> dict:
    """One run's figures as bench/artifacts.py's ``run_once`` writes them."""
    return {"wall_s": wall_s, "exit_code": 4, "loadavg_at_start": [1.2, 1.0, 0.9], "artifacts": artifacts,
            "progress_updates": 40 if artifacts > 10 else 0, "publish_s": publish_s,
            "share_of_wall": round(publish_s / wall_s, 4), "history_s": history_s, "history_rows": 1520,
            "history_share_of_wall": round(history_s / wall_s, 4), "history_bytes_total": lake_bytes // 10,
            "lake_bytes_total": lake_bytes, "prefect_bytes_total": 2 * lake_bytes, "computed": 0, "canary_computed": 4,
            "stages": 12, "stage_seconds": {"botchat_generate": 1.5}, "timeline": None}


def test_artifacts_rows(tmp_path):
    from bench import artifacts as bench

    first = artifacts_run(wall_s=120.0, artifacts=25, publish_s=1.8, history_s=3.2, lake_bytes=5_000_000)
    reruns = [artifacts_run(wall_s=30.0 + i, artifacts=8, publish_s=0.4 + i / 10, history_s=1.1,
                            lake_bytes=5_000_000 + 40_000 * (i + 1)) for i in range(3)]
    argv = ["--config", "bench/demo_scripted.yaml", "--override", "botchat.limit=12"]
    result = {**recorded("artifacts", argv),
              **bench.summarise(config="bench/demo_scripted.yaml", overrides=["botchat.limit=12"], canary=4,
                                first=first, reruns=reruns, kept=None)}
    config = "demo_scripted.yaml with botchat.limit=12"
    assert page_rows(tmp_path, result) == [
        (f"first run: wall time ({config})", "120 s"),
        (f"first run: publishing 25 artifacts and 40 progress updates (its share of the wall time) ({config})",
         "1.80 s (1.50%)"),
        (f"first run: the history snapshot, 1,520 rows (its share of the wall time) ({config})", "3.20 s (2.67%)"),
        (f"cached rerun, median of 3: publishing / history snapshot / wall time ({config})",
         "500 ms / 1.10 s / 31.0 s"),
        (f"disk each cached rerun adds: history tables / whole lake / Prefect home ({config})",
         "4.00 kB / 40.0 kB / 80.0 kB")]


def test_scale_out_rows(tmp_path):
    from bench import scale_out as bench

    rows = [{"mode": "workers", "slots": 1, "wall_s": 120.0, "dispatch_s": 96.0},
            {"mode": "workers", "slots": 2, "wall_s": 75.0, "dispatch_s": 50.0},
            {"mode": "box GPUs", "slots": 1, "wall_s": 100.0, "dispatch_s": None},
            {"mode": "box GPUs", "slots": 4, "wall_s": 40.0, "dispatch_s": 26.0},
            {"mode": "judging while generating", "slots": 2, "wall_s": 60.0, "dispatch_s": None},
            {"mode": "judging after", "slots": 2, "wall_s": 75.0, "dispatch_s": None}]
    argv = ["--workers", "1,2", "--slots", "1,4"]
    result = {**recorded("scale_out", argv),
              **bench.summarise(models=12, delay=1.0, judging_models=3, judging_gpus=2, judge_delay=2.0, rows=rows)}
    scale = "12 models × 1 s per call, Prefect server on SQLite"
    assert page_rows(tmp_path, result) == [
        (f"dispatched run, workers = 1: the units (speed-up; target) and the whole run (speed-up) ({scale})",
         "units 96.0 s (1.00×, target 0.8×); whole run 120 s (1.00×)"),
        (f"dispatched run, workers = 2: the units (speed-up; target) and the whole run (speed-up) ({scale})",
         "units 50.0 s (1.92×, target 1.60×); whole run 75.0 s (1.60×)"),
        (f"dispatched run, box GPUs = 1: the units (speed-up; target) and the whole run (speed-up) ({scale})",
         "whole run 100 s (1.00×)"),
        (f"dispatched run, box GPUs = 4: the units (speed-up; target) and the whole run (speed-up) ({scale})",
         "units 26.0 s (n/a, target 3.20×); whole run 40.0 s (2.50×)"),
        ("judging while the units generate vs after them: whole run (3 chatbots on 2 GPUs, judge 2 s per cell)",
         "60.0 s vs 75.0 s (1.25×)")]
    on_postgres = {**result, **bench.summarise(models=12, delay=1.0, judging_models=3, judging_gpus=2, judge_delay=2.0,
                                               rows=rows[:2], server="postgres")}
    assert page_rows(tmp_path, on_postgres)[0][0].endswith("(12 models × 1 s per call, Prefect server on PostgreSQL)")


def test_lake_tables_rows(tmp_path):
    kinds = {"files": {"write_s": 1.0, "read_s": 0.5, "plan_s": 0.25, "files": 200},
             "delta": {"write_s": 4.0, "read_s": 0.25, "plan_s": 0.5, "files": 200, "compact_s": 0.1,
                       "read_compacted_s": 0.05, "files_compacted": 4}}
    result = {**recorded("lake_tables", ["--chunks", "200"]), "chunks": 200, "rows": 50, "repeats": 3, "kinds": kinds,
              "ratios": {"write_s": 4.0, "read_s": 0.5, "plan_s": 2.0}}
    scale = "200 commits of 50 cells, median of 3"
    assert page_rows(tmp_path, result) == [
        (f"lake tables, the commits: folder lake vs Delta lake ({scale})", "1.00 s vs 4.00 s (4.00× the folder lake's time)"),
        (f"lake tables, a view reading the table: folder lake vs Delta lake ({scale})",
         "500 ms vs 250 ms (0.5× the folder lake's time)"),
        (f"lake tables, a stage's plan (anti-join): folder lake vs Delta lake ({scale})",
         "250 ms vs 500 ms (2.00× the folder lake's time)"),
        (f"lake tables, Delta lake after compact: files, compact time, the view's read ({scale})",
         "200 → 4 files; 100 ms; read 50.0 ms")]


def test_gpu_rows(tmp_path):
    from bench import gpu as bench

    def shard(n: int, tok_s: float, load: float, waited: float) -> dict:
        return {"shards": n, "tok_s": tok_s, "slowest_load_s": load, "generate_window_s": 10.0,
                "started_together": waited > 0, "per_shard": [{"batch_size": 64, "load_s": load, "waited_s": waited}]}

    result = {**recorded("gpu", ["--shards", "1,2,4"]),
              **bench.summarise(batches=[{"batch_size": 64, "tok_s": 1778.9, "peak_gpu_mib": 1453.1}],
                                shards=[shard(1, 1600.0, 30.0, 5.0), shard(2, 2400.0, 31.0, 4.0),
                                        shard(4, 4000.0, 70.0, 0.0)])}
    result["settings"] = {"conversations": 1024, "tokens": 64}
    result["machine"]["gpu"] = "NVIDIA H200"
    scale = "1024 conversations, ≤ 64 new tokens, greedy, NVIDIA H200"
    assert [shard["speedup"] for shard in result["shards"]] == [1.0, 1.5, 2.5]
    assert page_rows(tmp_path, result) == [
        (f"transformers backend, micro-batch 64: generated tokens/s (peak GPU memory) ({scale})",
         "1,779 tok/s (1,453 MiB)"),
        (f"1 data-parallel shard(s) of micro-batch 64 on the one GPU: tokens/s (speed-up over one; slowest engine "
         f"load) ({scale})", "1,600 tok/s (1.00×; 30.0 s)"),
        (f"2 data-parallel shard(s) of micro-batch 64 on the one GPU: tokens/s (speed-up over one; slowest engine "
         f"load) ({scale})", "2,400 tok/s (1.50×; 31.0 s)"),
        (f"4 data-parallel shard(s) of micro-batch 64 on the one GPU: tokens/s (speed-up over one; slowest engine "
         f"load) ({scale})", "4,000 tok/s (2.50×; 70.0 s); a shard started late, so the speed-up is an upper bound")]
    assert "NVIDIA H200" in page.machine(result)


def test_gpu_conversations_are_the_vendored_seeds_first_three_utterances():
    from bench import gpu as bench

    conversations = bench.conversations(600)  # more than the 547 seeds: cycled
    assert len(conversations) == 600 and conversations[0] == conversations[547 - bench_short(bench)]
    assert [m["role"] for m in conversations[0]] == ["user", "assistant", "user"]
    assert conversations[0][0]["content"] == "You look rather pale. Are you feeling well?"


def bench_short(bench) -> int:
    """Seeds of the vendored set with fewer than three utterances (skipped by ``bench.gpu.conversations``)."""
    rows = [json.loads(line) for line in bench.SEEDS.read_text().splitlines() if line.strip()]
    return sum(len(row["conv-GT"]) < 3 for row in rows)


def test_delta_lake_rows(tmp_path):
    result = {**recorded("delta_lake", []), "writers": 4, "rounds": 10, "keys": 40, "per_writer": 25, "repeats": 3,
              "backends": {"local": {"wall_s_median": 1.16, "each_cell_once": True},
                           "s3": {"wall_s_median": 6.77, "each_cell_once": False}}}
    race = "4 writers × 10 rounds of insert_missing, 25 of 40 new cells each a round, median of 3"
    assert page_rows(tmp_path, result) == [
        (f"Delta cell store, local: race wall time; each cell stored once ({race})", "1.16 s; yes"),
        (f"Delta cell store, s3: race wall time; each cell stored once ({race})", "6.77 s; NO")]


def test_gameeval_rows(tmp_path):
    from bench import gameeval as bench

    def played(seconds: float, calls: int, transcripts: dict) -> dict:  # what ``play`` returns
        return {"games": 8, "seconds": seconds, "games_per_min": 60 * 8 / seconds, "backend_calls": calls,
                "moves": 40, "completion_tokens": 900, "outcomes": {"win": 3, "lose": 5}, "transcripts": transcripts}

    games = {f"game-{i}": [["host", f"word {i}"], ["guesser", "is it an animal?"]] for i in range(8)}
    other = {**games, "game-7": [["host", "word 7"], ["guesser", "is it a plant?"]]}
    argv = ["--words", "8", "--out", str(tmp_path / "gameeval.json")]
    result = {**recorded("gameeval", argv),
              **bench.summarise(model="smollm2-135m", words=8, rounds=2, max_tokens=40,
                                results={"batched": played(40.0, 5, other), "sequential": played(160.0, 40, games)})}
    assert "transcripts" not in result["batched"]
    scale = "8 games of 2 rounds at most, smollm2-135m, temperature 1"
    assert page_rows(tmp_path, result) == [
        (f"Ask-Guess games per minute, batched vs one at a time ({scale})", "12.0 vs 3.00 (4.00×)"),
        (f"backend calls, batched vs one at a time ({scale})", "5 vs 40"),
        (f"games played identically in both modes ({scale})", "7 / 8")]


def test_mtbench101_rows(tmp_path):
    from bench import mtbench101 as bench

    argv = ["--tasks", "CM,SI", "--limit", "1"]
    result = recorded("mtbench101", argv)
    result["golden_generation"] = bench.golden_result(
        model="smollm2-135m", tasks=["CM", "SI"], dialogues=2, turns=6, calls=1, pipeline_tokens=[300, 300, 300],
        raw_tokens=300, pipeline_seconds=[10.0, 12.0, 10.5], raw_seconds=[9.0, 9.5, 10.0])
    result["judge_fanout"] = bench.fanout_result(requests=64, latency_ms=250, levels={
        1: {"seconds": 16.0, "requests_per_s": 4.0, "failed": 0},
        4: {"seconds": 4.1, "requests_per_s": 15.6, "failed": 0},
        16: {"seconds": 1.1, "requests_per_s": 58.2, "failed": 2}})
    result["seconds"] = 60.0
    fan = "64 requests to a local server answering in 250 ms"
    assert page_rows(tmp_path, result) == [
        ("golden-context generation, pipeline vs raw `backend.generate` tok/s, median of 3 (smollm2-135m, 2 "
         "dialogues of CM, SI, 6 judged turns)", "28.6 vs 31.6 (overhead 9.52%)"),
        (f"judge fan-out, 1 concurrent: requests/s (speed-up over 1) ({fan})", "4.00 (1.00×)"),
        (f"judge fan-out, 4 concurrent: requests/s (speed-up over 1) ({fan})", "15.6 (3.90×)"),
        (f"judge fan-out, 16 concurrent: requests/s (speed-up over 1) ({fan})", "58.2 (14.6×), 2 failed")]


def test_probes_rows(tmp_path):
    from bench import probes as bench

    def summary(computed: int, cached: int) -> dict:  # a run's --json summary, its stages
        return {"run_id": "r1", "stages": [
            {"stage": "judge_probe:unieval", "planned": 6, "cached": cached, "computed": computed, "seconds": 4.5},
            {"stage": "judge_probe:arena", "planned": 4, "cached": cached and 4, "computed": computed and 4,
             "seconds": 3.0},
            {"stage": "botchat_unieval", "planned": 40, "cached": 0, "computed": 40, "seconds": 30.0}]}

    first = bench.run_figures(summary=summary(6, 0), exit_code=0, wall=410.25,
                              judge_calls=[(True, 2, 10, 6.0), (False, 5, 64, 50.0)])
    rerun = bench.run_figures(summary=summary(0, 6), exit_code=0, wall=19.5, judge_calls=[(False, 0, 0, 0.0)])
    argv = ["--config", "configs/demo.yaml"]
    result = {**recorded("probes", argv), "config": "configs/demo.yaml", "first_run": first, "cached_rerun": rerun}
    assert page_rows(tmp_path, result) == [
        ("first run: wall time / the probe stages (demo.yaml)", "410 s / 7.50 s"),
        ("first run: probe cells computed / cached (demo.yaml)", "10 / 0"),
        ("first run: judge calls (conversations), the probes' vs the rest of the run's (demo.yaml)",
         "2 (10) vs 5 (64)"),
        ("cached rerun: wall time / the probe stages (demo.yaml)", "19.5 s / 7.50 s"),
        ("cached rerun: probe cells computed / cached (demo.yaml)", "0 / 10"),
        ("cached rerun: judge calls (conversations), the probes' vs the rest of the run's (demo.yaml)",
         "0 (0) vs 0 (0)")]


SUITE_OUTPUT = """\
tests/e2e/test_readme_commands.py ....
===== 2204 passed, 1 skipped, 18 warnings, 10 errors in 1637.94s (0:27:17) =====
...
=============== 10 passed, 2215 deselected in 250.87s (0:04:10) ================
"""


def test_suite_reads_both_parts_of_make_test():
    from bench import suite as bench

    assert bench.parts(SUITE_OUTPUT) == [
        {"counts": {"passed": 2204, "skipped": 1, "warnings": 18, "errors": 10}, "seconds": 1637.94},
        {"counts": {"passed": 10, "deselected": 2215}, "seconds": 250.87}]
    assert bench.makefile_workers() >= 1  # the Makefile's WORKERS ?= N


def test_suite_rows(tmp_path):
    from bench import suite as bench

    argv = ["--workers", "2"]
    result = {**recorded("suite", argv), "argv": ["make", "test", "WORKERS=2"], "workers": 2, "exit": 2,
              "wall_s": 1900.4, "cpu_s": 3012.0, "parts": bench.parts(SUITE_OUTPUT)}
    assert page_rows(tmp_path, result) == [
        ("`make test` after set-up: wall (CPU of the processes it waited for)", "1,900 s (3,012 s), exit 2"),
        ("part 1: every file on 2 workers (2,204 passed, 1 skipped, 10 errors)", "1,638 s"),
        ("part 2: the `alone` tests, two at a time (10 passed)", "251 s")]
