"""docs/benchmarks.md is what bench/page.py writes from the committed bench/results: a hand-typed figure, or a result
committed without its page, fails here. The extractors pick the figures a bench's JSON holds, and a result the page
cannot show is an error that names its file and what is missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import page
from bench.record import record

REPO = Path(__file__).resolve().parents[1]
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
