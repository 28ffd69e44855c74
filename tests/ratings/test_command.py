"""Reading comparisons (errors name file/row/column), win/tie counts, and the ``elo`` subcommand."""

from __future__ import annotations

import argparse
import json

import numpy as np
import polars as pl
import pytest

from dialogbench.ratings.command import add_elo_parser, run_elo_command
from dialogbench.ratings.games import ComparisonsError, Games, read_comparisons, win_rates

ROWS = [  # model_a, model_b, winner
    ("gpt", "llama", "model_a"),
    ("llama", "gpt", "model_b"),
    ("gpt", "llama", "tie"),
    ("llama", "gpt", "llama"),
    ("gpt", "vicuna", "gpt"),
    ("vicuna", "gpt", "tie"),
    ("vicuna", "llama", "model_a"),
    ("llama", "vicuna", "model_b"),
]


def write_csv(path, rows, header="model_a,model_b,winner"):
    path.write_text(header + "\n" + "".join(",".join(r) + "\n" for r in rows))
    return path


def parse(argv):
    parser = argparse.ArgumentParser(prog="dialogbench")
    add_elo_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


# ------------------------------------------------------------------------------------------ games

def test_from_records_scores_and_models():
    g = Games.from_records(*zip(*ROWS))
    assert g.models == ["gpt", "llama", "vicuna"]
    np.testing.assert_array_equal(g.a, [0, 1, 0, 1, 0, 2, 2, 1])
    np.testing.assert_array_equal(g.b, [1, 0, 1, 0, 2, 0, 1, 2])
    np.testing.assert_array_equal(g.score, [1, 0, 0.5, 1, 1, 0.5, 1, 0])
    np.testing.assert_array_equal(g.games_per_model(), [6, 6, 4])


@pytest.mark.parametrize("winner", ["", None, "  ", "both", "model_c", "vicuna"])
def test_from_records_bad_winner_names_row(winner):
    with pytest.raises(ValueError, match=r"row 1, column 'winner'"):
        Games.from_records(["gpt", "gpt"], ["llama", "llama"], ["tie", winner])


def test_from_records_bad_models():
    with pytest.raises(ComparisonsError, match=r"row 0, column 'model_b'"):
        Games.from_records(["gpt"], [""], ["tie"])
    with pytest.raises(ComparisonsError, match=r"row 0.*cannot play itself"):
        Games.from_records(["gpt"], ["gpt"], ["tie"])


def test_win_rates_by_hand():
    g = Games.from_records(*zip(*ROWS))
    pairs = {(r["model_a"], r["model_b"]): r for r in win_rates(g).to_dicts()}
    # gpt vs llama, both seats merged: gpt won rows 0 and 1, tie row 2, llama won row 3.
    assert pairs["gpt", "llama"] == {"model_a": "gpt", "model_b": "llama", "games": 4, "wins_a": 2,
                                     "wins_b": 1, "ties": 1, "win_rate": 0.5, "tie_rate": 0.25}
    # gpt vs vicuna: gpt won row 4, tie row 5.
    assert (pairs["gpt", "vicuna"]["wins_a"], pairs["gpt", "vicuna"]["ties"]) == (1, 1)
    # llama vs vicuna: vicuna won both (rows 6, 7).
    assert pairs["llama", "vicuna"]["wins_b"] == 2 and pairs["llama", "vicuna"]["win_rate"] == 0.0
    ordered = {(r["model_a"], r["model_b"]): r for r in win_rates(g, ordered=True).to_dicts()}
    # As seated: gpt (seat a) vs llama: rows 0 (a wins) and 2 (tie); llama (seat a) vs gpt: rows 1, 3.
    assert (ordered["gpt", "llama"]["wins_a"], ordered["gpt", "llama"]["ties"]) == (1, 1)
    assert (ordered["llama", "gpt"]["wins_a"], ordered["llama", "gpt"]["wins_b"]) == (1, 1)
    assert sum(r["games"] for r in ordered.values()) == len(ROWS)


# ------------------------------------------------------------------------------------------ files

def test_read_csv_and_parquet(tmp_path):
    csv = write_csv(tmp_path / "c.csv", ROWS)
    parquet = tmp_path / "c.parquet"
    pl.DataFrame({"model_a": [r[0] for r in ROWS], "model_b": [r[1] for r in ROWS],
                  "winner": [r[2] for r in ROWS], "judge": ["j"] * len(ROWS)}).write_parquet(parquet)
    for path in (csv, parquet):
        g = read_comparisons(path)
        np.testing.assert_array_equal(g.score, [1, 0, 0.5, 1, 1, 0.5, 1, 0])


def test_read_missing_column_names_file(tmp_path):
    path = write_csv(tmp_path / "bad.csv", [("gpt", "llama")], header="model_a,model_b")
    with pytest.raises(ComparisonsError, match=r"bad\.csv: missing column\(s\) 'winner'"):
        read_comparisons(path)


def test_read_bad_winner_names_file_row_column(tmp_path):
    path = write_csv(tmp_path / "bad.csv", ROWS[:2] + [("gpt", "llama", "draw")])
    with pytest.raises(ComparisonsError, match=r"bad\.csv: row 2, column 'winner': 'draw'"):
        read_comparisons(path)


def test_read_empty_winner_is_an_error_not_a_tie(tmp_path):
    path = write_csv(tmp_path / "null.csv", ROWS[:3] + [("gpt", "llama", "")])
    with pytest.raises(ComparisonsError, match=r"null\.csv: row 3, column 'winner': missing verdict"):
        read_comparisons(path)
    parquet = tmp_path / "null.parquet"
    pl.DataFrame({"model_a": ["gpt", "gpt"], "model_b": ["llama", "llama"],
                  "winner": ["tie", None]}).write_parquet(parquet)
    with pytest.raises(ComparisonsError, match=r"null\.parquet: row 1, column 'winner'"):
        read_comparisons(parquet)


def test_read_unsupported_or_missing_file(tmp_path):
    with pytest.raises(ComparisonsError, match="no such file"):
        read_comparisons(tmp_path / "nope.csv")
    (tmp_path / "x.txt").write_text("a")
    with pytest.raises(ComparisonsError, match="unsupported"):
        read_comparisons(tmp_path / "x.txt")


# ---------------------------------------------------------------------------------------- command

def test_elo_command_table(tmp_path, capsys):
    rows = ROWS * 5
    path = write_csv(tmp_path / "c.csv", rows)
    args = parse(["elo", str(path), "--rounds", "50", "--repeats", "2", "--bt-rounds", "20"])
    assert run_elo_command(args) == 0
    out = capsys.readouterr().out
    for name in ("gpt", "llama", "vicuna", "elo_std", "bt_ci_low", "win_rate"):
        assert name in out
    # gpt has the best record, llama the worst: table sorted by elo desc.
    lines = [line.split()[0] for line in out.splitlines() if line.split() and line.split()[0] in ("gpt", "llama", "vicuna")]
    assert lines[:3] == ["gpt", "vicuna", "llama"]


def test_elo_command_json_and_csv(tmp_path, capsys):
    path = write_csv(tmp_path / "c.csv", ROWS * 5)
    assert run_elo_command(parse(["elo", str(path), "--rounds", "30", "--repeats", "3", "--bt-rounds", "10",
                                  "--format", "json"])) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["model"] for r in data["ratings"]] == ["gpt", "vicuna", "llama"]
    assert data["ratings"][0]["games"] == 30
    assert all(r["elo_p2_5"] <= r["elo"] <= r["elo_p97_5"] for r in data["ratings"])
    assert {(p["model_a"], p["model_b"]) for p in data["pairs"]} == {("gpt", "llama"), ("gpt", "vicuna"),
                                                                      ("llama", "vicuna")}
    assert run_elo_command(parse(["elo", str(path), "--rounds", "10", "--repeats", "1", "--bt-rounds", "0",
                                  "--format", "csv"])) == 0
    out = capsys.readouterr().out
    assert out.startswith("model,elo,elo_std,elo_p2_5,elo_p97_5,bt,bt_ci_low,bt_ci_high,games\n")
    assert "model_a,model_b,games,wins_a,wins_b,ties,win_rate,tie_rate" in out


def test_elo_command_bad_file_exit_2(tmp_path, capsys):
    path = write_csv(tmp_path / "bad.csv", [("gpt", "llama", "???")])
    assert run_elo_command(parse(["elo", str(path), "--rounds", "5", "--repeats", "1"])) == 2
    err = capsys.readouterr().err
    assert "bad.csv" in err and "row 0" in err and "'winner'" in err


def test_elo_command_on_a_header_only_file_says_there_is_nothing_to_rate(tmp_path, capsys):
    path = write_csv(tmp_path / "empty.csv", [])
    assert run_elo_command(parse(["elo", str(path), "--rounds", "5", "--repeats", "1"])) == 2
    err = capsys.readouterr().err
    assert err == f"error: {path}: no comparisons (the file has its columns but no rows): nothing to rate\n"


def test_elo_command_csv_runs_no_formula_a_model_name_holds(tmp_path, capsys):
    rows = [("=HYPERLINK(\"http://evil.example\")", "llama", "model_a"), ("llama", "=HYPERLINK(\"http://evil.example\")", "tie")]
    path = tmp_path / "c.csv"
    path.write_text("model_a,model_b,winner\n" + "".join(f'"{a.replace(chr(34), chr(34) * 2)}",'
                                                        f'"{b.replace(chr(34), chr(34) * 2)}",{w}\n' for a, b, w in rows * 3))
    assert run_elo_command(parse(["elo", str(path), "--rounds", "5", "--repeats", "1", "--bt-rounds", "0",
                                  "--format", "csv"])) == 0
    lines = capsys.readouterr().out.splitlines()
    assert not [line for line in lines if line.startswith(("=", '"='))], lines
    assert any(line.startswith('"\'=HYPERLINK(') for line in lines), lines
