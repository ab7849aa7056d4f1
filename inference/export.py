"""A work directory's translator as a SavedModel, and translating with one.

The ``serving_default`` signature takes ``text`` (tf.string, [None]) and returns
``translation`` (tf.string, [None]); SentencePiece tokenization, beam search and detokenization
run inside it, so serving needs TensorFlow and ``tensorflow_text`` (for the SentencePiece ops)
and nothing of this project. A second signature, ``cross_attention`` (not for ensembles),
returns for the same input the translation, the source and output pieces and the last decoder
layer's encoder-decoder attention (``ModelTranslator.cross_attention``; the demo page of
``serve.py`` draws it). Inputs longer than the model's ``data.max_length`` tokens are truncated
to it (the CLI warns about that; the SavedModel does not).

A multilingual model's signatures take a second input, ``target_lang`` (tf.string, [None]: each
sentence's target language), and its ``languages`` variable lists the languages; an unknown one
is an InvalidArgumentError naming them (a 400 in ``serve.py``). A bilingual model's signatures
are exactly as above.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import tensorflow as tf

from common.files import atomic_directory
from common.language_tags import check_language
from decoding.ensemble import Ensemble
from decoding.protocol import translate_in_batches, truncation_warnings
from decoding.translator import ModelTranslator, string_batches


def export_saved_model(translator: ModelTranslator, output_dir: str) -> str:
    """Writes ``translator`` as a SavedModel to ``output_dir`` atomically.

    The SavedModel is written next to ``output_dir`` and renamed into place only when complete;
    an existing ``output_dir`` is replaced. A write the file system refuses (a full disk, a
    read-only directory) raises a StorageError naming ``output_dir``, which stays as it was.

    Example:
        >>> translator, _ = load_translator("/tmp/run")
        >>> export_saved_model(translator, "/tmp/run/saved_model")
    """

    if translator.languages:

        @tf.function(input_signature=translator.translate_to.input_signature)
        def serve(text: tf.Tensor, target_lang: tf.Tensor) -> dict[str, tf.Tensor]:
            return {"translation": translator.translate_to(text, target_lang)}

        translator.languages_variable = tf.Variable(
            list(translator.languages), trainable=False, name="languages"
        )
    else:

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
        def serve(text: tf.Tensor) -> dict[str, tf.Tensor]:
            return {"translation": translator.translate_batch(text)}

    translator.beam_size_variable = tf.Variable(
        translator.beam_size, trainable=False, name="beam_size"
    )
    translator.max_source_length_variable = tf.Variable(
        translator.max_source_length, trainable=False, name="max_source_length"
    )
    signatures = {"serving_default": serve}
    if not isinstance(translator.model, Ensemble):  # an ensemble has no one attention to show
        signatures["cross_attention"] = (
            translator.cross_attention_to if translator.languages else translator.cross_attention
        )
    with atomic_directory(output_dir) as staging:
        tf.saved_model.save(translator, staging, signatures=signatures)
    return os.path.abspath(output_dir)


class SavedModelTranslator:
    """A :class:`~decoding.translator.Translator` over an exported SavedModel: it runs without
    project code (TensorFlow and ``tensorflow_text`` only).

    Example:
        >>> SavedModelTranslator("/tmp/run/saved_model").translate(["Ein Hund rennt."])
        ['A dog is running.']
    """

    def __init__(self, path: str) -> None:
        import tensorflow_text  # noqa: F401  (registers the SentencePiece ops the graph uses)

        if not tf.saved_model.contains_saved_model(path):
            raise FileNotFoundError(f"No SavedModel in {path}; write one with export.py.")
        self.loaded = tf.saved_model.load(path)
        self.serve = self.loaded.signatures["serving_default"]

    @property
    def beam_size(self) -> int:
        return int(self.loaded.beam_size_variable.numpy())

    @property
    def languages(self) -> tuple[str, ...]:
        if not hasattr(self.loaded, "languages_variable"):
            return ()
        return tuple(lang.decode() for lang in self.loaded.languages_variable.numpy())

    def translate(
        self,
        sentences: Sequence[str],
        batch_size: int = 64,
        progress: bool = True,
        target_lang: str | None = None,
    ) -> list[str]:
        language = check_language(target_lang, self.languages)

        def translate_batch(batch: tf.Tensor) -> tf.Tensor:
            if language is None:
                return self.serve(text=batch)["translation"]
            target = tf.fill(tf.shape(batch), language)
            return self.serve(text=batch, target_lang=target)["translation"]

        return translate_in_batches(
            string_batches(translate_batch), sentences, batch_size, progress
        )

    def truncation_warnings(self, sentences: Sequence[str]) -> list[str]:
        # Exports written before the token counts were saved with the model have no warnings.
        if not sentences or not hasattr(self.loaded, "max_source_length_variable"):
            return []
        lengths = self.loaded.source_lengths(tf.constant(list(sentences))).numpy().tolist()
        return truncation_warnings(lengths, int(self.loaded.max_source_length_variable.numpy()))
