"""The vendored MT-Bench-101 data against Table 6, and the validation of malformed lines."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from dialogbench.botchat.seeds import DatasetError
from dialogbench.mtbench101.dataset import read_dialogues, turn_items
from dialogbench.mtbench101.taxonomy import TASK_CODES

REPO_ROOT = Path(__file__).resolve().parents[2]
DATASET = REPO_ROOT / "data_lake" / "raw" / "mtbench101" / "mtbench101.jsonl"

# Table 6 of the paper ("Total # Dialogues", "Total # Turns"). The vendored data agrees on every
# task, so these are the paper's numbers and the data's at once.
TABLE6_DIALOGUES = {"CM": 80, "SI": 149, "AR": 153, "TS": 83, "CC": 147, "CR": 136, "FR": 74,
                    "SC": 77, "SA": 73, "MR": 108, "GR": 71, "IC": 150, "PI": 87}
TABLE6_TURNS = {"CM": 319, "SI": 620, "AR": 560, "TS": 249, "CC": 352, "CR": 389, "FR": 197,
                "SC": 154, "SA": 146, "MR": 224, "GR": 218, "IC": 426, "PI": 354}


@pytest.fixture(scope="module")
def dialogues():
    return read_dialogues(DATASET)


def test_totals_match_table_2_and_6(dialogues):
    assert len(dialogues) == 1388
    assert len(turn_items(dialogues)) == 4208
    assert sum(TABLE6_DIALOGUES.values()) == 1388 and sum(TABLE6_TURNS.values()) == 4208


def test_per_task_dialogue_and_turn_counts_match_table_6(dialogues):
    assert dict(Counter(d.task for d in dialogues)) == TABLE6_DIALOGUES
    assert dict(Counter(i.task for i in turn_items(dialogues))) == TABLE6_TURNS
    assert set(TABLE6_DIALOGUES) == set(TASK_CODES)


def test_items_carry_the_golden_history_before_the_turn(dialogues):
    items = turn_items(dialogues)
    first = dialogues[0]
    mine = [i for i in items if i.dialogue_id == first.id]
    assert [i.turn for i in mine] == list(range(len(first.turns)))
    for i in mine:
        assert i.history == first.turns[:i.turn]
        assert i.user_message == first.turns[i.turn].user
        assert i.reference == first.turns[i.turn].bot


def test_first_turn_of_six_tasks_is_not_judged(dialogues):
    items = turn_items(dialogues)
    skipped = [i for i in items if not i.judged]
    assert all(i.turn == 0 for i in skipped)
    assert {i.task for i in skipped} == {"CM", "AR", "CR", "FR", "SC", "SA"}
    assert len(skipped) == 80 + 153 + 136 + 74 + 77 + 73  # one per dialogue of those tasks
    assert sum(i.judged for i in items) == 4208 - 593


GOOD = {"task": "CM", "id": 1, "history": [{"user": "hi", "bot": "hello"}]}


@pytest.mark.parametrize(("record", "message"), [
    ({**GOOD, "id": 7, "task": "XX"}, "dialogue 7: unknown task code 'XX'"),
    ({**GOOD, "id": 8, "history": []}, "dialogue 8: 'history' must be a non-empty list"),
    ({**GOOD, "id": 9, "history": [{"bot": "b"}]}, "dialogue 9: turn 1: 'user' must be a string, is missing"),
    ({**GOOD, "id": 10, "history": [{"user": "a", "bot": "b"}, {"user": 3, "bot": "b"}]},
     "dialogue 10: turn 2: 'user' must be a string, is a int"),
    ({**GOOD, "id": 11, "history": [{"user": "  ", "bot": "b"}]}, "dialogue 11: turn 1: 'user' is blank"),
    ({**GOOD, "id": 12, "history": [{"user": "a"}]}, "dialogue 12: turn 1: 'bot' must be a string"),
])
def test_a_malformed_line_names_its_line_and_dialogue_id(tmp_path, record, message):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError) as err:
        read_dialogues(path)
    assert f"{path}:2: {message}" in str(err.value)


def test_all_problems_are_reported_together(tmp_path):
    path = tmp_path / "d.jsonl"
    rows = [GOOD, {**GOOD, "id": 2, "task": "ZZ"}, "not json", {**GOOD, "id": 1}, {**GOOD, "id": 5, "history": "x"}]
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError) as err:
        read_dialogues(path)
    text = str(err.value)
    assert text.startswith(f"4 malformed dialogue(s) in {path}")
    assert f"{path}:2: dialogue 2: unknown task code 'ZZ'" in text
    assert f"{path}:3: not valid JSON" in text
    assert f"{path}:4: dialogue 1: duplicate dialogue id" in text
    assert f"{path}:5: dialogue 5: 'history' must be a non-empty list" in text
