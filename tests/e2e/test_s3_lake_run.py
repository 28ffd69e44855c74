"""Through the real CLI: a run whose config says ``lake: s3://bucket/prefix`` (the local moto server of
``tests/lake/delta/conftest.py``) writes its tables to the store as Delta tables, keeps its marker, lease and
reports in its own local folder, and another machine (another local folder) reads the same rows and finds every cell
computed."""

from __future__ import annotations

import json
import os

import boto3
import pytest
import yaml

from dialogbench.lake.delta.mirror import CACHE_VARIABLE
from tests.e2e.conftest import run_cli
from tests.lake.delta.conftest import ACCESS_KEY, REGION, SECRET_KEY, s3_env, s3_server  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow


def test_a_run_on_an_s3_lake_stores_its_tables_there_and_another_machine_reads_them(tmp_path, scripted_config, s3_env,
                                                                                       monkeypatch):
    uri = s3_env + "/nightly"
    config = scripted_config(limit=3, n=(4,))
    data = yaml.safe_load(config.read_text())
    config.write_text(yaml.safe_dump({**data, "lake": uri}))
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path / "box-a"))
    first = run_cli(["run", "--config", str(config), "--json", str(tmp_path / "1.json")], tmp_path)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-3000:]
    local = tmp_path / "box-a" / s3_env.removeprefix("s3://") / "nightly"
    assert json.loads((local / "lake.json").read_text()) == {"format": 5, "tables": "delta", "store": uri}
    assert list((local / "reports").rglob("report.html"))  # the run's report, in its own folder
    client = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name=REGION,
                          aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY)
    keys = [o["Key"] for o in client.list_objects_v2(Bucket=s3_env.removeprefix("s3://"),
                                                      Prefix="nightly/").get("Contents", [])]
    for table in ("generations", "unieval_judgments", "runs"):
        assert any(k.startswith(f"nightly/{table}/_delta_log/") for k in keys), table

    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path / "box-b"))  # another machine: nothing local yet
    answer = run_cli(["query", "--lake", uri, "--format", "json",
                      "select model, count(*) as n from generations group by model order by model"], tmp_path)
    assert answer.returncode == 0, answer.stderr[-2000:]
    assert json.loads(answer.stdout) == [{"model": "bot-a", "n": 3}, {"model": "bot-b", "n": 3}]
    second = run_cli(["run", "--config", str(config), "--rerun", "--json", str(tmp_path / "2.json")], tmp_path)
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-3000:]
    stages = json.loads((tmp_path / "2.json").read_text())["stages"]
    assert stages and all(s["computed"] == 0 for s in stages), stages
