"""Exports a work directory as a SavedModel: strings in, strings out, everything in the graph.

The ``serving_default`` signature takes ``text`` (tf.string, [None]) and returns
``translation`` (tf.string, [None]); SentencePiece tokenization, beam search and detokenization
run inside it, so serving needs TensorFlow and ``tensorflow_text`` (for the SentencePiece ops)
and nothing of this project. Inputs longer than the model's ``data.max_length`` tokens are
truncated to it (the CLI warns about that; the SavedModel does not).
"""

from __future__ import annotations

import os
import shutil
import tempfile

import tensorflow as tf

from decoding.translator import Translator


def export_saved_model(translator: Translator, output_dir: str) -> str:
    """Writes ``translator`` as a SavedModel to ``output_dir`` atomically.

    The SavedModel is written next to ``output_dir`` and renamed into place only when complete;
    an existing ``output_dir`` is replaced.

    Example:
        >>> translator, _ = load_translator("/tmp/run")
        >>> export_saved_model(translator, "/tmp/run/saved_model")
    """
    output_dir = os.path.abspath(output_dir)
    parent = os.path.dirname(output_dir)
    os.makedirs(parent, exist_ok=True)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
    def serve(text: tf.Tensor) -> dict[str, tf.Tensor]:
        return {"translation": translator.translate_batch(text)}

    translator.beam_size_variable = tf.Variable(
        translator.beam_size, trainable=False, name="beam_size"
    )
    staging = tempfile.mkdtemp(dir=parent, prefix=f".{os.path.basename(output_dir)}.tmp-")
    try:
        tf.saved_model.save(translator, staging, signatures={"serving_default": serve})
        if os.path.exists(output_dir):
            previous = f"{staging}.old"
            os.replace(output_dir, previous)
            os.replace(staging, output_dir)
            shutil.rmtree(previous)
        else:
            os.replace(staging, output_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return output_dir
