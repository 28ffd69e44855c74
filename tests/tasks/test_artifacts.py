"""Prefect artifacts' keys and board (tasks/artifacts.py): every key is a valid Prefect key naming its board, two
boards never share one, a long board or stage still gives a short key, and an artifact finds its board (given, the
family subflow's config, else the run's ``board:`` tag)."""

from __future__ import annotations


def _valid(k: str) -> str:
    from prefect.types.names import raise_on_name_alphanumeric_dashes_only

    return raise_on_name_alphanumeric_dashes_only(k, field_name="Artifact key")


def test_artifact_keys_are_valid_prefect_keys_naming_their_board():
    from tasks.artifacts import key

    assert key("progress", "generate:SmolLM2_135m.v1", board="nightly") == \
        "dialogbench-nightly-progress-generate-smollm2-135m-v1"
    assert key("leaderboard", "gameeval", "askguess", board="nightly") == \
        "dialogbench-nightly-leaderboard-gameeval-askguess"
    assert key("leaderboard", "botchat", board="nightly") == "dialogbench-nightly-leaderboard-botchat"
    for k in (key("stages", board="nightly"), key("progress", "botchat_unieval", board="demo+limit=4+n=4,8"),
              key("report", "md", board="Demo.v2")):
        assert _valid(k) == k


def test_two_boards_never_share_an_artifact_key():
    """The UI's latest version of a key is one board's: an ad-hoc run's leaderboard is not the nightly's, nor are two
    boards' whose names differ only in what a key cannot hold (case, '.', '+', '=')."""
    from tasks.artifacts import key

    boards = ["nightly", "demo", "nightly+limit=4", "nightly-limit-4", "Nightly", "a.b", "a-b", "a_b",
              "demo+models=a_b", "demo+models=a-b", "x" * 100 + "1", "x" * 100 + "2"]
    for parts in (("stages",), ("leaderboard", "botchat"), ("report", "md"), ("progress", "generate:bot-a")):
        keys = [key(*parts, board=b) for b in boards]
        assert len(set(keys)) == len(boards), keys
        assert all(_valid(k) == k for k in keys)
    # a board named from overrides keeps its readable slug, then a hash of the name
    adhoc = key("leaderboard", "botchat", board="demo+limit=4")
    assert adhoc.startswith("dialogbench-demo-limit-4-") and adhoc.endswith("-leaderboard-botchat")
    assert adhoc != key("leaderboard", "botchat", board="demo")


def test_a_long_board_or_stage_still_gives_a_short_valid_key():
    from dialogbench.run.boards import check_name
    from tasks.artifacts import BOARD_KEY_CHARS, KEY_MAX_CHARS, board_slug, key

    longest = check_name("n" * 100, what="board")  # the longest board a person may name
    adhoc = check_name("nightly+models=" + ",".join(f"Model_{i}.v1" for i in range(30)), what="b", adhoc=True)
    assert len(adhoc) > 300
    for board in (longest, adhoc, longest[:-1] + "m"):
        assert len(board_slug(board)) <= BOARD_KEY_CHARS and _valid(board_slug(board)) == board_slug(board)
        for parts in (("leaderboard", "gameeval", "tofukingdom"), ("progress", "generate:" + "Very_Long_Model" * 20)):
            k = key(*parts, board=board)
            assert len(k) <= KEY_MAX_CHARS and _valid(k) == k and k.startswith("dialogbench-n")
    assert board_slug(longest) != board_slug(longest[:-1] + "m")  # cut, yet told apart by their hash
    stage = "generate:" + "Very_Long_Model" * 20
    assert key("progress", stage, board="nightly") != key("progress", stage + "2", board="nightly")
    assert key("leaderboard", "botchat", board=adhoc).startswith("dialogbench-nightly-models-model-0-v1")


def test_the_board_of_a_published_artifact(monkeypatch):
    """Where the artifacts find their board: given, else the family subflow's config parameter, else the run's
    ``board:`` tag in force (the pipeline publishes inside ``prefect.tags(*run_tags)``)."""
    from types import SimpleNamespace

    from prefect import tags

    import tasks.artifacts as artifacts

    made: list[dict] = []
    monkeypatch.setattr(artifacts, "create_table_artifact", lambda **kwargs: made.append(kwargs))
    with tags("config:demo", "board:demo+limit=4", "family:botchat"):
        assert artifacts.run_board() == "demo+limit=4" and artifacts.run_board("nightly") == "nightly"
        artifacts.publish_stages("r1", [])
        artifacts.publish_leaderboards("r1", {"botchat": []}, board="nightly")
    assert [m["key"] for m in made] == [artifacts.key("stages", board="demo+limit=4"),
                                        "dialogbench-nightly-leaderboard-botchat"]
    family_run = SimpleNamespace(parameters={"run": SimpleNamespace(board="nightly")},
                                 flow_run=SimpleNamespace(tags=["board:other"]))
    monkeypatch.setattr(artifacts.FlowRunContext, "get", classmethod(lambda cls: family_run))
    assert artifacts.run_board() == "nightly"
    family_run.parameters = {"config_path": "configs/nightly.yaml"}  # the pipeline's flow run: its own tag
    assert artifacts.run_board() == "other"
    monkeypatch.setattr(artifacts.FlowRunContext, "get", classmethod(lambda cls: None))
    assert artifacts.run_board() is None and artifacts.key("stages", board=None) == "dialogbench-stages"
