"""A lake whose tables are on an S3-compatible store (``lake: s3://bucket/prefix``), against the local moto server of
``conftest.py``: the rows are on the store, each machine reads them through its own local folder (the mirror), and
what two machines write at once is stored once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import boto3
import pyarrow as pa
import pytest

from dialogbench.lake.delta.commands import open_store_lake
from dialogbench.lake.delta.mirror import CACHE_VARIABLE, mirror_folder
from dialogbench.lake.store import Lake
from dialogbench.lake.verify import verify
from dialogbench.lake.version import LakeFormatError, ensure_current
from tests.lake.delta.conftest import ACCESS_KEY, REGION, SECRET_KEY
from tests.lake.delta.test_lake_tables import CELLS, LAYOUT, LOG, rows

REPO = Path(__file__).resolve().parents[3]


def objects(uri: str) -> list[str]:
    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    client = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name=REGION,
                          aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY)
    return [o["Key"] for o in client.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])]


def machine(uri: str, cache: Path, monkeypatch) -> Lake:
    """The lake at ``uri`` as a machine whose mirrors are under ``cache`` opens it."""
    monkeypatch.setenv(CACHE_VARIABLE, str(cache))
    return Lake(open_store_lake(uri), layout=LAYOUT)


def test_rows_go_to_the_store_and_each_machine_reads_them_through_its_own_folder(s3_env, tmp_path, monkeypatch):
    uri = s3_env + "/nightly"
    first = machine(uri, tmp_path / "a", monkeypatch)
    assert first.root == tmp_path / "a" / s3_env.removeprefix("s3://") / "nightly"
    assert json.loads((first.root / "lake.json").read_text()) == {"format": 5, "tables": "delta", "store": uri}
    first.write("cells", rows(CELLS, [{"cell_key": "a", "model": "m", "i": 1}]), partition={"model": "m"})
    first.write("log", rows(LOG, [{"run_id": "r", "stage": "s", "n": 1}]), partition={"run_id": "r"}, name="s.parquet")
    assert any(key.startswith("nightly/cells/_delta_log/") for key in objects(uri))
    assert not (first.root / "cells").exists() or not list((first.root / "cells").rglob("*.parquet"))
    second = machine(uri, tmp_path / "b", monkeypatch)  # another machine: an empty folder, the same tables
    second.write("cells", rows(CELLS, [{"cell_key": "a", "model": "m", "i": 9}, {"cell_key": "b", "model": "m", "i": 2}]),
                 partition={"model": "m"})
    second.write("log", rows(LOG, [{"run_id": "r", "stage": "s", "n": 2}]), partition={"run_id": "r"},
                 name="s.parquet")
    for lake in (first, second):
        assert sorted((r["cell_key"], r["i"]) for r in lake.read("cells", CELLS.schema).to_pylist()) == [
            ("a", 1), ("b", 2)]
        assert lake.read("log").column("n").to_pylist() == [2]
        assert all(path.is_relative_to(lake.root) and path.is_file() for path in lake.files("cells"))
    with pytest.raises(LakeFormatError, match="give each store its own folder"):
        ensure_current(Lake(second.root), tables="delta", store=s3_env + "/other")


def test_a_damaged_local_copy_is_fetched_again(s3_env, tmp_path, monkeypatch):
    lake = machine(s3_env + "/lake", tmp_path, monkeypatch)
    lake.write("cells", rows(CELLS, [{"cell_key": "a", "model": "m", "i": 1}]), partition={"model": "m"})
    [copy] = lake.files("cells")
    copy.write_bytes(copy.read_bytes()[:40])  # another size: the next read fetches it again
    assert Lake(lake.root, layout=LAYOUT).read("cells").column("cell_key").to_pylist() == ["a"]
    copy.write_bytes(copy.read_bytes()[:-4] + b"XXXX")  # the same size, its footer broken: verify moves it aside
    assert [d.problem for d in verify(Lake(lake.root, layout=LAYOUT))] == ["unreadable"]
    again = Lake(lake.root, layout=LAYOUT)
    assert again.read("cells").column("cell_key").to_pylist() == ["a"]  # on the store all along: fetched again
    assert verify(Lake(lake.root, layout=LAYOUT)) == []


def test_the_commands_take_an_s3_lake_convert_into_it_and_query_it(s3_env, tmp_path):
    from dialogbench.run.registry import layout, open_lake

    env = {**os.environ, CACHE_VARIABLE: str(tmp_path / "cache")}
    folder = open_lake(tmp_path / "folder")
    ensure_current(folder, tables="files")
    runs = layout().tables["runs"]
    folder.write("runs", pa.Table.from_pylist([{"run_id": "r1", "stage": "s", "planned": 3}], schema=pa.schema(
        [f for f in runs.schema if f.name in ("run_id", "stage", "planned")])), partition={"run_id": "r1"},
        name="s.parquet")
    uri = s3_env + "/converted"

    def cli(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "dialogbench.cli", *argv], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=300)

    done = cli("convert", "--lake", str(tmp_path / "folder"), "--to", uri)
    assert done.returncode == 0, done.stderr
    assert "runs" in done.stdout and "copied" in done.stdout
    assert any(key.startswith("converted/runs/_delta_log/") for key in objects(uri))
    answer = cli("query", "--lake", uri, "--format", "json", "select run_id, stage, planned from runs")
    assert answer.returncode == 0, answer.stderr
    assert json.loads(answer.stdout) == [{"run_id": "r1", "stage": "s", "planned": 3}]
    assert (Path(env[CACHE_VARIABLE]) / s3_env.removeprefix("s3://") / "converted" / "lake.json").is_file()
    kept = cli("vacuum", "--lake", uri, "--dry-run")
    assert kept.returncode == 0 and "no version needs would be deleted" in kept.stdout, kept.stderr


def test_a_config_whose_lake_is_on_s3_works_in_the_folder_beside_it(s3_env, tmp_path, monkeypatch):
    from dialogbench.run.registry import load_config

    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path))
    config = load_config(REPO / "configs" / "demo.yaml", {"lake": s3_env + "/nightly/"})
    assert config.lake_store == s3_env + "/nightly" and config.lake_tables == "delta"
    assert Path(config.lake) == mirror_folder(s3_env + "/nightly") == tmp_path / s3_env.removeprefix("s3://") / "nightly"


def test_a_config_on_s3_may_send_its_units_to_other_boxes(s3_env, tmp_path, monkeypatch):
    """A work pool or task workers: the units' state is on the store then (dialogbench/dispatch/on_store.py), which
    every box reaches; a unit is given the store's URI, which its box resolves to a folder of its own."""
    from dialogbench.dispatch.units import state_root
    from dialogbench.run.registry import load_config

    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path))
    for dispatch in ("{deployment: dialogbench-work/gpu}", "{task_workers: true}"):
        config = tmp_path / "pool.yaml"
        config.write_text((REPO / "configs" / "demo.yaml").read_text() + f"\ndispatch: {dispatch}\n")
        loaded = load_config(config, {"lake": s3_env + "/nightly"}, root=REPO)
        assert state_root(loaded) == s3_env + "/nightly" and Path(loaded.lake) == mirror_folder(s3_env + "/nightly")


def test_compact_then_vacuum_leaves_the_mirror_only_the_latest_version_s_copies(s3_env, tmp_path, monkeypatch, capsys):
    import argparse

    from dialogbench.lake.delta.commands import run_compact_command, run_vacuum_command

    lake = machine(s3_env + "/kept", tmp_path, monkeypatch)
    for key in ("a", "b"):
        lake.write("cells", rows(CELLS, [{"cell_key": key, "model": "m", "i": 1}]), partition={"model": "m"})
    assert len(lake.files("cells")) == 2  # fetched into the mirror
    assert run_compact_command(argparse.Namespace(), lake) == 0
    assert run_vacuum_command(argparse.Namespace(retention_hours=0.0, dry_run=False), lake) == 0
    assert "2 local cop(ies)" in capsys.readouterr().out
    again = Lake(lake.root, layout=LAYOUT)
    [kept] = again.files("cells")
    assert sorted((lake.root / "cells").rglob("*.parquet")) == [kept]
    assert sorted(again.read("cells").column("cell_key").to_pylist()) == ["a", "b"]
