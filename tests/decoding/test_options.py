import dataclasses

import numpy as np
import pytest

from decoding.beam import gnmt_length_penalty
from decoding.options import SearchOptions


@pytest.mark.parametrize(
    "options, message",
    [
        ({"beam_size": 0}, "beam_size must be a positive integer"),
        ({"beam_size": True}, "beam_size must be a positive integer"),
        ({"length_penalty": -0.5}, "length_penalty must not be negative"),
        ({"max_length": 0}, "max_length must be a positive integer"),
        ({"max_length_ratio": -1.0}, "must not be negative"),
        ({"max_length_offset": -1}, "must not be negative"),
    ],
)
def test_bad_options_fail_with_clear_messages(options, message):
    with pytest.raises(ValueError, match=message):
        SearchOptions(**options)


def test_options_are_immutable_and_replaced_as_a_whole():
    options = SearchOptions(beam_size=4, length_penalty=1.2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.beam_size = 1
    greedy = dataclasses.replace(options, beam_size=1)
    assert (greedy.beam_size, greedy.length_penalty) == (1, 1.2)
    with pytest.raises(ValueError, match="beam_size"):
        dataclasses.replace(options, beam_size=-1)


def test_the_python_gnmt_penalty_is_the_searchs():
    for alpha in (0.0, 0.6, 1.2):
        options = SearchOptions(length_penalty=alpha)
        for length in (1, 7, 30):
            expected = float(gnmt_length_penalty(length, alpha))
            assert np.isclose(options.gnmt_penalty(length), expected, rtol=1e-6)
