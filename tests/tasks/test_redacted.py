"""What Prefect stores of a run holds no secret of its config (``tasks/redacted.py``): the flows record their
parameters redacted while the call keeps the real config, and a task's or flow's exception reaches Prefect's
state message redacted. Every flow and task of ``flows/`` and ``tasks/`` is made that way. (The end-to-end proof,
a real server's database and REST API searched: tests/e2e/test_no_secret_stored.py.)"""

from __future__ import annotations

import base64
import importlib
import pkgutil

import prefect
from prefect.cache_policies import NO_CACHE
from prefect.states import exception_to_failed_state
from prefect.utilities.asyncutils import run_coro_as_sync

import flows
import tasks
from dialogbench.run.registry import run_for
from dialogbench.run.config import ConfigError
from flows.family_subflow import family
from flows.pipeline import pipeline
from tasks.redacted import RedactedParametersFlow, task
from tests.conftest import chatbot, config_dict

BASIC = base64.b64encode(b"alice:PLANTEDbasicPw42").decode()
PLANTED = ("hf_PLANTEDhfToken0123456789", "PLANTEDenginePw42", "PLANTEDurlPw42", BASIC, "PLANTEDbasicPw42")


def _config(make_config, lake_dir):
    bot = chatbot("bot-a", weights=f"https://alice:{PLANTED[2]}@weights.example.com/m.gguf",
                  engine={"hf_token": PLANTED[0], "auth": {"password": PLANTED[1]},
                          "headers": [f"Authorization: Basic {BASIC}"]})
    return make_config(config_dict(lake_dir, models=[bot, chatbot("bot-b")]))


def test_the_family_subflow_records_a_redacted_config_and_runs_with_the_real_one(make_config, lake_dir):
    config = _config(make_config, lake_dir)
    run = run_for(config, source="night.yaml")
    parameters = {"run": run, "run_id": "r1", "family": "botchat", "stages": ["generate:bot-a"]}
    stored = family.serialize_parameters(parameters)  # what Prefect sends to its API (flow_run.parameters)
    assert not [s for s in PLANTED if s in repr(stored)]
    bot = stored["run"]["config"]["models"][0]
    assert bot["weights"] == "https://alice:[REDACTED]@weights.example.com/m.gguf"
    assert bot["engine"] == {"hf_token": "[REDACTED]", "auth": {"password": "[REDACTED]"},
                             "headers": ["Authorization: Basic [REDACTED]"]}
    assert stored["run"]["config"]["botchat"] == config.model_dump(mode="json")["botchat"]  # the rest as it is
    assert {k: stored[k] for k in ("run_id", "family", "stages")} == \
        {"run_id": "r1", "family": "botchat", "stages": ["generate:bot-a"]}
    assert stored["run"]["source"] == "night.yaml"
    called = family.validate_parameters(parameters)  # what the flow function is called with
    assert called["run"] is run and called["run"].config is config and config.models[0].engine["hf_token"] == PLANTED[0]


# What issue 32's red team found stored word for word in flow_run.parameters: URL passwords holding '/' or '#', a
# token as a URL's user name, secrets under pwd, PGPASSWORD and Ocp-Apim-Subscription-Key, a glpat- token.
ODD = ("p/a#ss0042", "ghp_" + "PLANTEDuser0" * 3, "PLANTEDpwd42", "PLANTEDpg42", "PLANTEDocp42",
       "glpat-" + "PLANTEDgl42" * 2, "PLANTEDsig42")


def test_the_family_subflow_records_unusual_secrets_redacted(make_config, lake_dir):
    bot = chatbot("bot-a", weights=f"postgresql://user:{ODD[0]}@host/db", revision=ODD[5],
                  engine={"download": f"https://{ODD[1]}@github.com/org/weights.git", "pwd": ODD[2],
                          "env": {"PGPASSWORD": ODD[3]}, "headers": {"Ocp-Apim-Subscription-Key": ODD[4]},
                          "mirror": f"https://mirror.example/m.bin?sv=2022&sig={ODD[6]}"})
    config = make_config(config_dict(lake_dir, models=[bot, chatbot("bot-b")]))
    run = run_for(config, source="night.yaml")
    stored = family.serialize_parameters({"run": run, "run_id": "r1", "family": "botchat",
                                          "stages": ["generate:bot-a"]})
    assert not [s for s in ODD if s in repr(stored)]
    shown = stored["run"]["config"]["models"][0]
    assert shown["weights"] == "postgresql://user:[REDACTED]@host/db" and shown["revision"] == "[REDACTED]"
    assert shown["engine"] == {"download": "https://[REDACTED]@github.com/org/weights.git", "pwd": "[REDACTED]",
                               "env": {"PGPASSWORD": "[REDACTED]"},
                               "headers": {"Ocp-Apim-Subscription-Key": "[REDACTED]"},
                               "mirror": "https://mirror.example/m.bin?sv=2022&sig=[REDACTED]"}
    assert family.validate_parameters({"run": run, "run_id": "r1", "family": "botchat", "stages": []}
                                      )["run"].config.models[0].engine["pwd"] == ODD[2]


def test_the_pipeline_flow_records_its_flags_as_given():
    parameters = {"config_path": "configs/demo.yaml", "limit": 4, "models": ["bot-a"], "n": [4, 8], "judge": None,
                  "lake": "data_lake", "board": None, "lease_wait_s": 0.0}
    assert pipeline.serialize_parameters(parameters) == parameters


def test_a_task_error_quoting_a_secret_reaches_the_state_message_redacted(make_config, lake_dir):
    _config(make_config, lake_dir)  # the config registers its secrets as it loads

    @task(name="loads-weights")
    def load(url: str) -> None:
        raise ConfigError(f"cannot download {url}: the server refused password {PLANTED[1]}")

    try:
        load.fn(f"https://alice:{PLANTED[2]}@weights.example.com/m.gguf")
    except ConfigError as exc:  # its own type: the CLI still tells a config error from a crash
        state = run_coro_as_sync(exception_to_failed_state(exc, message="Task run encountered an exception"))
    assert state.is_failed() and "ConfigError: cannot download https://alice:[REDACTED]@" in state.message
    assert not [s for s in PLANTED if s in state.message]


def test_every_flow_and_task_of_the_pipeline_redacts():
    modules = [importlib.import_module(f"{package.__name__}.{info.name}") for package in (flows, tasks)
               for info in pkgutil.iter_modules(package.__path__)]
    made = {id(obj): obj for module in modules for obj in vars(module).values()
            if isinstance(obj, (prefect.Flow, prefect.Task))}.values()
    flows_ = [obj for obj in made if isinstance(obj, prefect.Flow)]
    assert {f.name for f in flows_} == {"dialogbench", "family", "dialogbench-work"}
    assert all(isinstance(f, RedactedParametersFlow) for f in flows_)
    tasks_ = [obj for obj in made if isinstance(obj, prefect.Task)]
    assert len(tasks_) >= 14
    assert [obj.name for obj in made if not getattr(obj.fn, "redacts_errors", False)] == []
    # no cache key or result record is written for a task (what tasks/redacted.py and the README rely on)
    assert [t.name for t in tasks_ if t.cache_policy is not NO_CACHE or t.persist_result] == []
