"""``dialogbench.run.tracking``: a run's results logged to MLflow or W&B when ``tracking.to`` asks, off by default.

Neither package is a dependency (nor installed where these tests run), so each test puts a recording fake of the
module into ``sys.modules``: it implements exactly the API subset tracking calls, with the real signatures
(keyword names as in mlflow/tracking/fluent.py and wandb's ``init`` / ``Run`` / ``Artifact``), and refuses what the
real one refuses (MLflow's metric-name rule, W&B's sortable names, a run that was not started). The results are
``collect_results``'s of a small lake with every protocol (tests/report/paper_lake.py): three models, a headline with
bootstrap intervals for GTEval, and the Arena judge refused by its judge checks (Elo not measured)."""

from __future__ import annotations

import datetime as dt
import importlib.abc
import json
import logging
import posixpath
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from dialogbench.run.config import ConfigError, TrackingConfig
from dialogbench.history.tables import JUDGE_FINDINGS_TABLE, METRIC_SNAPSHOTS_TABLE
from dialogbench.lake.catalog import connect
from dialogbench.run.registry import load_config
from dialogbench.report.publish import publish_reports, run_folder
from dialogbench.report.results import collect_results
from dialogbench.run.tracking import (TrackerNotInstalled, flatten, load_tracker, log_run, metric_names, params,
                                  track)
from dialogbench.run import registry
from tests.conftest import REPO_ROOT, config_dict
from tests.report.paper_lake import paper_lake

MODELS = ["m-a", "m-b", "m-c"]
BOARD = "bench"  # the paper lake's runs ran bench.yaml
SNAP = "snap-1"
AT = dt.datetime(2026, 11, 21, tzinfo=dt.timezone.utc)
JUDGE = "gpt-4-0613"  # BotChat's judge in the paper lake
WHY = "the judge could not read 40% of its Arena verdicts"
ARTIFACTS = ("results.json", "report.html", "report.md")
MLFLOW_NAME = re.compile(r"^[/\w.\- ]*$")  # mlflow/utils/validation.py: _VALID_PARAM_AND_METRIC_NAMES
WANDB_PART = re.compile(r"^[_a-zA-Z][_a-zA-Z0-9]*$")  # W&B's sortable metric names, per "/"-separated part


# ---- recording fakes of the two trackers ----

class FakeMlflow(types.ModuleType):
    """``mlflow``'s fluent API as tracking uses it; every call recorded in ``calls``; ``fail``: a call name that
    raises (a server that went away)."""

    def __init__(self, fail: str | None = None) -> None:
        super().__init__("mlflow")
        self.calls: list[tuple[str, object]] = []
        self.runs: list[dict] = []
        self.active: dict | None = None
        self.experiment: str | None = None
        self.fail = fail

    def _call(self, name: str, payload: object) -> None:
        self.calls.append((name, payload))
        if self.fail == name:
            raise RuntimeError("connection refused by https://tracker:s3cretPassw0rd@mlflow.example:5000")

    def _run(self) -> dict:
        assert self.active is not None, "logged outside a started run (the real one would start one silently)"
        return self.active

    @staticmethod
    def _check_name(name: str) -> None:
        norm = posixpath.normpath(name)
        assert MLFLOW_NAME.match(name), name
        assert not (norm != name or norm == "." or norm.startswith("..") or norm.startswith("/")), name
        assert len(name) <= 250, name

    def set_experiment(self, experiment_name=None, experiment_id=None):
        self._call("set_experiment", experiment_name)
        self.experiment = experiment_name
        return types.SimpleNamespace(experiment_id="1", name=experiment_name)

    def start_run(self, run_id=None, experiment_id=None, run_name=None, nested=False, tags=None, description=None,
                  log_system_metrics=None):
        self._call("start_run", run_name)
        assert self.active is None or nested, "a run is already active"
        fake = self

        class ActiveRun:
            info = types.SimpleNamespace(run_id=f"mlflow-run-{len(fake.runs)}")

            def __enter__(self):
                return self

            def __exit__(self, exc_type, exc, tb):
                fake.active["status"] = "FINISHED" if exc_type is None else "FAILED"
                fake.active = None
                return exc_type is None

        self.active = {"experiment": self.experiment, "run_name": run_name, "tags": {}, "params": {}, "metrics": {},
                       "artifacts": {}, "status": "RUNNING"}
        self.runs.append(self.active)
        return ActiveRun()

    def set_tags(self, tags, synchronous=None):
        self._call("set_tags", tags)
        for key, value in tags.items():
            self._check_name(key)
            self._run()["tags"][key] = str(value)

    def log_params(self, params, synchronous=None):
        self._call("log_params", params)
        for key, value in params.items():
            self._check_name(key)
            assert len(str(value)) <= 500, key
            assert key not in self._run()["params"], f"param {key} logged twice"
            self._run()["params"][key] = str(value)

    def log_metrics(self, metrics, step=None, synchronous=None, run_id=None, timestamp=None):
        self._call("log_metrics", metrics)
        for key, value in metrics.items():
            self._check_name(key)
            assert not isinstance(value, bool) and isinstance(value, (int, float)), (key, value)
            self._run()["metrics"][key] = value

    def log_artifact(self, local_path, artifact_path=None, run_id=None):
        self._call("log_artifact", local_path)
        path = Path(local_path)
        self._run()["artifacts"][path.name] = path.read_bytes()


class FakeWandb(types.ModuleType):
    """``wandb`` as tracking uses it: ``init`` returning a run, ``Artifact``; every call recorded."""

    def __init__(self, fail: str | None = None) -> None:
        super().__init__("wandb")
        self.calls: list[tuple[str, object]] = []
        self.runs: list[FakeWandb.Run] = []
        self.fail = fail
        fake = self

        class Artifact:
            def __init__(self, name, type, description=None, metadata=None, incremental=False, use_as=None):
                fake._call("Artifact", (name, type))
                assert re.fullmatch(r"[A-Za-z0-9_.-]+", name) and len(name) <= 128, name
                assert re.fullmatch(r"[A-Za-z0-9_.-]+", type) and not type.startswith("wandb-"), type
                self.name, self.type, self.files = name, type, {}

            def add_file(self, local_path, name=None, is_tmp=False, skip_cache=False, policy="mutable",
                         overwrite=False):
                fake._call("add_file", local_path)
                path = Path(local_path)
                self.files[name or path.name] = path.read_bytes()

        self.Artifact = Artifact

    def _call(self, name: str, payload: object) -> None:
        self.calls.append((name, payload))
        if self.fail == name:
            raise RuntimeError("wandb: 401 for key " + "x" * 40)

    class Run:
        def __init__(self, fake: "FakeWandb", **kwargs) -> None:
            self.fake, self.init, self.id = fake, kwargs, f"wandb-run-{len(fake.runs)}"
            self.history: list[dict] = []
            self.summary: dict = {}
            self.artifacts: list = []
            self.exit_code: int | None = None
            self.finished = False

        def log(self, data, step=None, commit=None):
            assert not self.finished
            self.fake._call("log", data)
            lowered = set()
            for key, value in data.items():
                assert all(WANDB_PART.match(part) for part in key.split("/")), key
                assert key.lower() not in lowered, f"{key}: W&B's names are case-insensitive"
                lowered.add(key.lower())
                assert not isinstance(value, bool) and isinstance(value, (int, float)), (key, value)
            self.history.append(dict(data))
            self.summary.update(data)

        def log_artifact(self, artifact_or_path, name=None, type=None, aliases=None, tags=None):
            assert not self.finished
            self.fake._call("log_artifact", artifact_or_path)
            self.artifacts.append(artifact_or_path)

        def finish(self, exit_code=None, quiet=None):
            self.fake._call("finish", exit_code)
            self.finished, self.exit_code = True, exit_code

    def init(self, entity=None, project=None, dir=None, id=None, name=None, notes=None, tags=None, config=None,
             config_exclude_keys=None, config_include_keys=None, allow_val_change=None, group=None, job_type=None,
             mode=None, force=None, anonymous=None, reinit=None, resume=None, resume_from=None, fork_from=None,
             save_code=None, tensorboard=None, sync_tensorboard=None, monitor_gym=None, settings=None):
        self._call("init", project)
        assert reinit in (None, "default", "return_previous", "finish_previous", "create_new")
        assert all(len(t) <= 64 for t in tags or []), tags
        run = FakeWandb.Run(self, project=project, name=name, tags=tags, config=config, job_type=job_type,
                            reinit=reinit)
        self.runs.append(run)
        return run


# ---- fixtures ----

@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    """Every protocol for three models on board ``bench``; its latest run's snapshot gives GTEval bootstrap intervals
    (``headline``), and its judge checks refused the Arena judge (``botchat_elo.measured`` false)."""
    lake = paper_lake(tmp_path_factory.mktemp("tracking") / "lake", models=MODELS)
    with connect(lake) as con:
        gteval = con.execute("select model, win_tie_rate from botchat_gteval").fetchall()
    METRIC_SNAPSHOTS_TABLE.write(lake, [
        {"run_id": SNAP, "created_at": AT, "board": BOARD, "family": "botchat", "leaderboard": "botchat_gteval",
         "metric": "win_tie_rate", "model": model, "slice": f"judge={JUDGE}", "judge": JUDGE, "value": rate,
         "ci_low": rate - 0.125, "ci_high": min(1.0, rate + 0.0625), "n": 12, "measured": True, "complete": True,
         "rank": i + 1, "rank_low": 1, "rank_high": 3}
        for i, (model, rate) in enumerate(sorted(gteval, key=lambda r: -r[1]))])
    JUDGE_FINDINGS_TABLE.write(lake, [{"run_id": SNAP, "created_at": AT, "board": BOARD, "judge": JUDGE,
                                       "protocol": "botchat_arena", "check": "unparsed", "reason": WHY}])
    return lake


@pytest.fixture(scope="module")
def results(lake) -> dict:
    return collect_results(lake, BOARD, families=registry.families())


@pytest.fixture
def report_folder(tmp_path, results) -> Path:
    """A run's report folder as publish leaves it (the report files' contents do not matter here)."""
    folder = tmp_path / "runs" / "run-0001"
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")
    (folder / "report.html").write_text("<html>report</html>", encoding="utf-8")
    (folder / "report.md").write_text("# report\n", encoding="utf-8")
    return folder


@pytest.fixture
def fake_mlflow(monkeypatch) -> FakeMlflow:
    fake = FakeMlflow()
    monkeypatch.setitem(sys.modules, "mlflow", fake)
    return fake


@pytest.fixture
def fake_wandb(monkeypatch) -> FakeWandb:
    fake = FakeWandb()
    monkeypatch.setitem(sys.modules, "wandb", fake)
    return fake


def expected_numbers(results: dict) -> dict[str, float]:
    """The numbers tracking should log, spelled out here view by view (not with tracking's own code)."""
    boards, out = results["leaderboards"], {}
    for row in boards["botchat/botchat_gteval"]["rows"]:
        base = f"botchat/botchat_gteval/{row['model']}/judge={row['judge']}/win_tie_rate"
        out[base] = row["win_tie_rate"]
        out[base + "_ci_low"], out[base + "_ci_high"] = row["win_tie_ci_low"], row["win_tie_ci_high"]
    for row in boards["botchat/botchat_unieval"]["rows"]:
        base = f"botchat/botchat_unieval/{row['model']}/judge={row['judge']},n={row['n']}/pass_rate"
        out[base] = row["pass_rate"]
        out[base + "_ci_low"], out[base + "_ci_high"] = row["pass_ci_low"], row["pass_ci_high"]
    for row in boards["mtbench101/mtbench101_tasks"]["rows"]:
        out[f"mtbench101/mtbench101_tasks/{row['model']}/judge={row['judge']},task={row['task']}/score"] = row["score"]
    for row in boards["gameeval/gameeval_spyfall"]["rows"]:
        base = f"gameeval/gameeval_spyfall/{row['spy_model']}/villager_model={row['villager_model']}"
        out[base + "/spy_win_rate"] = row["spy_win_rate"]
        out[base + "/spy_living_rounds"] = row["spy_living_rounds"]
    for row in boards["core/headline"]["rows"]:
        base = f"core/headline/{row['model']}/{row['slice']}/{row['leaderboard']}.{row['metric']}"
        out[base], out[base + "_ci_low"], out[base + "_ci_high"] = row["value"], row["ci_low"], row["ci_high"]
    return {k: float(v) for k, v in out.items() if v is not None}


# ---- what is logged ----

def test_every_measured_number_is_flattened_with_its_interval(results):
    metrics, skipped = flatten(results, families=registry.families())
    expected = expected_numbers(results)
    assert expected.items() <= metrics.items()
    headline = [k for k in metrics if k.startswith("core/headline/")]
    assert len(headline) == 9  # three models' GTEval win + tie rate, each with its bootstrap interval
    assert metrics[f"core/headline/m-a/judge={JUDGE}/botchat_gteval.win_tie_rate_ci_low"] == \
        pytest.approx(metrics[f"core/headline/m-a/judge={JUDGE}/botchat_gteval.win_tie_rate"] - 0.125)
    # the other declared metrics are there too, each leaderboard's
    for prefix in ("botchat/botchat_unieval_gt/", "mtbench101/mtbench101_leaderboard/", "gameeval/gameeval_askguess/"):
        assert any(k.startswith(prefix) for k in metrics), prefix
    # only the leaderboards' numbers: no cell counts, no flags
    assert not [k for k in metrics if k.rsplit("/", 1)[1] in ("dialogues", "passed", "games", "measured", "n")]
    assert all(isinstance(v, float) for v in metrics.values())
    assert skipped["undeclared"] == 0 and skipped["duplicate"] == 0


def test_a_number_not_measured_is_never_logged(results):
    elo = results["leaderboards"]["botchat/botchat_elo"]["rows"]
    assert elo and all(r["measured"] is False and r["elo"] is not None for r in elo)  # refused, yet a number
    metrics, skipped = flatten(results, families=registry.families())
    assert not [k for k in metrics if k.startswith("botchat/botchat_elo/")]
    assert skipped["not_measured"] == 6 * 6  # 6 rows, Elo and Bradley-Terry, each with its interval
    # a headline row not measured: its raw value is not logged either
    refused = json.loads(json.dumps(results))
    row = refused["leaderboards"]["core/headline"]["rows"][0]
    row.update(measured=False, value=None, ci_low=None, ci_high=None, raw_value=0.5, raw_ci_low=0.4, raw_ci_high=0.6)
    after, _ = flatten(refused, families=registry.families())
    assert not [k for k in after if k.startswith(f"core/headline/{row['model']}/")]


def test_params_are_the_provenance():
    found = params({"board": "nightly", "run_id": "r1", "provenance": {
        "run_id": "r1", "config": "configs/nightly.yaml", "config_fp": "abc", "models": ["m-a", "m-b"],
        "judges": ["gpt-4"], "versions": {"duckdb": "1.1.0"}, "host": None, "failed": None, "dialogbench": "0.1.0"}})
    assert found == {"board": "nightly", "run_id": "r1", "config": "configs/nightly.yaml", "config_fp": "abc",
                     "models": "m-a, m-b", "judges": "gpt-4", "versions.duckdb": "1.1.0", "dialogbench": "0.1.0"}


def test_names_are_made_what_each_tracker_takes():
    names = ["botchat/botchat_unieval/m-a/judge=gpt-4-0613,n=8/pass_rate",
             "x/y/Vicuna-7B-v1.5/../score", "x/y/1.5b-chat/score",
             "x/y/M-A/score", "x/y/m-a/score",  # one name to W&B, which ignores case
             "x/y/a b/score", "x/y/a_b/score",  # one name once a space is made "_"
             "x/" + "long" * 80 + "/score"]
    mlflow, wandb = metric_names(names, "mlflow"), metric_names(names, "wandb")
    assert mlflow[names[0]] == "botchat/botchat_unieval/m-a/judge_gpt-4-0613.n_8/pass_rate"
    assert wandb[names[0]] == "botchat/botchat_unieval/m_a/judge_gpt_4_0613_n_8/pass_rate"
    assert mlflow[names[1]] == "x/y/Vicuna-7B-v1.5/_/score"
    assert wandb[names[2]] == "x/y/_1_5b_chat/score"
    for mapping, fold in ((mlflow, str), (wandb, str.lower)):
        assert len({fold(v) for v in mapping.values()}) == len(names)  # none overwrites another
        assert all(len(v) <= 250 for v in mapping.values())
    assert mlflow["x/y/M-A/score"] == "x/y/M-A/score" and mlflow["x/y/m-a/score"] == "x/y/m-a/score"
    assert wandb["x/y/M-A/score"] != wandb["x/y/m-a/score"]
    for name in mlflow.values():
        FakeMlflow._check_name(name)
    assert all(all(WANDB_PART.match(p) for p in v.split("/")) for v in wandb.values())
    # the same name gets the same suffix every run (a series stays one series)
    assert metric_names(names, "wandb") == wandb


# ---- the two trackers ----

def test_mlflow_logs_one_run_with_the_numbers_the_provenance_and_the_report(fake_mlflow, results, report_folder):
    done = log_run(results, to="mlflow", experiment="bench-exp", run_name="bench/run-0001",
                   artifacts=[report_folder / n for n in ARTIFACTS], families=registry.families())
    assert [c[0] for c in fake_mlflow.calls][:4] == ["set_experiment", "start_run", "set_tags", "log_params"]
    [run] = fake_mlflow.runs
    assert run["experiment"] == "bench-exp" and run["run_name"] == "bench/run-0001" and run["status"] == "FINISHED"
    raw, _ = flatten(results, families=registry.families())
    names = metric_names(raw, "mlflow")
    assert run["metrics"] == {names[k]: v for k, v in raw.items()}
    gteval = results["leaderboards"]["botchat/botchat_gteval"]["rows"][0]
    assert run["metrics"][f"botchat/botchat_gteval/{gteval['model']}/judge_{JUDGE}/win_tie_rate"] == \
        gteval["win_tie_rate"]
    assert run["tags"]["dialogbench.board"] == BOARD and run["tags"]["dialogbench.version"]
    assert run["tags"]["dialogbench.run_id"] == results["run_id"]
    assert run["params"]["models"] == ", ".join(MODELS) and run["params"]["board"] == BOARD
    assert run["artifacts"] == {n: (report_folder / n).read_bytes() for n in ARTIFACTS}
    assert done["metrics"] == len(raw) and done["artifacts"] == list(ARTIFACTS) and done["run_id"] == "mlflow-run-0"


def test_wandb_logs_one_run_with_the_numbers_the_provenance_and_the_report(fake_wandb, results, report_folder):
    done = log_run(results, to="wandb", experiment="bench-project", run_name="bench/run-0001",
                   artifacts=[report_folder / n for n in ARTIFACTS], families=registry.families())
    [run] = fake_wandb.runs
    assert run.init["project"] == "bench-project" and run.init["name"] == "bench/run-0001"
    assert run.init["reinit"] == "create_new" and run.init["tags"] == [BOARD]
    assert run.init["config"]["models"] == ", ".join(MODELS) and run.init["config"]["board"] == BOARD
    raw, _ = flatten(results, families=registry.families())
    names = metric_names(raw, "wandb")
    assert run.history == [{names[k]: v for k, v in raw.items()}]  # one step: the summary holds every number
    gteval = results["leaderboards"]["botchat/botchat_gteval"]["rows"][0]
    model = gteval["model"].replace("-", "_")
    assert run.summary[f"botchat/botchat_gteval/{model}/judge_gpt_4_0613/win_tie_rate"] == gteval["win_tie_rate"]
    [artifact] = run.artifacts
    assert artifact.name == "dialogbench-report-bench" and artifact.type == "dialogbench-report"
    assert artifact.files == {n: (report_folder / n).read_bytes() for n in ARTIFACTS}
    assert run.finished and run.exit_code is None
    assert done["run_id"] == "wandb-run-0" and done["metrics"] == len(raw)


def test_a_wandb_failure_still_finishes_its_run_as_failed(monkeypatch, results, report_folder):
    fake = FakeWandb(fail="log_artifact")
    monkeypatch.setitem(sys.modules, "wandb", fake)
    with pytest.raises(RuntimeError):
        log_run(results, to="wandb", experiment="p", run_name="r", artifacts=[report_folder / "results.json"],
                families=registry.families())
    assert fake.runs[0].finished and fake.runs[0].exit_code == 1


@pytest.mark.parametrize("to", ["mlflow", "wandb"])
def test_a_missing_package_names_the_pip_command(monkeypatch, to, results, report_folder, caplog):
    monkeypatch.setitem(sys.modules, to, None)  # as if not installed, even where it is
    with pytest.raises(TrackerNotInstalled, match=re.escape(f"`pip install {to}`")):
        load_tracker(to)
    with pytest.raises(TrackerNotInstalled, match=f"the {to} package is not installed"):
        log_run(results, to=to, experiment="e", run_name="r", artifacts=[], families=registry.families())
    # as a run meets it: a warning and a line, no exception
    with caplog.at_level(logging.WARNING, logger="dialogbench.tracking"):
        line = track(TrackingConfig(to=to), report_folder, run_id="run-0001", board=BOARD, families=registry.families())
    assert f"pip install {to}" in line and "not logged" in line
    assert [r for r in caplog.records if r.levelno == logging.WARNING and f"pip install {to}" in r.getMessage()]


# ---- config ----

def test_tracking_is_off_by_default(make_config):
    assert TrackingConfig().to is None and TrackingConfig().experiment == "dialogbench"
    config = make_config()
    assert config.tracking.to is None
    assert track(config.tracking, Path("/nonexistent"), run_id="r", board="b", families=registry.families()) is None


def test_the_tracking_section_parses(config_file, lake_dir):
    data = config_dict(lake_dir)
    data["tracking"] = {"to": "mlflow"}
    config = load_config(config_file(data), root=REPO_ROOT)
    assert config.tracking.to == "mlflow" and config.tracking.experiment == "dialogbench"
    data["tracking"] = {"to": "wandb", "experiment": "my-project"}
    config = load_config(config_file(data), root=REPO_ROOT)
    assert (config.tracking.to, config.tracking.experiment) == ("wandb", "my-project")


@pytest.mark.parametrize("section, words", [
    ({"to": "neptune"}, ["tracking.to", "'mlflow'", "'wandb'"]),
    ({"to": "mlflow", "api_key": "secret-key-1234"}, ["tracking.api_key", "unknown key"]),
    ({"to": "mlflow", "experiment": ""}, ["tracking.experiment"]),
], ids=["unknown_tracker", "no_secret_in_config", "empty_experiment"])
def test_a_bad_tracking_section_is_named(config_file, lake_dir, section, words):
    data = config_dict(lake_dir)
    data["tracking"] = section
    path = config_file(data)
    with pytest.raises(ConfigError) as info:
        load_config(path, root=REPO_ROOT)
    message = str(info.value)
    assert str(path) in message
    for word in words:
        assert word in message, message


# ---- the hook in publish ----

@pytest.fixture
def quick_pages(monkeypatch):
    """publish with small stand-ins for the rendered report and explorer (tests/report renders them; here only what
    publish does around them matters); results.json is publish's own."""
    def report(lake, folder, **kwargs):
        folder.mkdir(parents=True, exist_ok=True)
        paths = {"html": folder / "report.html", "md": folder / "report.md"}
        paths["html"].write_text(f"<html>{folder.name}</html>", encoding="utf-8")
        paths["md"].write_text(f"# {folder.name}\n", encoding="utf-8")
        return paths

    def explorer(lake, folder, **kwargs):
        (folder / "explorer.html").write_text("<html>explorer</html>", encoding="utf-8")
        return folder / "explorer.html"

    monkeypatch.setattr("dialogbench.report.publish.write_report", report)
    monkeypatch.setattr("dialogbench.report.publish.write_explorer", explorer)


class _Recorder(importlib.abc.MetaPathFinder):
    """Records every attempt to import a tracker's package (and lets it fail as if not installed)."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("mlflow", "wandb"):
            self.seen.append(name)
        return None


def test_importing_dialogbench_imports_no_tracker():
    """Neither publish nor tracking imports a tracker when loaded (a fresh interpreter: this one has them loaded)."""
    code = ("import sys\n"
            "class Recorder:\n"
            "    seen = []\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in ('mlflow', 'wandb'):\n"
            "            self.seen.append(name)\n"
            "sys.meta_path.insert(0, Recorder())\n"
            "import dialogbench.report.publish, dialogbench.run.tracking, dialogbench.run.config\n"
            "print(Recorder.seen, 'mlflow' in sys.modules, 'wandb' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] False False"


@pytest.mark.parametrize("tracking", [None, TrackingConfig()], ids=["no_section", "default_section"])
def test_publish_without_tracking_imports_no_tracker(monkeypatch, lake, quick_pages, tracking):
    recorder = _Recorder()
    monkeypatch.delitem(sys.modules, "mlflow", raising=False)
    monkeypatch.delitem(sys.modules, "wandb", raising=False)
    monkeypatch.setattr(sys, "meta_path", [recorder, *sys.meta_path])
    paths = publish_reports(lake, run_id="run-off", board=BOARD, config_path="bench.yaml", tracking=tracking,
                            families=registry.families())
    assert "tracking" not in paths and Path(paths["results"]).is_file()
    assert recorder.seen == [] and "mlflow" not in sys.modules and "wandb" not in sys.modules


def test_publish_logs_the_run_to_the_tracker_the_config_names(fake_mlflow, lake, quick_pages):
    paths = publish_reports(lake, run_id="run-on", board=BOARD, config_path="bench.yaml",
                            tracking=TrackingConfig(to="mlflow", experiment="nightly"), families=registry.families())
    folder = run_folder(lake, "run-on")
    [run] = fake_mlflow.runs
    assert run["run_name"] == f"{BOARD}/run-on" and run["experiment"] == "nightly" and run["status"] == "FINISHED"
    assert run["artifacts"] == {n: (folder / n).read_bytes() for n in ARTIFACTS}  # the files publish wrote
    assert run["tags"]["dialogbench.run_id"] == "run-on"
    assert paths["tracking"].startswith(f"mlflow: logged run {BOARD}/run-on (its run mlflow-run-0) to 'nightly'")


def test_a_tracker_failing_loses_no_result(monkeypatch, lake, quick_pages, caplog):
    fake = FakeMlflow(fail="log_metrics")  # the server went away mid-run
    monkeypatch.setitem(sys.modules, "mlflow", fake)
    with caplog.at_level(logging.WARNING, logger="dialogbench.tracking"):
        paths = publish_reports(lake, run_id="run-down", board=BOARD, config_path="bench.yaml",
                                tracking=TrackingConfig(to="mlflow"), families=registry.families())
    folder = run_folder(lake, "run-down")
    written = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    assert paths["results"] == str(folder / "results.json") and written["run_id"] == "run-down"
    assert written["leaderboards"] == collect_results(lake, BOARD, families=registry.families())["leaderboards"]
    assert (folder / "report.html").is_file() and Path(paths["board"], "results.json").is_file()
    assert fake.runs[0]["status"] == "FAILED"  # the tracker's run says so too
    line = paths["tracking"]
    assert line.startswith("mlflow: not logged (RuntimeError: connection refused") and str(folder) in line
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [f"tracking: {line}"]
    assert "s3cretPassw0rd" not in line  # a URL's password is redacted
