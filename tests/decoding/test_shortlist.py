"""The vocabulary shortlist: which candidates a batch gets, and searches over them."""

import numpy as np
import pytest
import tensorflow as tf

from common.special_tokens import EOS_ID, PAD_ID
from decoding.beam import n_best_search
from decoding.options import SearchOptions
from decoding.search import decode
from decoding.shortlist import Candidates, SearchSpace, Shortlist
from inference.shortlist import Cooccurrences
from tests.decoding.conftest import SOURCE_VOCAB, TARGET_VOCAB

# The tokens a search over the tiny models may write, left out of the shortlists below.
UNLIKELY = list(range(20, TARGET_VOCAB))


def _shortlist(frequent: list[int]) -> Shortlist:
    """A shortlist keeping ``frequent`` for every batch and nothing by source piece."""
    table = np.full([SOURCE_VOCAB, 2], PAD_ID, np.int32)
    return Shortlist(tf.constant(table), tf.constant(frequent, tf.int32))


def test_candidates_put_the_special_ids_first_and_leave_out_what_is_never_written():
    table = np.zeros([10, 2], np.int32)
    table[4], table[5] = [7, 9], [6, 9]
    shortlist = Shortlist(tf.constant(table), tf.constant([8]))
    prefix = tf.constant([[5, 0]])
    candidates = Candidates.of(shortlist, tf.constant([[4, 5, 3]]), 10, [0, 2, 9], prefix, bucket=4)
    # 0-3 first, then 5 (the prefix), 6, 7 (source pieces 4 and 5), 8 (frequent); 9 is forbidden.
    assert candidates.ids.numpy().tolist() == [0, 1, 2, 3, 5, 6, 7, 8]
    assert int(candidates.count) == 8
    positions = candidates.positions(tf.constant([[5, 8, 0]]), 10)
    assert positions.numpy().tolist() == [[4, 7, 0]]
    assert candidates.token_ids(positions).numpy().tolist() == [[5, 8, 0]]


def test_candidate_sets_are_padded_to_the_bucket_and_the_padding_is_never_written(make_model):
    model = make_model()
    candidates = Candidates.of(_shortlist([5, 6]), tf.constant([[7, 3]]), TARGET_VOCAB, [0, 2])
    assert candidates.ids.shape == (256,) and int(candidates.count) == 6
    wrapped = SearchSpace.of(model, SearchOptions(), candidates, TARGET_VOCAB).model
    memory, mask = wrapped.encode(tf.constant([[7, 3]]))
    logits, _ = wrapped.decode_step(
        tf.constant([2]), 0, wrapped.init_cache(memory, mask, None), True
    )
    assert logits.shape == (256, 1)
    assert np.isfinite(logits[:6]).all() and np.isneginf(logits[6:]).all()


def test_candidates_sized_by_shapes_are_one_size_for_every_batch_of_one_shape():
    """What an XLA search gets: sources of one shape, one size of candidates (the most they can
    have), whichever pieces they hold; the candidates themselves are the same."""
    table = np.full([SOURCE_VOCAB, 3], PAD_ID, np.int32)
    table[4], table[5] = [6, 7, 8], [9, 10, 11]
    shortlist = Shortlist(tf.constant(table), tf.constant([12]))
    sizes = set()
    for source in ([[4, 5, 3]], [[13, 3, 0]]):  # 8 and 5 candidates
        plain = Candidates.of(shortlist, tf.constant(source), TARGET_VOCAB, [0, 2], bucket=4)
        sized = Candidates.of(
            shortlist, tf.constant(source), TARGET_VOCAB, [0, 2], bucket=4, size_of_shapes=True
        )
        count = int(plain.count)
        assert int(sized.count) == count
        assert sized.ids[:count].numpy().tolist() == plain.ids[:count].numpy().tolist()
        assert (sized.ids[count:].numpy() == PAD_ID).all()
        sizes.add(sized.ids.shape[0])
    assert sizes == {16}  # 4 special ids + 3 pieces x 3 + 1 frequent = 14, to the bucket: 16
    many = Candidates.of(
        shortlist, tf.zeros([8, 40], tf.int32), TARGET_VOCAB, [0, 2], size_of_shapes=True
    )
    assert many.ids.shape[0] == -(-TARGET_VOCAB // 256) * 256  # never more than the vocabulary


def test_the_shortlist_never_removes_the_references_pieces_on_a_copy_task():
    rng = np.random.default_rng(0)
    copies = [rng.integers(4, 300, size=rng.integers(3, 12)) for _ in range(500)]
    shortlist = Cooccurrences.count([(ids, ids) for ids in copies], 300).shortlist(k=1, frequent=0)
    for start in range(0, 40, 8):
        batch = copies[start : start + 8]
        source = tf.constant([np.pad(ids, [0, 12 - len(ids)]) for ids in batch], tf.int32)
        candidates = Candidates.of(Shortlist(*map(tf.constant, shortlist)), source, 300, [0, 2])
        assert set(np.concatenate(batch)) <= set(candidates.ids.numpy().tolist())


@pytest.mark.parametrize("beam_size", [1, 4])
@pytest.mark.parametrize("dynamic_shapes", [False, True])
def test_a_search_over_the_shortlist_finds_what_the_full_search_finds(
    make_model, sources, beam_size, dynamic_shapes
):
    """The tokens left out are never likely (their logits 30 lower): the same outputs, and
    scores within float error."""
    model = make_model()
    kernel, bias = model.output_projection.get_weights()
    bias[UNLIKELY] -= 30.0
    model.output_projection.set_weights([kernel, bias])
    options = SearchOptions(beam_size=beam_size)
    candidates = Candidates.of(_shortlist(list(range(4, 20))), sources, TARGET_VOCAB, [0, 2])
    space = SearchSpace.of(model, options, candidates, TARGET_VOCAB)
    full = decode(model, sources, options, dynamic_shapes)
    found = space.token_ids(decode(space.model, sources, space.options, dynamic_shapes))
    np.testing.assert_array_equal(found, full)
    full_n_best = n_best_search(model, sources, options, beam_size, dynamic_shapes)
    n_best = n_best_search(space.model, sources, space.options, beam_size, dynamic_shapes)
    np.testing.assert_array_equal(space.token_ids(n_best.ids), full_n_best.ids)
    np.testing.assert_allclose(n_best.scores, full_n_best.scores, atol=1e-4)


def test_greedy_search_over_the_shortlist_writes_the_full_argmax_where_it_is_a_candidate(
    make_model, sources
):
    """Greedy search picks each step's best token: whenever the full search's output is
    inside the candidates, the shortlisted search writes exactly it (the likely tokens too
    are left out here, except those the full output holds)."""
    model = make_model()
    options = SearchOptions(beam_size=1, eos_id=EOS_ID)
    full = decode(model, sources, options).numpy()
    written = sorted(set(full.ravel()) - {PAD_ID})
    candidates = Candidates.of(_shortlist(written), sources, TARGET_VOCAB, [0, 2])
    assert int(candidates.count) < TARGET_VOCAB
    space = SearchSpace.of(model, options, candidates, TARGET_VOCAB)
    found = space.token_ids(decode(space.model, sources, space.options))
    np.testing.assert_array_equal(found, full)
