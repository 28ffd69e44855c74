"""Preflight: what a run needs (a writable lake and every table folder it writes, no linked lake files, datasets that
parse, endpoint variables) is checked before Prefect starts; `validate` and `run` report every problem at once, exit 2,
no traceback. A secret written in the config is a note naming its field and what to do instead, never its value; the
exit code stays.

The CLI tests run the real CLI in a subprocess with no Prefect server and no Prefect database made for it
(``cli_before_prefect``): each command here stops before Prefect would start, and seeding a database for it cost a
Prefect migration (~8 s of CPU, once per test process) that no check here reads; a Prefect that started anyway
leaves its PREFECT_HOME behind, which ``untouched`` sees."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import base64

import pytest
import yaml

from dialogbench.run.registry import open_lake
from dialogbench.run.registry import run_for
from dialogbench.run import registry
from dialogbench.run.config import ConfigError, FamilySection
from dialogbench.run.family_spec import Family
from dialogbench.run.preflight import SECRET_NOTE, check, lake_problem, lake_problems, preflight, run_folders, \
    secret_notes
from dialogbench.lake.version import FORMAT, MARKER
from tests.conftest import REPO_ROOT, chatbot, config_dict
from tests.disk import tmpfs
from tests.e2e.prefect_server import untouched

RAW = REPO_ROOT / "data_lake/raw"


def _broken_copy(source: Path, target: Path, line: int) -> Path:
    """``source`` with its ``line`` (1-based) cut in half: not JSON any more."""
    lines = source.read_text(encoding="utf-8").splitlines()
    lines[line - 1] = lines[line - 1][: len(lines[line - 1]) // 2]
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


# -- the lake ---------------------------------------------------------------------------------------------------

def test_lake_under_proc_is_not_writable():
    problem = lake_problem(open_lake("/proc/x"))
    assert problem and problem.startswith("lake: ") and "/proc/x" in problem


def test_lake_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "lake").write_text("not a directory")
    assert "lake" in (lake_problem(open_lake(tmp_path / "lake")) or "")


def test_missing_lake_is_tried_and_left_as_it_was(tmp_path):
    assert lake_problem(open_lake(tmp_path / "a" / "b" / "lake")) is None
    assert list(tmp_path.iterdir()) == []  # the probe's directories are gone again


def test_existing_lake_keeps_its_files(tmp_path):
    (tmp_path / "lake").mkdir()
    (tmp_path / "lake" / MARKER).write_text(json.dumps({"format": FORMAT}) + "\n")
    (tmp_path / "lake" / "kept.txt").write_text("x")
    assert lake_problem(open_lake(tmp_path / "lake")) is None
    assert sorted(p.name for p in (tmp_path / "lake").iterdir()) == ["kept.txt", MARKER]


def test_every_table_folder_a_run_writes_is_tried_and_left_as_it_was(tmp_path, make_config, lake_dir):
    config = make_config()
    folders = run_folders(run_for(config))
    for name in ("failures", "plans", "runs", "backend_calls", "generations", "unieval_judgments", "_state",
                 "reports"):
        assert name in folders
    assert "mtbench101_answers" not in folders  # not a family this config enables
    _marked(lake_dir)
    (lake_dir / "generations").mkdir(parents=True)
    (lake_dir / "generations" / "kept.txt").write_text("x")
    assert lake_problems(open_lake(lake_dir), folders) == []
    assert sorted(p.name for p in lake_dir.iterdir()) == ["generations", MARKER]  # the probes' folders are gone
    assert [p.name for p in (lake_dir / "generations").iterdir()] == ["kept.txt"]


def test_a_table_folder_that_cannot_be_written_is_named(tmp_path, make_config, lake_dir):
    _marked(lake_dir)
    (lake_dir / "runs").write_text("a file where the runs table's folder goes")
    with unwritable(lake_dir / "generations"):
        problems = lake_problems(open_lake(lake_dir), run_folders(run_for(make_config())))
    assert problems == [f"lake: cannot write in the table folder {lake_dir / 'runs'} (File exists)",
                        f"lake: cannot write in the table folder {lake_dir / 'generations'} ({WHY})"]


def _marked(lake_dir: Path) -> None:
    """``lake_dir`` made a lake (its marker): a folder without one that holds anything is not a lake at all."""
    lake_dir.mkdir(parents=True, exist_ok=True)
    (lake_dir / MARKER).write_text(json.dumps({"format": FORMAT}) + "\n")


def test_a_linked_table_folder_is_named(tmp_path, make_config, lake_dir):
    (tmp_path / "elsewhere").mkdir()
    lake_dir.mkdir()
    (lake_dir / "generations").symlink_to(tmp_path / "elsewhere")
    (problem,) = lake_problems(open_lake(lake_dir), run_folders(run_for(make_config())))
    assert problem.startswith(f"lake: {lake_dir / 'generations'} is a symbolic link")
    assert list((tmp_path / "elsewhere").iterdir()) == []  # never probed through the link


WHY = "Read-only file system" if os.geteuid() == 0 else "Permission denied"


@contextmanager
def unwritable(folder: Path):
    """``folder``, made so that nobody can write in it: for root (whom permissions do not stop) a read-only tmpfs
    mounted on it, else mode 0555."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield folder
        finally:
            folder.chmod(0o755)
        return
    with tmpfs(folder, "ro,size=64k", "root, and no read-only tmpfs to make an unwritable folder ({error})"):
        yield folder


# -- the datasets, each family's own check ----------------------------------------------------------------------

def test_a_bad_botchat_line_is_reported_with_file_and_line(tmp_path, make_config, lake_dir):
    bad = _broken_copy(RAW / "botchat/mutual_test.jsonl", tmp_path / "seeds.jsonl", 7)
    found = check(run_for(make_config(dataset=str(bad)), source="c.yaml"))
    assert len(found.inputs) == 1
    assert found.inputs[0].startswith("c.yaml: botchat.dataset: ") and f"{bad}:7: not valid JSON" in found.inputs[0]


def test_bad_unieval_examples_are_reported(tmp_path, make_config):
    bad = tmp_path / "examples.json"
    bad.write_text('[{"conv": "x"}]')
    (problem,) = check(run_for(make_config(unieval_examples=str(bad)))).inputs
    assert "botchat.unieval_examples" in problem and str(bad) in problem and "missing fields" in problem


def test_a_bad_mtbench101_line_is_reported(tmp_path, make_config, lake_dir):
    bad = _broken_copy(RAW / "mtbench101/mtbench101.jsonl", tmp_path / "mt.jsonl", 12)
    data = config_dict(lake_dir)
    data["mtbench101"] = {"dataset": str(bad), "limit": 1}
    (problem,) = check(run_for(make_config(data))).inputs
    assert problem.startswith("config: mtbench101.dataset: ") and f"{bad}:12: not valid JSON" in problem


def test_bad_gameeval_word_files_are_reported_for_the_games_that_are_on(tmp_path, make_config, lake_dir):
    words, pairs = tmp_path / "words.json", tmp_path / "pairs.txt"
    words.write_text('["apple", "apple"]')
    pairs.write_text("cat,dog\nsame,same\n")
    data = config_dict(lake_dir)
    data["gameeval"] = {"words": str(words), "word_pairs": str(pairs)}
    problems = check(run_for(make_config(data))).inputs
    assert any("gameeval.words" in p and "duplicate word 'apple'" in p for p in problems)
    assert any("gameeval.word_pairs" in p and f"{pairs}:2:" in p for p in problems)
    data["gameeval"]["spyfall"] = {"enabled": False}
    assert [p for p in check(run_for(make_config(data))).inputs if "word_pairs" in p] == []


def test_the_shipped_datasets_pass(make_config, lake_dir):
    data = config_dict(lake_dir)
    data.update(mtbench101={"limit": 1}, gameeval={})
    assert check(run_for(make_config(data))).inputs == []


def test_a_new_family_brings_its_own_data_check(make_config, lake_dir):
    class NoteSection(FamilySection):
        pass

    registry.register(Family(name="notes", title="Notes", section=NoteSection, stages=lambda config: [],
                             check_data=lambda config: ["notes.file: x.txt:3: unreadable"]))
    try:
        data = config_dict(lake_dir)
        data["notes"] = {}
        assert check(run_for(make_config(data), source="c.yaml")).inputs == ["c.yaml: notes.file: x.txt:3: unreadable"]
        data["notes"] = {"enabled": False}
        assert check(run_for(make_config(data))).inputs == []
    finally:
        registry.unregister("notes")


# -- endpoints, and all problems at once -------------------------------------------------------------------------

def test_openai_endpoint_without_url_is_a_problem_without_key_a_note(make_config, lake_dir, monkeypatch):
    monkeypatch.delenv("NO_SUCH_URL_VAR", raising=False)
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    data = config_dict(lake_dir)
    data["judges"] = [{"name": "judge", "backend": "openai", "weights": "m", "base_url_env": "NO_SUCH_URL_VAR",
                       "api_key_env": "NO_SUCH_KEY_VAR"}]
    found = check(run_for(make_config(data)))
    assert found.machine == ["config: model 'judge': base_url_env: environment variable NO_SUCH_URL_VAR is not set (or give the "
                             "endpoint's base_url in the model entry)"]
    assert len(found.notes) == 1 and "NO_SUCH_KEY_VAR" in found.notes[0] and "EMPTY" in found.notes[0]
    monkeypatch.setenv("NO_SUCH_URL_VAR", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("NO_SUCH_KEY_VAR", "k")
    assert check(run_for(make_config(data))) == type(found)()


def test_preflight_raises_every_problem_at_once(tmp_path, make_config, lake_dir, monkeypatch):
    monkeypatch.delenv("NO_SUCH_URL_VAR", raising=False)
    bad = _broken_copy(RAW / "botchat/mutual_test.jsonl", tmp_path / "seeds.jsonl", 2)
    data = config_dict(lake_dir, dataset=str(bad))
    data["lake"] = "/proc/x"
    data["judges"][0] = {"name": "judge", "backend": "openai", "weights": "m", "base_url_env": "NO_SUCH_URL_VAR"}
    with pytest.raises(ConfigError) as info:
        preflight(run_for(make_config(data), source="c.yaml"))
    lines = str(info.value).splitlines()
    assert lines[0].startswith("c.yaml: lake: cannot write in the lake directory /proc/x")
    assert any(f"{bad}:2: not valid JSON" in line for line in lines)
    assert any("NO_SUCH_URL_VAR" in line for line in lines)


# -- secrets written in the config: a note per field, what to do instead, never the value -------------------------

BASIC = base64.b64encode(b"alice:PLANTEDbasicPw42").decode()
PLANTED = ("PLANTEDurlPw42", "hf_PLANTEDhfToken0123456789", "PLANTEDenginePw42", "PLANTEDendpointKey42", BASIC,
           "ghp_" + "PLANTEDrevision" + "0" * 21, "PLANTEDreportPw42")


def _with_secrets(lake_dir: Path) -> dict:
    data = config_dict(lake_dir, models=[
        chatbot("bot-a"),
        chatbot("bot-b", weights=f"https://alice:{PLANTED[0]}@weights.example.com/m.gguf", revision=PLANTED[5],
                engine={"hf_token": PLANTED[1], "dtype": "auto", "auth": {"user": "alice", "password": PLANTED[2]},
                        "headers": ["X-Trace: 1", f"Authorization: Basic {BASIC}"]})])
    # an endpoint whose variables are set (PATH is, everywhere): its only finding is the key in its engine dict
    data["judges"][0] = {"name": "judge", "backend": "openai", "weights": "m", "base_url_env": "PATH",
                         "api_key_env": "PATH", "engine": {"api_key": PLANTED[3]}}
    data["report"] = {"url": f"http://reports:{PLANTED[6]}@gpu-box:8765"}
    return data


def test_each_secret_written_in_the_config_is_a_note_naming_its_field_and_what_to_do(make_config, lake_dir):
    notes = secret_notes(make_config(_with_secrets(lake_dir)), source="c.yaml")
    by_field = {note.split(": ")[1]: note for note in notes}
    assert list(by_field) == ["models[1].weights", "models[1].revision", "models[1].engine.hf_token",
                              "models[1].engine.auth", "models[1].engine.headers[1]", "judges[0].engine.api_key",
                              "report.url"]
    assert all(note.startswith(f"c.yaml: {field}: {SECRET_NOTE}; ") for field, note in by_field.items())
    assert "netrc" in by_field["models[1].weights"] and "netrc" in by_field["report.url"]  # URL passwords
    for engine_token in ("models[1].engine.hf_token", "models[1].engine.auth", "models[1].engine.headers[1]"):
        assert "name an environment variable instead (e.g. HF_TOKEN" in by_field[engine_token]
    assert "revision names a branch, tag or commit" in by_field["models[1].revision"]
    assert "api_key_env" in by_field["judges[0].engine.api_key"]  # an endpoint's key
    assert not [secret for secret in PLANTED for note in notes if secret in note]
    assert secret_notes(make_config(config_dict(lake_dir))) == []  # none for a config without secrets


def test_secret_notes_are_notes_of_check_and_preflight(make_config, lake_dir, caplog, monkeypatch):
    import dialogbench.run.preflight

    monkeypatch.setattr(dialogbench.run.preflight, "_NOTED", set())  # notes are logged once per process
    config = make_config(_with_secrets(lake_dir))
    found = check(run_for(config, source="c.yaml"))
    assert found.inputs == [] and found.machine == [] and len(found.notes) == 7
    preflight(run_for(config, source="c.yaml"))  # warns, raises nothing
    assert caplog.text.count(SECRET_NOTE) == 7 and not [s for s in PLANTED if s in caplog.text]


def test_secrets_under_the_common_names_and_in_odd_urls_are_noted(make_config, lake_dir):
    """Issue 32: these were stored redacted by nothing and noted by nothing."""
    odd = ("p/a#ss0042", "ghp_" + "PLANTEDuser0" * 3, "PLANTEDpwd42", "PLANTEDpg42", "PLANTEDocp42",
           "glpat-" + "PLANTEDgl42" * 2, "PLANTEDkey42")
    data = config_dict(lake_dir, models=[chatbot("bot-a", weights=f"postgresql://user:{odd[0]}@host/db",
                                                 revision=odd[5],
                                                 engine={"download": f"https://{odd[1]}@github.com/o/w.git",
                                                         "pwd": odd[2], "env": {"PGPASSWORD": odd[3]},
                                                         "headers": {"Ocp-Apim-Subscription-Key": odd[4]},
                                                         "mirror": f"https://m.example/w?key={odd[6]}"}),
                                         chatbot("bot-b")])
    notes = secret_notes(make_config(data), source="c.yaml")
    by_field = {note.split(": ")[1]: note for note in notes}
    assert list(by_field) == ["models[0].weights", "models[0].revision", "models[0].engine.download",
                              "models[0].engine.pwd", "models[0].engine.env.PGPASSWORD",
                              "models[0].engine.headers.Ocp-Apim-Subscription-Key", "models[0].engine.mirror"]
    assert "netrc" in by_field["models[0].weights"] and "netrc" in by_field["models[0].engine.download"]
    assert "out of the URL's query" in by_field["models[0].engine.mirror"]
    assert not [secret for secret in odd for note in notes if secret in note]


# -- the CLI, in a subprocess: exit 2, the file and line, no traceback, Prefect never started ---------------------

def cli_before_prefect(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    """``python -m dialogbench.cli`` in a subprocess, as ``tests/e2e``'s ``run_cli`` starts it (from the checkout,
    PREFECT_HOME under ``tmp_path``, no PREFECT_API_URL of the user's) but with no Prefect server and no seeded
    database: for a command expected to stop before Prefect starts."""
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect"), "PYTHONUNBUFFERED": "1"}
    env.pop("PREFECT_API_URL", None)
    return subprocess.run([sys.executable, "-m", "dialogbench.cli", *args], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def _write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _scripted(tmp_path: Path, **botchat) -> dict:
    data = config_dict(tmp_path / "lake", models=[chatbot("bot-a")], limit=1, n=[4], **botchat)
    data["botchat"].setdefault("dataset", str(RAW / "botchat/mutual_test.jsonl"))
    data["botchat"]["unieval_examples"] = str(RAW / "botchat/unieval_examples.json")
    return data


def _refused_before_prefect(result) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    for prefect_line in ("Starting temporary server", "Created flow run", "Beginning flow run", "flow run"):
        assert prefect_line not in result.stdout + result.stderr


@pytest.mark.parametrize("command", ["validate", "run"])
def test_cli_refuses_a_lake_under_proc(tmp_path, command):
    config = _write(tmp_path, {**_scripted(tmp_path), "lake": "/proc/x"})
    result = cli_before_prefect([command, "--config", str(config)], tmp_path)
    _refused_before_prefect(result)
    assert result.stderr.startswith("error: ")
    assert f"{config}: lake: cannot write in the lake directory /proc/x" in result.stderr
    assert "valid (" not in result.stdout


@pytest.mark.parametrize("command", ["validate", "run"])
def test_cli_refuses_a_dataset_with_a_malformed_line(tmp_path, command):
    bad = _broken_copy(RAW / "botchat/mutual_test.jsonl", tmp_path / "mutual_test.jsonl", 5)
    config = _write(tmp_path, _scripted(tmp_path, dataset=str(bad)))
    result = cli_before_prefect([command, "--config", str(config)], tmp_path)
    _refused_before_prefect(result)
    assert f"{config}: botchat.dataset: " in result.stderr and f"{bad}:5: not valid JSON" in result.stderr
    assert not (tmp_path / "lake").exists() and untouched(tmp_path / "prefect")  # no Prefect ran


def test_cli_validate_still_says_valid_for_a_good_config(tmp_path):
    result = cli_before_prefect(["validate", "--config", str(_write(tmp_path, _scripted(tmp_path)))], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "valid (1 model; families: botchat;" in result.stdout
    assert not (tmp_path / "lake").exists()  # validate leaves no trace


@pytest.mark.parametrize("command", ["validate", "run"])
def test_cli_names_an_unwritable_table_folder(tmp_path, command):
    config = _write(tmp_path, _scripted(tmp_path))
    (tmp_path / "lake").mkdir()  # a lake (its marker): a folder without one holding a table folder is refused sooner
    (tmp_path / "lake" / MARKER).write_text(json.dumps({"format": FORMAT}) + "\n")
    with unwritable(tmp_path / "lake" / "unieval_judgments") as folder:
        result = cli_before_prefect([command, "--config", str(config)], tmp_path)
    _refused_before_prefect(result)
    assert result.stderr == f"error: {config}: lake: cannot write in the table folder {folder} ({WHY})\n"


def test_cli_validate_notes_secrets_without_printing_them_and_keeps_its_exit_code(tmp_path):
    data = _scripted(tmp_path)
    data["models"][0]["engine"] = {"hf_token": PLANTED[1]}
    data["models"][0]["weights"] = f"https://alice:{PLANTED[0]}@weights.example.com/m.gguf"
    result = cli_before_prefect(["validate", "--config", str(_write(tmp_path, data))], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "valid (1 model; families: botchat;" in result.stdout
    notes = [line for line in result.stdout.splitlines() if SECRET_NOTE in line]
    assert [line.split(": ")[2] for line in notes] == ["models[0].weights", "models[0].engine.hf_token"]
    assert all(line.startswith("note: ") for line in notes)
    assert not [s for s in PLANTED if s in result.stdout + result.stderr]


def test_validate_and_preflight_name_a_folder_that_is_not_a_lake_and_write_nothing_in_it(tmp_path):
    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    (home / ".bashrc").write_text("alias ll='ls -l'\n")
    (home / "notes" / "draft.parquet.tmp").write_bytes(b"mine")
    before = sorted(p.relative_to(home) for p in home.rglob("*"))
    problems = lake_problems(open_lake(home))
    assert len(problems) == 1 and "not a dialogbench lake" in problems[0] and ".bashrc" in problems[0], problems
    assert sorted(p.relative_to(home) for p in home.rglob("*")) == before  # no probe, no marker, no lease
    assert lake_problems(open_lake(tmp_path / "new")) == [] and lake_problems(open_lake(home / "notes" / "missing")) == []
