"""Every stored row says which engine produced it (backend, backend_version), and judgments say which
output format held them; the views and judge_outputs show it. Scripted models: fast."""

from __future__ import annotations

from tests import stage_runner as game_stage
from dialogbench.run.registry import open_lake
from dialogbench.lake.catalog import connect
from dialogbench.mtbench101.config import answerers
from tests import stage_runner as mt_stages
from tests.conftest import chatbot, config_dict
from tests.verdicts import verdicts


def test_rows_record_backend_and_engine_version(make_config, lake_dir, pipeline):
    data = config_dict(lake_dir, models=[chatbot("bot-a"), chatbot("bot-b")], judge_script=["Rating: [[7]]"])
    data["mtbench101"] = {"enabled": True, "judge": "judge", "tasks": ["GR"], "limit": 1}
    data["gameeval"] = {"enabled": True, "askguess": {"limit": 1, "max_rounds": 1, "settings": ["without_description"]},
                        "spyfall": {"enabled": False}, "tofukingdom": {"enabled": False}}
    config = make_config(data)
    pipeline(config, "run-1")
    for model in answerers(config):
        mt_stages.answer(config, model.name, "run-1")
    chunks, _ = mt_stages.plan_judging(config, "run-1")
    for chunk in chunks:
        mt_stages.judge(config, chunk, "run-1")
    game_stage.run_game(config, "askguess", "run-1")

    lake = open_lake(lake_dir)
    for table in ("generations", "unieval_judgments", "mtbench101_judgments", "mtbench101_answers", "gameeval_games"):
        rows = lake.read(table).to_pylist()
        assert rows and {(r["backend"], r["backend_version"]) for r in rows} == {("scripted", "scripted")}, table
    # a scripted judge enforces no format: its verdicts are free text
    assert {r["output_format"] for r in verdicts(lake)} == {None}
    with connect(lake) as con:
        outputs = con.sql("select protocol, backend, output_format, verdicts from judge_outputs order by protocol").fetchall()
    assert outputs == [("botchat_unieval", "scripted", "free", 6), ("mtbench101_judge", "scripted", "free", 6)]


def test_the_code_fingerprint_follows_every_code_file_and_nothing_else(tmp_path):
    """What reuse_unchanged_run compares (dialogbench/run/reuse.py): any edit of the package, flows, tasks or SQL files,
    committed or not, is other code; a file outside them, or a cache, is not."""
    from dialogbench.run.environment import code_fingerprint

    for folder, name in [("dialogbench", "a.py"), ("flows", "f.py"), ("tasks", "t.py"), ("sql", "v.sql")]:
        (tmp_path / folder).mkdir()
        (tmp_path / folder / name).write_text("x = 1\n")
    (tmp_path / "README.md").write_text("notes")
    code_fingerprint.cache_clear()
    first = code_fingerprint(tmp_path)
    (tmp_path / "README.md").write_text("other notes")
    (tmp_path / "dialogbench" / "__pycache__").mkdir()
    (tmp_path / "dialogbench" / "__pycache__" / "a.py").write_text("cache")
    code_fingerprint.cache_clear()
    assert code_fingerprint(tmp_path) == first
    for path in ["dialogbench/a.py", "flows/f.py", "tasks/t.py", "sql/v.sql"]:
        (tmp_path / path).write_text("x = 2\n")
        code_fingerprint.cache_clear()
        assert code_fingerprint(tmp_path) != first, path
        (tmp_path / path).write_text("x = 1\n")
    code_fingerprint.cache_clear()
