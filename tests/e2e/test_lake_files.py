"""Through the real CLI: no record, link or full disk can brick or subvert the lake. Bad records of every kind (a
``supersedes`` reaching out of its folder, wrong types, a ``file`` naming another file, a record that is a link) block
no query, report or run; verify and the run's start name and quarantine each, touching nothing outside its folder,
and the run recomputes their cells (a truncated catalog is rebuilt by the same run). A run that fills the disk stops
at once with one "disk full" line (exit 5, not retried), leaves no temp file, and a rerun on a freed disk completes
without duplicates.

Both tests start from the lake of one clean run of the same config (``first_run``: made once in this module, then
copied; each test damages its own copy, the full-disk test on its small disk): 5 runs instead of 6."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import duckdb
import pytest
import yaml

from dialogbench.run.registry import open_lake
from dialogbench.lake import Lake, manifest
from tests.damage import truncate
from tests.disk import fill, small_disk
from tests.e2e.conftest import run_cli
from tests.e2e.lake_first_run import first_run, query, run  # noqa: F401 (first_run: a fixture)

pytestmark = pytest.mark.slow

LIMIT = 2  # dialogues of each bot in the first run


@pytest.fixture
def config(scripted_config) -> Path:
    """The config of both tests' first run: ``LIMIT`` dialogues of each bot, their verdicts in files of 2 (two
    files, so that a record can name another verdict file)."""
    return scripted_config(limit=LIMIT, n=(4,), chunk=2, tables="files")  # a folder lake: its records are attacked


def _edit(path: Path, **changes) -> None:
    record = manifest.record_path(path)
    record.write_text(json.dumps({**json.loads(record.read_text()), **changes}))


def _fingerprints(root: Path, leave_out: set[Path]) -> dict[str, str]:
    """Every lake file but the damaged ones' (and what commands rewrite: the catalog, the lease, the reports)."""
    skip = {root / "catalog.duckdb", root / ".lease"}
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*")
            if p.is_file() and not p.is_symlink() and p not in skip and p.parent not in {q.parent for q in leave_out}
            and not {"_quarantine", "reports"} & set(p.relative_to(root).parts)}


def _plant(lake: Lake, tmp_path: Path, models: tuple[str, str]) -> dict[Path, str]:
    """A bad record of each kind on files of ``models``' generations and their verdicts; returns file -> field."""
    gens = {m: next(p for p in lake.files("generations") if f"model={m}" in str(p)) for m in models}
    verdicts = [p for p in lake.files("unieval_judgments") if manifest.of(p) is not None]
    runs_file = lake.files("runs")[0]
    planted = {}
    _edit(gens[models[0]], supersedes=[os.path.relpath(runs_file, gens[models[0]].parent)])  # ../../../runs/…
    planted[gens[models[0]]] = "supersedes"
    _edit(gens[models[1]], supersedes=[".."], rows="6")
    planted[gens[models[1]]] = "rows"
    _edit(verdicts[0], file=verdicts[-1].name)
    planted[verdicts[0]] = "file"
    record = manifest.record_path(verdicts[-1])
    outside = tmp_path / f"outside-{verdicts[-1].name}.json"
    shutil.copy(record, outside)
    record.unlink()
    record.symlink_to(outside)
    planted[verdicts[-1]] = "record"
    return planted


def test_bad_records_brick_nothing_and_are_quarantined(tmp_path, config, first_run):
    first, _ = first_run(config, tmp_path, "1.json")
    assert first.returncode == 0, first.stderr[-3000:]
    lake = open_lake(tmp_path / "lake")
    planted = _plant(lake, tmp_path, ("bot-a", "bot-b"))
    outside = {p: p.read_bytes() for p in tmp_path.glob("outside-*")}
    untouched = _fingerprints(lake.root, set(planted))

    # query, export and report keep working (the damaged files left out, named)
    assert query("select count(*) as n from generations", lake, tmp_path) == [{"n": 0}]
    assert query("select 1 as one", lake, tmp_path) == [{"one": 1}]
    report = run_cli(["report", "--lake", str(lake.root)], tmp_path)
    assert report.returncode == 0, report.stderr[-2000:]
    for path in planted:
        assert f"{path.relative_to(lake.root)}: bad record" in report.stderr

    check = run_cli(["verify", "--lake", str(lake.root)], tmp_path)
    assert check.returncode == 1 and "Traceback" not in check.stderr, check.stderr[-2000:]
    for path, field in planted.items():
        line = next(line for line in check.stdout.splitlines() if str(path.relative_to(lake.root)) in line)
        assert f": bad record (.{path.name}.json: {field}: " in line, line
        assert not path.exists() and len(list((lake.root / "_quarantine").glob(f"*/{path.relative_to(lake.root)}")))
    assert _fingerprints(lake.root, set(planted)) == untouched  # the runs file a record named is still there
    assert {p: p.read_bytes() for p in tmp_path.glob("outside-*")} == outside

    # the next run recomputes exactly their cells; a truncated catalog is rebuilt by it
    truncate(lake.root / "catalog.duckdb", 0.4)
    second, stages = run(config, tmp_path, "2.json")
    assert second.returncode == 0, second.stderr[-3000:]  # its SQL data tests pass
    assert stages["generate:bot-a"] == (0, LIMIT) and stages["generate:bot-b"] == (0, LIMIT)
    with duckdb.connect(str(lake.root / "catalog.duckdb"), read_only=True) as con:
        cells = con.sql("select count(*), count(distinct cell_key) from generations").fetchall()
    assert cells == [(2 * LIMIT, 2 * LIMIT)]

    # a run alone heals them too: its start quarantines, names them, and recomputes
    planted = _plant(lake, tmp_path, ("bot-b", "bot-a"))
    third, stages = run(config, tmp_path, "3.json")
    assert third.returncode == 0, third.stderr[-3000:]
    for path in planted:
        assert f"{path.relative_to(lake.root)}: bad record" in third.stderr
    assert stages["generate:bot-a"] == (0, LIMIT) and stages["generate:bot-b"] == (0, LIMIT)
    assert run_cli(["verify", "--lake", str(lake.root)], tmp_path).returncode == 0


def test_a_full_disk_stops_the_run_with_one_line_and_a_rerun_completes(tmp_path, config, first_run):
    with small_disk(tmp_path / "disk", "4m") as disk:
        data = yaml.safe_load(config.read_text())
        data["lake"] = str(disk / "lake")
        config.write_text(yaml.safe_dump(data))
        first, _ = first_run(config, tmp_path, "1.json")
        assert first.returncode == 0, first.stderr[-3000:]

        data["botchat"]["limit"] = 3 * LIMIT
        config.write_text(yaml.safe_dump(data))
        filler = fill(disk, 100)  # room for a few of the next run's files, not all
        full = run_cli(["run", "--config", str(config)], tmp_path)
        output = full.stdout + full.stderr
        assert full.returncode == 5, output[-3000:]
        (error,) = [line for line in full.stderr.splitlines() if line.startswith("error:")]
        assert re.match(rf"error: disk full: could not write \S+\.parquet in the lake {disk / 'lake'} \(no space left "
                        r"on device; (\d+ B|\d+\.\d KiB) free of 4\.0 MiB on its file system\)", error), error
        # (the last bytes can be taken by the files written before the one refused: then "0 B free")
        assert error in full.stderr.splitlines()[-2:]  # the last word (only Prefect's server stopping follows)
        assert "Traceback" not in output  # Prefect's flows end Failed with the line, not a traceback
        assert "will start" not in output and "Retry" not in output  # no chunk retried (it would wait 10 + 60 s)
        assert not [p for p in (disk / "lake").rglob("*") if ".tmp" in p.name]  # no partial file left

        filler.unlink()
        rerun, stages = run(config, tmp_path, "3.json")
        assert rerun.returncode == 0, rerun.stderr[-3000:]  # its SQL data tests (no duplicate cell) pass
        assert stages["generate:bot-a"][0] + stages["generate:bot-b"][0] > 2 * LIMIT  # the full run's cells were kept
        assert sum(c for c, _ in (stages["generate:bot-a"], stages["generate:bot-b"])) + sum(
            c for _, c in (stages["generate:bot-a"], stages["generate:bot-b"])) == 6 * LIMIT
        lake = open_lake(disk / "lake")
        for table in ("generations", "unieval_judgments"):
            assert query(f"select count(*) = count(distinct cell_key) as unique_cells from {table}", lake,
                         tmp_path) == [{"unique_cells": True}]
