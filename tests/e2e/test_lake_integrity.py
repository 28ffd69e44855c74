"""Through the real CLI: a truncated file and a silently bit-flipped one block no query, `dialogbench verify`
names and quarantines both, and the next run recomputes exactly their cells (and, in the same run, those of a file
truncated after the verify: a run alone finds it at its start); a lake holding every cell twice
fails the run's data tests until `dialogbench repair` keeps one copy of each; a format-3 lake is refused by a reader
and recorded in place by a run.

Every test starts from the lake of one clean run of the same config (``first_run``: made once in this module, then
copied; each test damages its own copy), and the damage test's heals share one run: 5 runs instead of 8."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from dialogbench.run.registry import open_lake
from dialogbench.lake import manifest
from dialogbench.lake.delta.checksums import recorded
from tests.damage import flip_keeping_readable, truncate
from tests.e2e.conftest import run_cli
from tests.e2e.lake_first_run import first_run, query, run  # noqa: F401 (first_run: a fixture)

pytestmark = pytest.mark.slow


@pytest.fixture
def config(scripted_config) -> Path:
    """The config of every test here: 6 dialogues of each bot, their 12 verdicts in 3 files of 4, in a folder lake
    (its own files and records are what is damaged; the last test converts it into a Delta lake)."""
    return scripted_config(limit=6, n=(4, 6), chunk=4, tables="files")


def test_damaged_files_are_named_quarantined_and_their_cells_recomputed(tmp_path, config, first_run):
    first, _ = first_run(config, tmp_path, "1.json")
    assert first.returncode == 0, first.stderr[-3000:]
    lake = open_lake(tmp_path / "lake")
    assert run_cli(["verify", "--lake", str(lake.root)], tmp_path).returncode == 0  # a run leaves no false alarm
    (generations,) = [p for p in lake.files("generations") if "model=bot-a" in str(p)]
    verdicts = lake.files("unieval_judgments")
    assert len(verdicts) == 3  # 12 verdicts in chunks of 4
    truncate(generations)
    flip_keeping_readable(verdicts[0])  # still reads, with other values: the silent kind
    lost = {"generations": manifest.of(generations).rows, "unieval_judgments": manifest.of(verdicts[0]).rows}
    assert lost == {"generations": 6, "unieval_judgments": 4}

    # Before anything is healed, the damaged files are left out of queries and nothing else fails.
    assert query("select 1 as one", lake, tmp_path) == [{"one": 1}]
    assert query("select model, count(*) as n from generations group by model", lake, tmp_path) == [
        {"model": "bot-b", "n": 6}]
    assert query("select count(*) as n from unieval_judgments", lake, tmp_path) == [{"n": 8}]

    check = run_cli(["verify", "--lake", str(lake.root)], tmp_path)
    assert check.returncode == 1, check.stdout + check.stderr
    for path, problem in ((generations, "truncated"), (verdicts[0], "altered")):
        assert f"{path.relative_to(lake.root)}: {problem}" in check.stdout
        assert not path.exists()
        (moved,) = (lake.root / "_quarantine").glob(f"*/{path.relative_to(lake.root)}")
        assert manifest.of(moved) is not None  # its record went with it
    again = run_cli(["verify", "--lake", str(lake.root)], tmp_path)
    assert again.returncode == 0 and "every committed file matches" in again.stdout

    # Without `verify`: the run's start finds a file truncated since (size, footer), quarantines it, and the run
    # recomputes its cells with those of the files `verify` quarantined, and no other.
    other = verdicts[1]
    truncate(other)
    second, stages = run(config, tmp_path, "2.json")
    assert second.returncode == 0, second.stderr[-3000:]  # the run's SQL data tests pass
    assert f"{other.relative_to(lake.root)}: truncated" in second.stdout + second.stderr
    assert len(list((lake.root / "_quarantine").glob(f"*/{other.relative_to(lake.root)}"))) == 1
    assert stages["generate:bot-a"] == (0, lost["generations"])
    assert stages["generate:bot-b"] == (6, 0)
    assert stages["botchat_unieval"] == (12 - 2 * lost["unieval_judgments"], 2 * lost["unieval_judgments"])
    assert query("select count(*) as n, count(distinct cell_key) as cells from generations", lake, tmp_path) == [
        {"n": 12, "cells": 12}]


def test_repair_keeps_one_copy_of_each_cell_so_runs_pass_again(tmp_path, config, first_run):
    first, _ = first_run(config, tmp_path, "1.json")
    assert first.returncode == 0, first.stderr[-3000:]
    lake = open_lake(tmp_path / "lake")
    clean = {t: sorted(lake.read(t).column("cell_key").to_pylist()) for t in ("generations", "unieval_judgments")}
    copies = 0
    for table in clean:  # what two overlapping runs left: every cell committed twice, by two writers
        for path in lake.files(table):
            partition = dict(part.split("=", 1) for part in path.parent.relative_to(lake.table_dir(table)).parts)
            copies += lake.write(table, pq.read_table(path), partition=partition).exists()
    assert copies == 5  # a file per bot, 3 of verdicts

    broken, _ = run(config, tmp_path, "2.json")
    assert broken.returncode != 0
    assert "unique_generation_cells" in broken.stdout + broken.stderr

    dry = run_cli(["repair", "--lake", str(lake.root), "--dry-run"], tmp_path)
    assert dry.returncode == 0 and "24 duplicate row(s) would be removed" in dry.stdout, dry.stdout + dry.stderr
    assert len(lake.files("generations")) == 4  # a dry run changes nothing
    fixed = run_cli(["repair", "--lake", str(lake.root)], tmp_path)
    assert fixed.returncode == 0, fixed.stderr[-2000:]
    removed = {m[1]: int(m[2]) for m in re.finditer(r"^\s+(\w+)\s+removed\s+(\d+) duplicate", fixed.stdout, re.M)}
    assert removed == {"generations": 12, "utterance_lengths": 0, "unieval_judgments": 12, "arena_judgments": 0,
                       "gteval_judgments": 0, "mtbench101_answers": 0, "mtbench101_judgments": 0,
                       "gameeval_games": 0, "judge_probes": 0}, fixed.stdout
    assert {t: sorted(lake.read(t).column("cell_key").to_pylist()) for t in clean} == clean

    third, stages = run(config, tmp_path, "3.json")
    assert third.returncode == 0, third.stderr[-3000:]
    assert stages["generate:bot-a"] == (6, 0) and stages["botchat_unieval"] == (12, 0)


def test_a_run_records_a_format_3_lake_in_place_and_a_reader_refuses_it(tmp_path, config, first_run):
    """A lake from before the records (format 3): `query` refuses it (a reader never writes); `run` records
    its files under the lease, before Prefect starts, and computes nothing again."""
    lake = open_lake(tmp_path / "lake")
    first, _ = first_run(config, tmp_path, "first")
    assert first.returncode == 0, first.stderr[-3000:]
    for path in lake.root.rglob("*.parquet"):  # what a format-3 dialogbench left: files without records
        manifest.record_path(path).unlink(missing_ok=True)
    (lake.root / "lake.json").write_text(json.dumps({"format": 3}))

    refused = run_cli(["query", "select 1", "--lake", str(lake.root)], tmp_path)
    assert refused.returncode == 2 and "dialogbench migrate" in refused.stderr
    assert json.loads((lake.root / "lake.json").read_text())["format"] == 3

    rerun, stages = run(config, tmp_path, "rerun")
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert all(computed == 0 for _, computed in stages.values()), stages
    assert all(manifest.of(path) is not None for path in lake.files("generations"))


def test_a_folder_lake_converted_to_delta_gives_the_same_numbers_and_heals_the_same_way(tmp_path, config, first_run):
    """`dialogbench convert` copies the first run's lake into Delta tables; a run of the same config on it computes
    nothing and its views give the folder lake's rows; a Delta file truncated since is found at the run's start,
    dropped from its table's log and its cells computed again, once each; repair has nothing to do; compact and
    vacuum change no row."""
    first, _ = first_run(config, tmp_path, "1.json")
    assert first.returncode == 0, first.stderr[-3000:]
    folder, delta_root = open_lake(tmp_path / "lake"), tmp_path / "delta-lake"
    done = run_cli(["convert", "--lake", str(folder.root), "--to", str(delta_root)], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^\s+generations\s+12 row\(s\) ->\s+12\s+copied$", done.stdout, re.M), done.stdout
    assert json.loads((delta_root / "lake.json").read_text())["tables"] == "delta"
    converted = open_lake(delta_root)
    for table in ("generations", "unieval_judgments"):  # each copied file hashed as a run's commits are
        assert {p.name for p in converted.files(table)} <= set(recorded(delta_root / table)), table
    reports = sorted(p.relative_to(folder.root / "reports") for p in (folder.root / "reports").rglob("*") if p.is_file())
    assert reports and reports == sorted(p.relative_to(delta_root / "reports")
                                         for p in (delta_root / "reports").rglob("*") if p.is_file())
    data = yaml.safe_load(config.read_text())
    on_delta = tmp_path / "delta.yaml"
    on_delta.write_text(yaml.safe_dump({**data, "lake": str(delta_root), "lake_tables": "delta"}))
    refused = run_cli(["run", "--config", str(config), "--lake", str(delta_root)], tmp_path)
    assert refused.returncode != 0 and "stores its tables as delta, the config asks for files" in refused.stderr

    cached, stages = run(on_delta, tmp_path, "delta-1.json")
    assert cached.returncode == 0, cached.stderr[-3000:]  # its SQL data tests pass on the Delta tables
    assert stages and all(computed == 0 for _, computed in stages.values()), stages
    delta = open_lake(delta_root)
    views = ("select model, count(*) as n from generations group by model order by model",
             "select * from botchat_unieval_pass_rates order by all",
             "select stage, count(*) as n from plans group by stage order by stage")
    for sql in views[:2]:
        assert query(sql, delta, tmp_path) == query(sql, folder, tmp_path), sql
    assert (delta_root / "generations" / "_delta_log").is_dir()

    (generations,) = delta.files("generations")  # the copy is one commit: one file
    truncate(generations)
    healed, stages = run(on_delta, tmp_path, "delta-2.json")
    assert healed.returncode == 0, healed.stderr[-3000:]
    assert "generations" in healed.stdout + healed.stderr and "truncated" in healed.stdout + healed.stderr
    assert stages["generate:bot-a"] == (0, 6) and stages["generate:bot-b"] == (0, 6)
    assert stages["botchat_unieval"] == (12, 0)  # the same generations again: their verdicts are cached
    assert query("select count(*) as n, count(distinct cell_key) as cells from generations", delta, tmp_path) == [
        {"n": 12, "cells": 12}]
    assert query(views[1], delta, tmp_path) == query(views[1], folder, tmp_path)

    nothing = run_cli(["repair", "--lake", str(delta_root)], tmp_path)
    assert nothing.returncode == 0 and "nothing to repair" in nothing.stdout
    before = query(views[2], delta, tmp_path)
    for command in (["compact"], ["vacuum", "--retention-hours", "0"]):
        kept = run_cli([*command, "--lake", str(delta_root)], tmp_path)
        assert kept.returncode == 0, kept.stdout + kept.stderr
    assert query(views[2], delta, tmp_path) == before
    assert len(open_lake(delta_root).files("plans")) == 1  # compacted, the replaced files vacuumed
    assert sorted(p.name for p in (delta_root / "plans").glob("*.parquet")) == [open_lake(delta_root).files("plans")[0].name]
    assert run_cli(["verify", "--lake", str(delta_root)], tmp_path).returncode == 0
