"""Sentence-pair augmentation on the strings, before tokenization.

Both directions (bidirectional training, BiT: Ding et al., 2021): every pair also appears
reversed, target -> source, so the model learns both translation directions from the same corpus.
Without tags: the source's language tells the direction. Trained first, for a share of the steps,
it is a pretraining stage on twice the examples before the model specialises on the forward
direction (`training.trainer`).

Concatenation (Kondo et al., 2021; Nguyen et al., 2021): an epoch holds every training pair once,
and for a `ratio` share of them (the same pairs every epoch) also a concatenated pair: that pair
joined with a random partner pair, source to source and target to target, so the two sides stay
translations of each other. The partners are drawn anew every epoch. The model sees each sentence
at new positions and beside new context, a regulariser for small corpora such as Multi30k.

The choice of which pairs get a concatenation comes from a seeded random stream that repeats every
pass, so an epoch's length never changes: a saved iterator position restores into a new build.

Example:
    >>> pairs = tf.data.Dataset.from_tensor_slices((["Ein Hund.", "Eine Katze."],
    ...                                             ["A dog.", "A cat."]))
    >>> list(concatenate_pairs(pairs, 1.0, seed=0).as_numpy_iterator())  # doctest: +SKIP
    [(b'Ein Hund.', b'A dog.'), (b'Ein Hund. Eine Katze.', b'A dog. A cat.'), ...]
"""

from __future__ import annotations

import tensorflow as tf

_BATCH = 1024  # Pairs joined per vectorised step.
_COIN_RESOLUTION = 1 << 24


def is_concat_ratio(value: object) -> bool:
    """Whether `value` is a valid `concat_ratio`: a number in [0, 1].

    Example:
        >>> is_concat_ratio(0.5), is_concat_ratio(2)
        (True, False)
    """
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1


def both_directions(pairs: tf.data.Dataset) -> tf.data.Dataset:
    """`pairs`, then every pair reversed (target, source): twice the examples (shuffle them).

    Example:
        >>> pairs = tf.data.Dataset.from_tensor_slices((["Ein Hund."], ["A dog."]))
        >>> list(both_directions(pairs).as_numpy_iterator())
        [(b'Ein Hund.', b'A dog.'), (b'A dog.', b'Ein Hund.')]
    """
    return pairs.concatenate(pairs.map(lambda source, target: (target, source)))


def concatenate_pairs(
    pairs: tf.data.Dataset, ratio: float, *, seed: int, partner_buffer: int = 16_384
) -> tf.data.Dataset:
    """`pairs` plus, for a `ratio` share of them, each joined with a random partner pair.

    Every block of 1,024 pairs is followed by its concatenations, in order (shuffle the result).
    Sources and targets are joined with a space. Partners come from a seeded shuffle of `pairs`
    (a window of `partner_buffer` pairs), reshuffled every pass.

    Example:
        >>> augmented = concatenate_pairs(train_pairs, 0.5, seed=0)  # doctest: +SKIP
    """
    if not is_concat_ratio(ratio):
        raise ValueError(
            f"concat_ratio must be a number in [0, 1] (the share of pairs that also appear "
            f"joined with a random partner; 0: off), got {ratio!r}."
        )
    if ratio == 0:
        return pairs
    partners = pairs.shuffle(partner_buffer, seed=seed, reshuffle_each_iteration=True)
    # Not re-randomised per pass: the same pairs get a concatenation every epoch.
    coins = tf.data.Dataset.random(seed=seed)
    threshold = round(ratio * _COIN_RESOLUTION)

    def join(pair, partner, coin):
        (source, target), (partner_source, partner_target) = pair, partner
        chosen = coin % _COIN_RESOLUTION < threshold  # [b] bool
        joined_source = tf.boolean_mask(tf.strings.join([source, partner_source], " "), chosen)
        joined_target = tf.boolean_mask(tf.strings.join([target, partner_target], " "), chosen)
        # [b + c]: the b pairs, then the c concatenations; the training shuffle mixes them.
        return tf.concat([source, joined_source], 0), tf.concat([target, joined_target], 0)

    return (
        tf.data.Dataset.zip(pairs, partners, coins)
        .batch(_BATCH)
        .map(join, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
        .unbatch()
    )
