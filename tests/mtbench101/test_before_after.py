"""The before / after measurement (tests/mtbench101/before_after.py) on one dialogue of two tasks: the old answer limit
(the model's max_tokens, 256) cuts the scripted 360- and 480-word replies and the rule judge marks them down; the
default limit (4096) cuts none; switching recomputes every answer and judgment; the dialogue reference is longer."""

from __future__ import annotations

from tests.mtbench101 import before_after


def test_before_after_on_a_few_dialogues(tmp_path):
    result = before_after.measure(tmp_path, ["MR", "CM"], 1)
    before, after = result["before"], result["after"]
    # MR 449: 2 judged turns (replies 120, 240 words: none cut); CM 1145: 3 judged turns (360, 480, 120: two cut)
    assert before["cut"] == {"MR": (0, 2), "CM": (2, 3)} and after["cut"] == {"MR": (0, 2), "CM": (0, 3)}
    assert (before["max_tokens"], after["max_tokens"]) == ([256], [4096])
    assert before["scores"] == {"MR": 8.0, "CM": 3.0} and after["scores"] == {"MR": 8.0, "CM": 8.0}
    assert result["avg"] == {"before": 5.5, "after": 8.0}
    assert after["answers_computed"] == after["judgments_computed"] == 5  # nothing of the first run is reused
    # the judge reads more on MR (longer reference and answers); on CM the longer answers only
    assert after["judge_prompt_words"]["MR"] > before["judge_prompt_words"]["MR"]
    print(before_after.table(result, ["MR", "CM"]))


def test_reference_sizes_over_the_dataset():
    sizes = before_after.reference_sizes()
    assert sizes["turns"] == 442  # the judged turns of MR and GR
    assert sizes["dialogue"]["reference_words"] > 2 * sizes["turn"]["reference_words"]
    assert sizes["dialogue"]["user_message_words"] > sizes["turn"]["user_message_words"]
