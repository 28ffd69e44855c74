"""Parsing ``Rating: [[score]]`` out of judge replies."""

from __future__ import annotations

import pytest

from dialogbench.mtbench101.rating import parse_rating


@pytest.mark.parametrize(("reply", "score"), [
    ("The reply recalls the budget.\n\nRating: [[7]]", 7),
    ("Rating: [[10]]", 10),
    ("Rating: [[1]]", 1),
    ("**Rating:** [[8]]", 8),
    ("**Rating: [[8]]**", 8),
    ("Rating: [[ 6 ]]", 6),
    ("Rating: [[7.0]]", 7),
    ("Rating: 7", 7),
    ("rating: 9/10", 9),
    ("**Rating**: 5", 5),
    ("### Rating: **4**", 4),
    ("Rating: [3]", 3),
    ("Score: 6", 6),
    # the judge quotes the format's example before giving its own: the last one counts
    ("As asked, I end with 'Rating: [[6]]'-style output.\nRating: [[2]]", 2),
    # brackets win over a bare label
    ("Rating: 9 at first glance, but on reflection [[4]]", 4),
])
def test_parsed(reply, score):
    rating = parse_rating(reply)
    assert rating.parsed and rating.score == score and rating.error is None


@pytest.mark.parametrize(("reply", "error"), [
    ("Rating: [[7.5]]", "non-integer rating 7.5"),
    ("Rating: 8.5", "non-integer rating 8.5"),
    ("Rating: [[0]]", "outside 1..10"),
    ("Rating: [[11]]", "outside 1..10"),
    ("Rating: [[-3]]", "outside 1..10"),
    ("Rating: 12", "outside 1..10"),
    ("The answer is good, I would give it a high mark.", "no 'Rating: [[score]]'"),
    ("Rating: [[score]]", "no 'Rating: [[score]]'"),
    ("", "empty judge reply"),
    (None, "empty judge reply"),
])
def test_unparsed(reply, error):
    rating = parse_rating(reply)
    assert not rating.parsed and rating.score is None
    assert error in rating.error


@pytest.mark.parametrize(("reply", "error"), [
    ("Rating: [[99999999999999999999999]]", "rating 99999999999999999999999 in [[…]] is outside 1..10"),
    ("Rating: [[" + "9" * 400 + "]]", "(400 characters) in [[…]] is too long to be a number in 1..10"),  # float: inf
    ("Rating: [[1e30]]", "rating 1e30 in [[…]] is outside 1..10"),  # was read as 1
    ("Rating: 1e999", "rating 1e999 in 'Rating:' is outside 1..10"),  # was read as 1
    ("Rating: [[1e-999999999999999999999]]", "is not a number in 1..10"),
    ("Rating: [[nan]]", "rating nan in [[…]] is not a finite number"),
    ("Rating: -inf", "rating -inf in 'Rating:' is not a finite number"),
    ("Rating: [[7.00000000000000000001]]", "non-integer rating 7.00000000000000000001"),  # was rounded to 7
    ("Rating: [[0.99999999999999999999]]", "non-integer rating"),  # was rounded to 1
    ("Rating: [[1,000]]", "rating 1,000 in [[…]] is not a number in 1..10"),
    ("Rating: [[-0]]", "outside 1..10"),
])
def test_numbers_out_of_bounds_are_unparsed(reply, error):
    rating = parse_rating(reply)
    assert not rating.parsed and rating.score is None
    assert error in rating.error


@pytest.mark.parametrize(("reply", "score"), [("Rating: [[+7]]", 7), ("Rating: 7.", 7), ("Rating: [[10.00]]", 10)])
def test_whole_numbers_in_range_are_read(reply, score):
    assert parse_rating(reply).score == score
