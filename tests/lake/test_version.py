"""The lake format: a new lake is marked, an older one is refused until `dialogbench migrate` brings it to
the current format (plans with roles and scope; each protocol's verdicts in its own table), keeping every row,
and a migration interrupted half way, rerun, leaves no duplicates."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dialogbench.run.registry import open_lake
from dialogbench.cli import main
from dialogbench.lake import Lake
from dialogbench.lake.catalog import connect
from dialogbench.lake.schemas import VERDICTS
from dialogbench.lake.version import FORMAT, LakeFormatError, ensure_current, lake_format, migrate, refuse_older

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
OLD_PLANS = pa.schema([("run_id", pa.string()), ("stage", pa.string()), ("cell_key", pa.string()),
                       ("item_id", pa.string()), ("model", pa.string()), ("judge", pa.string()),
                       ("created_at", pa.timestamp("us", tz="UTC"))])
OLD_JUDGMENTS = pa.schema([*VERDICTS, ("n_judged", pa.int32()), ("choice", pa.string()), ("ai_index", pa.int32()),
                           ("reason", pa.string()), ("opponent", pa.string()), ("position", pa.int32()),
                           ("verdict", pa.string()), ("winner", pa.string()), ("score", pa.int32())])
VERDICTS_BY_PROTOCOL = {
    "botchat_unieval": {"n_judged": 8, "choice": "Yes", "ai_index": 5, "reason": "too formal"},
    "botchat_arena": {"n_judged": 8, "opponent": "b", "position": 1, "verdict": "both", "winner": "tie"},
    "botchat_gteval": {"n_judged": 6, "opponent": "human", "position": 2, "verdict": "neither", "winner": "tie"},
    "mtbench101": {"score": 7},
}


def old_lake(root) -> Lake:
    """A format-1 lake: plans with packed model strings, every protocol's verdicts in one judgments table."""
    lake = open_lake(root)
    lake.write("plans", pa.Table.from_pylist([
        {"run_id": "r1", "stage": "botchat_arena", "cell_key": "arena-1", "item_id": "s1", "model": "a vs b",
         "judge": "j", "created_at": T0},
        {"run_id": "r1", "stage": "gameeval_spyfall", "cell_key": "game-1", "item_id": "w", "model": "spy=a;villager=b",
         "judge": None, "created_at": T0},
        {"run_id": "r1", "stage": "botchat_unieval", "cell_key": "uni-1", "item_id": "s1", "model": "a", "judge": "j",
         "created_at": T0}], schema=OLD_PLANS), partition={"stage": "mixed"})
    for protocol, columns in VERDICTS_BY_PROTOCOL.items():
        lake.write("judgments", pa.Table.from_pylist([
            {"cell_key": f"{protocol}-{i}", "protocol": protocol, "item_id": "s1", "model": "a", "judge": "j",
             "parsed": True, "raw_output": "…", "created_at": T0, **columns} for i in range(2)], schema=OLD_JUDGMENTS),
            partition={"protocol": protocol, "judge": "j"})
    return lake


def test_a_new_lake_is_marked_current(tmp_path):
    lake = open_lake(tmp_path / "lake")
    assert lake_format(lake) is None
    ensure_current(lake)  # a Delta lake unless the config says lake_tables: files
    assert json.loads((lake.root / "lake.json").read_text()) == {"format": FORMAT, "tables": "delta"}
    assert lake_format(lake) == FORMAT and lake.tables_kind() == "delta"
    ensure_current(files := open_lake(tmp_path / "files"), tables="files")
    assert json.loads((files.root / "lake.json").read_text()) == {"format": FORMAT}


def test_an_older_lake_is_refused_with_the_command_to_run(tmp_path, capsys):
    lake = old_lake(tmp_path / "lake")
    with pytest.raises(LakeFormatError, match=r"lake format 1.*dialogbench migrate --lake"):
        ensure_current(lake)
    with pytest.raises(LakeFormatError):
        refuse_older(lake)
    assert main(["query", "select 1", "--lake", str(lake.root)]) == 2
    assert "dialogbench migrate" in capsys.readouterr().err
    (lake.root / "lake.json").write_text(json.dumps({"format": FORMAT + 1}))
    with pytest.raises(LakeFormatError, match="newer dialogbench"):
        ensure_current(lake)


def test_migrate_unpacks_plans_and_splits_judgments_keeping_every_row(tmp_path, capsys):
    lake = old_lake(tmp_path / "lake")
    assert main(["migrate", "--lake", str(lake.root)]) == 0
    assert f"1 -> {FORMAT}: 1 plan file(s) rewritten, 4 judgments file(s) split" in capsys.readouterr().out
    assert lake_format(lake) == FORMAT and not lake.files("judgments")
    with connect(lake) as con:
        plans = {r[0]: (dict(r[1]), r[2], r[3]) for r in con.sql("select cell_key, roles, model, scope from plans").fetchall()}
        assert plans == {"arena-1": ({"first": "a", "second": "b"}, None, ["a", "b"]),
                         "game-1": ({"spy": "a", "villager": "b"}, None, []),
                         "uni-1": ({"model": "a"}, "a", ["a"])}
        assert con.sql("select protocol, count(*) from judgments group by all order by 1").fetchall() == [
            ("botchat_arena", 2), ("botchat_gteval", 2), ("botchat_unieval", 2), ("mtbench101_judge", 2)]
        assert con.sql("select distinct choice, ai_index, reason from unieval_judgments").fetchall() == [
            ("Yes", 5, "too formal")]
        assert con.sql("select distinct opponent, position, verdict, winner from gteval_judgments").fetchall() == [
            ("human", 2, "neither", "tie")]
        assert con.sql("select distinct score from mtbench101_judgments").fetchall() == [(7,)]
        assert "score" not in [d[0] for d in con.sql("select * from arena_judgments").description]
    assert migrate(lake) == {"from_format": FORMAT, "to_format": FORMAT, "plan_files_rewritten": 0,
                             "judgment_files_split": 0, "files_adopted": 0, "files_quarantined": 0,
                             "stage_files_renamed": 0}  # a second migrate finds nothing to do


def test_an_interrupted_migration_reruns_without_duplicates(tmp_path, monkeypatch):
    lake = old_lake(tmp_path / "lake")
    real_unlink, calls = type(lake.root).unlink, []

    def crash_on_second(path, *args, **kwargs):
        calls.append(path)
        if len(calls) == 2:
            raise KeyboardInterrupt("killed")  # the second file's rows are written, the old file is still there
        return real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(type(lake.root), "unlink", crash_on_second)
    with pytest.raises(KeyboardInterrupt):
        migrate(lake)
    monkeypatch.undo()
    assert lake_format(lake) == 1 and len(lake.files("judgments")) == 3
    migrate(lake)
    with connect(lake) as con:
        assert con.sql("select count(*), count(distinct cell_key) from judgments").fetchall() == [(8, 8)]


def test_a_judgment_of_an_unknown_protocol_stops_the_migration_naming_the_file(tmp_path):
    lake = old_lake(tmp_path / "lake")
    lake.write("judgments", pa.Table.from_pylist([{"cell_key": "x", "protocol": "mystery", "judge": "j"}],
                                                 schema=OLD_JUDGMENTS), partition={"protocol": "mystery", "judge": "j"})
    with pytest.raises(LakeFormatError, match=r"protocol=mystery.*row 0: protocol 'mystery' has no verdict table"):
        migrate(lake)
    assert any("mystery" in str(p) for p in lake.files("judgments"))  # nothing lost
    assert pq.read_table(next(p for p in lake.files("judgments") if "mystery" in str(p))).num_rows == 1
