"""Target-language tags on string tensors: how a multilingual run's pairs are read.

Each source gets its target language's tag in front (`common.language_tags`, after Johnson et
al., 2017), so a pair is a plain `(tagged source, target)` for batching and training; a tag
written in a sentence is defused, learnt as the characters it is.
"""

from __future__ import annotations

import tensorflow as tf

from common.language_tags import DEFUSED_TAG, TAG_END, TAG_IN_TEXT, TAG_START


def defuse_in_graph(text: tf.Tensor) -> tf.Tensor:
    """`common.language_tags.defused` on string tensors.

    Example:
        >>> defuse_in_graph(tf.constant(["Say <2de>."])).numpy()
        array([b'Say < 2de>.'], dtype=object)
    """
    return tf.strings.regex_replace(text, TAG_IN_TEXT, DEFUSED_TAG)


def tag_in_graph(text: tf.Tensor, language: tf.Tensor | str) -> tf.Tensor:
    """`common.language_tags.tagged` on string tensors (element-wise, broadcast).

    Example:
        >>> tag_in_graph(tf.constant(["Ein Hund."]), tf.constant(["fr"])).numpy()
        array([b'<2fr> Ein Hund.'], dtype=object)
    """
    return tf.strings.join([TAG_START, language, TAG_END, defuse_in_graph(text)])


def tagged_pair(
    source: tf.Tensor, target: tf.Tensor, target_lang: tf.Tensor | str
) -> tuple[tf.Tensor, tf.Tensor]:
    """A multilingual run's pair: the source tagged, a tag written in either side defused.

    Example:
        >>> [t.numpy() for t in tagged_pair(tf.constant("Ein Hund."), tf.constant("A dog."), "en")]
        [b'<2en> Ein Hund.', b'A dog.']
    """
    return tag_in_graph(source, target_lang), defuse_in_graph(target)
