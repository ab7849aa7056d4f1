import numpy as np
import tensorflow as tf

from transformer.masks import causal_mask, combine_masks, padding_mask


def test_padding_mask_marks_real_tokens_true():
    mask = padding_mask(tf.constant([[5, 6, 0], [7, 0, 0]]), pad_id=0)
    assert mask.shape == (2, 1, 1, 3)
    np.testing.assert_array_equal(mask[:, 0, 0], [[True, True, False], [True, False, False]])


def test_causal_mask_lets_each_query_see_itself_and_the_past_only():
    mask = causal_mask(4)[0, 0].numpy()
    np.testing.assert_array_equal(mask, np.tril(np.ones([4, 4], bool)))


def test_causal_mask_with_offset_serves_one_query_against_a_cache():
    mask = causal_mask(1, 6, query_offset=2)[0, 0, 0].numpy()
    np.testing.assert_array_equal(mask, [True, True, True, False, False, False])


def test_combine_masks_is_logical_and_and_skips_none():
    pad = padding_mask(tf.constant([[5, 6, 0]]), 0)
    combined = combine_masks(pad, None, causal_mask(3))
    expected = np.tril(np.ones([3, 3], bool)) & np.array([True, True, False])
    np.testing.assert_array_equal(combined[0, 0], expected)
    assert combine_masks(None, None) is None
