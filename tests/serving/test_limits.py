import pytest

from serving.errors import ApiError
from serving.limits import Limits


def test_sentences_within_the_limits_pass_and_over_them_name_the_flag():
    limits = Limits(max_sentences=2, max_sentence_chars=5)
    limits.check_sentences(["12345", "äöü"])  # characters, not bytes
    with pytest.raises(ApiError, match=r"3 sentences .* limit is 2 \(--max_sentences\)") as raised:
        limits.check_sentences(["a", "b", "c"])
    assert raised.value.status == 400
    with pytest.raises(ApiError, match=r"sentence 1 has 6 .* 5 \(--max_sentence_chars\)"):
        limits.check_sentences(["a", "123456"])


@pytest.mark.parametrize("field", ["max_body_bytes", "max_sentences", "max_sentence_chars"])
def test_a_limit_below_one_is_refused(field):
    with pytest.raises(ValueError, match=f"--{field} must be at least 1"):
        Limits(**{field: 0})
