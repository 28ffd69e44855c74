"""``run_configs`` keeps each run's effective config, and no secret of it: the values of keys naming a secret, URL
passwords and Authorization values are ``[REDACTED]`` there, the rest of the config word for word."""

from __future__ import annotations

import base64

import pyarrow.parquet as pq
import yaml

from dialogbench.history.snapshot import config_fingerprint, record_config
from dialogbench.run.registry import open_lake
from tests.conftest import chatbot, config_dict

BASIC = base64.b64encode(b"alice:PLANTEDbasicPw42").decode()
SECRETS = ("hf_" + "PLANTEDhfToken0123456789", "PLANTEDenginePw42", "PLANTEDurlPw42", BASIC, "PLANTEDbasicPw42")


def test_the_recorded_config_holds_no_secret_and_the_rest_as_it_was(make_config, lake_dir):
    bot = chatbot("bot-a", weights="https://alice:PLANTEDurlPw42@weights.example.com/m.gguf",
                  engine={"hf_token": SECRETS[0], "auth": {"password": SECRETS[1]}, "dtype": "bfloat16",
                          "headers": [f"Authorization: Basic {BASIC}"]})
    config = make_config(config_dict(lake_dir, models=[bot, chatbot("bot-b")]))
    fp = record_config(open_lake(lake_dir), config, run_id="r1", config_path="night.yaml")

    [path] = lake_dir.rglob("*.parquet")
    [row] = pq.read_table(path).to_pylist()
    assert not [s for s in SECRETS if s in row["config"]]
    recorded = yaml.safe_load(row["config"])
    assert recorded["models"][0]["weights"] == "https://alice:[REDACTED]@weights.example.com/m.gguf"
    assert recorded["models"][0]["engine"] == {"hf_token": "[REDACTED]", "auth": {"password": "[REDACTED]"},
                                              "dtype": "bfloat16", "headers": ["Authorization: Basic [REDACTED]"]}
    whole = config.model_dump(mode="json")
    for field in ("weights", "engine"):
        recorded["models"][0][field] = whole["models"][0][field]
    assert recorded == whole  # nothing else was touched
    assert fp == row["config_fp"] == config_fingerprint(config)  # the fingerprint is of the config itself
