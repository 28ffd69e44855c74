import pytest

from dialogbench.gameeval.replies import (ReplyError, normalise_player, parse_reply, player_names, read_speech,
                                          text_field)


@pytest.mark.parametrize("text", [
    '{"thought": "t", "speak": "s"}',
    'Sure, here it is:\n```json\n{"thought": "t", "speak": "s"}\n```\nGood luck!',
    "{'thought': 't', 'speak': 's'}",
    '{"thought": "t", "speak": "s",}',
    'I think {"thought": "t", "speak": "s"} is right',
    '{"Thought": "t", "Speak": "s"}',
])
def test_reads_json_in_prose_fences_single_quotes_trailing_commas(text):
    reply = parse_reply(text, required=("speak",))
    assert text_field(reply, "thought") == "t" and text_field(reply, "speak") == "s"


def test_a_reply_cut_by_max_tokens_is_closed():
    assert parse_reply('{"thought": "the spy is", "speak": "a fruit that', required=("speak",))["speak"] == "a fruit that"


def test_skips_objects_without_the_required_keys():
    text = 'Example: {"a": 1}. My answer: {"thought": "x", "name": "player2"}'
    assert parse_reply(text, required=("name",))["name"] == "player2"


@pytest.mark.parametrize("text,message", [
    ("", "empty reply"), ("   ", "empty reply"), ("I vote for player 2", "no JSON object"),
    ('{"thought": "x"}', "without 'name'"), ("{not json at all}", "no JSON object"),
])
def test_errors_say_why(text, message):
    with pytest.raises(ReplyError, match=message):
        parse_reply(text, required=("name",))


def test_braces_inside_strings_do_not_confuse_the_scanner():
    assert parse_reply('{"thought": "a } b {", "speak": "ok"}', required=("speak",))["speak"] == "ok"


def test_player_names():
    assert player_names("Player 3 and player_5, not playerX") == ["player3", "player5"]
    assert normalise_player("Player 4") == "player4"
    assert normalise_player(2) == "player2"
    assert normalise_player("6") == "player6"
    assert normalise_player(None) is None


@pytest.mark.parametrize("text", [
    '{"thought": "t", "speak": ' + "[" * 100_000 + "]" * 100_000 + "}",  # json.loads raised RecursionError
    '{"thought": "t", "speak": 1' + "0" * 5000 + "}",  # an int past Python's digit limit
])
def test_a_hostile_reply_is_unreadable_never_a_crash(text):
    with pytest.raises(ReplyError):
        parse_reply(text, required=("speak",))


@pytest.mark.parametrize("raw, heard, error, blank", [
    ('{"thought": "secret", "speak": "a fruit"}', "a fruit", None, None),
    ('{"thought": "secret", "speak": ""}', "", None, "blank"),
    ('{"thought": "secret", "speak": "  \\n "}', "", None, "blank"),
    ('{"thought": "secret", "speak": null}', "", None, "null"),
    ('{"thought": "secret", "speak": []}', "", None, "blank"),
    ('{"thought": "secret"}', "", "JSON object without 'speak'", None),
    ('{"thought": "secret and then', "", "JSON object without 'speak'", None),  # cut off in its thought
    ("It is red.", "It is red.", "no JSON object in the reply", None),        # prose: its text is its speech
    ("", "(says nothing)", "empty reply", None),
])
def test_read_speech_never_hears_the_thought_of_a_json_reply(raw, heard, error, blank):
    said = read_speech(raw)
    assert (said.heard, said.error, said.blank) == (heard, error, blank)
    assert "secret" not in said.heard
    if "{" in raw:
        assert said.reply.get("thought", "").startswith("secret")
