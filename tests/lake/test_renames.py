"""Lake format 5: a format-4 lake, where the MT-Bench-101 judge stage is stored as ``mtbench101`` (its probes' stage
``judge_probe:mtbench101``), is rewritten to ``mtbench101_judge`` everywhere the lake stores a stage or judge protocol
name (columns, folders, file names), keeping every row and key; readers refuse it until then; a run does it in place;
a migration killed half way, rerun, leaves no duplicates."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pyarrow as pa
import pytest

from dialogbench.cli import main
from dialogbench.lake import Lake, manifest
from dialogbench.lake.catalog import connect
from dialogbench.lake.schemas import PLANS
from dialogbench.lake.version import FORMAT, LakeFormatError, ensure_current, lake_format, migrate, refuse_older
from dialogbench.run.registry import open_lake

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
OLD, PROBE = "mtbench101", "judge_probe:mtbench101"
# table -> the column that names a stage or protocol (metric_snapshots: its slice)
NAMED = {"plans": "stage", "failures": "stage", "runs": "stage", "backend_calls": "stage",
         "canary_judgments": "stage", "mtbench101_judgments": "protocol", "judge_probes": "protocol",
         "metric_snapshots": "slice"}


def write(lake: Lake, table: str, rows: list[dict], partition: dict | None = None, name: str | None = None) -> None:
    schema = lake.layout.tables[table].schema
    lake.write(table, pa.Table.from_pylist(rows, schema=schema), partition=partition, name=name)


def plan(run: str, stage: str, key: str) -> dict:
    return {"run_id": run, "stage": stage, "cell_key": key, "item_id": "1:0", "model": "bot", "judge": "j",
            "created_at": T0, "roles": [("model", "bot")], "scope": ["bot"]}


def run_row(run: str, stage: str) -> dict:
    return {"run_id": run, "stage": stage, "planned": 1, "cached": 0, "computed": 1, "failed": 0, "seconds": 1.0,
            "started_at": T0, "finished_at": T0, "config": "c.yaml", "detail": "{}"}


def format_4_lake(root) -> Lake:
    """Every place a format-4 lake stored the judge stage's old name, beside rows that keep theirs."""
    lake = open_lake(root)
    for stage, key in ((OLD, "mt-1"), ("mtbench101_answer:bot", "ans-1"), (PROBE, "probe-1"),
                       ("botchat_unieval", "uni-1")):
        write(lake, "plans", [plan("r1", stage, key)], partition={"stage": stage, "run_id": "r1"})
        write(lake, "runs", [run_row("r1", stage)], partition={"run_id": "r1"}, name=f"{stage}.parquet")
    write(lake, "runs", [run_row("r1", OLD)], partition={"run_id": "r1"}, name=f"{OLD}.bot-a_bot-b.parquet")
    write(lake, "failures", [{"cell_key": "mt-2", "stage": OLD, "item_id": "1:1", "model": "bot", "run_id": "r1",
                              "error": "timeout", "created_at": T0}], partition={"stage": OLD})
    write(lake, "backend_calls", [{"run_id": "r1", "stage": stage, "role": "judge", "model": "j", "conversations": 1}
                                  for stage in (OLD, "mtbench101_answer:bot", PROBE)], partition={"run_id": "r1"})
    write(lake, "canary_judgments", [{"cell_key": "can-1", "original_key": "mt-1", "stage": OLD, "run_id": "r1"}],
          partition={"run_id": "r1"})
    write(lake, "mtbench101_judgments", [{"cell_key": "mt-1", "protocol": OLD, "item_id": "1:0", "model": "bot",
                                          "judge": "j", "parsed": True, "score": 7, "created_at": T0}],
          partition={"judge": "j"})
    write(lake, "judge_probes", [{"cell_key": "probe-1", "protocol": OLD, "probe_id": "CM/1:0/golden", "judge": "j"}],
          partition={"protocol": OLD})
    write(lake, "metric_snapshots", [{"run_id": "r1", "slice": s, "metric": "accuracy", "value": 1.0}
                                     for s in ("protocol=mtbench101, kind=golden_vs_useless", "judge=j",
                                               "protocol=mtbench101x", "kind=k, protocol=mtbench101")],
          partition={"run_id": "r1"})
    (lake.root / "lake.json").write_text(json.dumps({"format": 4}))
    return lake


def stored(lake: Lake) -> dict[str, list]:
    """Each named table's rows as (name column, cell key or stage) pairs, sorted."""
    found = {}
    for table, column in NAMED.items():
        rows = lake.read(table).to_pylist()
        found[table] = sorted((r[column], r.get("cell_key") or r.get("stage")) for r in rows)
    return found


def test_readers_refuse_a_format_4_lake_and_migrate_renames_the_stage_everywhere(tmp_path, capsys):
    lake = format_4_lake(tmp_path / "lake")
    files = {t: len(lake.files(t)) for t in NAMED}
    with pytest.raises(LakeFormatError, match=r"lake format 4.*mtbench101_judge.*dialogbench migrate --lake"):
        refuse_older(lake)
    assert main(["query", "select 1", "--lake", str(lake.root)]) == 2 and lake_format(lake) == 4  # a reader writes not

    assert main(["migrate", "--lake", str(lake.root)]) == 0
    assert f"4 -> {FORMAT}:" in capsys.readouterr().out and lake_format(lake) == FORMAT == 5
    assert {t: len(lake.files(t)) for t in NAMED} == files  # every file kept, each once
    assert stored(lake) == {
        "plans": [("botchat_unieval", "uni-1"), ("judge_probe:mtbench101_judge", "probe-1"),
                  ("mtbench101_answer:bot", "ans-1"), ("mtbench101_judge", "mt-1")],
        "failures": [("mtbench101_judge", "mt-2")],
        "runs": [("botchat_unieval", "botchat_unieval"),
                 ("judge_probe:mtbench101_judge", "judge_probe:mtbench101_judge"),
                 ("mtbench101_answer:bot", "mtbench101_answer:bot"), ("mtbench101_judge", "mtbench101_judge"),
                 ("mtbench101_judge", "mtbench101_judge")],
        "backend_calls": [("judge_probe:mtbench101_judge", "judge_probe:mtbench101_judge"),
                          ("mtbench101_answer:bot", "mtbench101_answer:bot"), ("mtbench101_judge", "mtbench101_judge")],
        "canary_judgments": [("mtbench101_judge", "can-1")],
        "mtbench101_judgments": [("mtbench101_judge", "mt-1")],  # the keys are as they were: nothing recomputes
        "judge_probes": [("mtbench101_judge", "probe-1")],
        "metric_snapshots": [(s, None) for s in sorted(("protocol=mtbench101_judge, kind=golden_vs_useless", "judge=j",
                                                        "protocol=mtbench101x", "kind=k, protocol=mtbench101_judge"))]}
    paths = sorted(str(p.relative_to(lake.root)) for t in NAMED for p in lake.files(t))
    assert not [p for p in paths if "=mtbench101/" in p or "mtbench101." in p or "_mtbench101/" in p], paths
    assert {"plans/stage=mtbench101_judge/run_id=r1", "plans/stage=judge_probe_mtbench101_judge/run_id=r1",
            "failures/stage=mtbench101_judge", "judge_probes/protocol=mtbench101_judge"} <= \
        {p.rsplit("/", 1)[0] for p in paths}
    assert {"runs/run_id=r1/mtbench101_judge.parquet", "runs/run_id=r1/mtbench101_judge.bot-a_bot-b.parquet",
            "runs/run_id=r1/judge_probe:mtbench101_judge.parquet"} <= set(paths)
    assert all(manifest.of(lake.root / p) for p in paths)  # each rewritten file has its record
    assert not [p for p in lake.root.rglob("*") if p.name.endswith("mtbench101")]  # no folder left under the old name
    with connect(lake) as con:  # the views read it under the new name
        assert con.sql("select cell_key from current_cells where stage = 'mtbench101_judge'").fetchall() == [("mt-1",)]
        assert con.sql("select protocol from judgments where cell_key = 'mt-1'").fetchall() == [("mtbench101_judge",)]
    assert migrate(lake)["stage_files_renamed"] == 0  # done once


def test_a_run_renames_in_place_and_a_killed_migration_reruns_without_duplicates(tmp_path, monkeypatch):
    lake = format_4_lake(tmp_path / "lake")
    twin = format_4_lake(tmp_path / "twin")
    migrate(twin)
    expected = stored(twin)  # what an uninterrupted migration leaves
    real_remove, calls = manifest.remove, []

    def killed_on_third(path):
        calls.append(path)
        if len(calls) == 3:
            raise KeyboardInterrupt("killed")  # the third moved file's rows are written, the old file is still there
        real_remove(path)

    monkeypatch.setattr(manifest, "remove", killed_on_third)
    with pytest.raises(KeyboardInterrupt):
        migrate(lake)
    monkeypatch.undo()
    assert lake_format(lake) == 4  # not marked: readers still refuse the half-renamed lake
    ensure_current(lake)  # what a run does first, under the lake's lease
    assert lake_format(lake) == FORMAT and stored(lake) == expected


def test_a_superseded_file_goes_and_a_damaged_one_stays_for_verify(tmp_path):
    """An interrupted ``repair`` left an old plans file beside the rewrite that supersedes it, in the old stage's
    folder; a verdict file was truncated. The rewrite moves alone (the rows once), the damaged file is not rewritten
    (its record would bless it): ``verify`` quarantines it as before."""
    lake = format_4_lake(tmp_path / "lake")
    old = lake.write("plans", pa.Table.from_pylist([plan("r0", OLD, "mt-0")], schema=PLANS),
                     partition={"stage": OLD, "run_id": "r1"})
    lake.write("plans", pa.Table.from_pylist([plan("r0", OLD, "mt-0")], schema=PLANS),
               partition={"stage": OLD, "run_id": "r1"}, supersedes=(old.name,))
    (bad,) = lake.files("mtbench101_judgments")
    with open(bad, "r+b") as handle:
        handle.truncate(40)
    migrate(lake)
    plans = lake.read("plans").to_pylist()
    assert [(r["stage"], r["cell_key"]) for r in plans if r["run_id"] == "r0"] == [("mtbench101_judge", "mt-0")]
    assert not old.exists() and not old.parent.exists()
    assert bad.exists() and lake.snapshot("mtbench101_judgments").damaged[0].path == bad
    assert main(["verify", "--lake", str(lake.root)]) != 0 and not bad.exists()  # quarantined
