"""Translating with a LiteRT export (``inference.litert_export``): a Translator without TensorFlow.

The export's ``translate_ids`` signature searches on token ids, so this runtime tokenizes in
Python with the export's own SentencePiece model, as an app on a device would: sources tagged for
a multilingual export (:func:`common.language_tags.sources_as_read`), truncated to the export's
length, EOS appended, padded; the output ids are detokenized one sentence at a time in Python.
Detokenizing in the model is left out on purpose: ``tensorflow_text``'s LiteRT SentencePiece
detokenizer crashed the process (a segmentation fault) for batches of two or more sentences.

What the search in the file does not offer (n-best lists, scores, prefixes, sampling,
alignments) is a RequestError naming the runtimes that do.

Imports no TensorFlow: ``ai-edge-litert``, ``sentencepiece`` and numpy only;
:func:`text_translation` (an export's ``translate_text``, as an app calls it) needs
``tensorflow_text`` for the SentencePiece ops of that signature.

Example:
    >>> LiteRTTranslator("runs/de_en/litert").translate(["Ein Hund rennt."])
    ['A dog is running.']
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import numpy as np
import sentencepiece
from ai_edge_litert import schema_py_generated as schema
from ai_edge_litert.interpreter import Interpreter, InterpreterWithCustomOps

from common.alignment import Alignment
from common.errors import ConfigError
from common.language_tags import languages_in_pieces, sources_as_read
from common.special_tokens import EOS_ID, PAD_ID
from common.translation import (
    Hypothesis,
    RequestError,
    TranslationRequest,
    translate_in_batches,
)
from exports.contract import (
    LITERT_MODEL_FILE,
    OUTPUT_IDS,
    SOURCE_IDS,
    TEXT,
    TOKENIZER_FILE,
    TRANSLATE_IDS,
    TRANSLATE_TEXT,
    TRANSLATION,
    ExportError,
    LiteRTSettings,
)

_ELSEWHERE = (
    "a LiteRT export translates with the one search it was exported with; use the work "
    "directory (--workdir), a SavedModel or a CTranslate2 export for that."
)


class LiteRTTranslator:
    """A :class:`~common.translation.Translator` over a LiteRT export.

    Args:
        path: the export's directory, or its ``model.tflite``.
        threads: CPU threads; 0: one per core this process may use.

    Example:
        >>> LiteRTTranslator("/tmp/run/litert").beam_size
        4
    """

    def __init__(self, path: str, threads: int = 0) -> None:
        directory = export_directory(path)
        self.settings = LiteRTSettings.read(directory)
        if threads < 0:
            raise ConfigError(f"threads must be 0 (one per core) or more, got {threads}.")
        try:
            self.tokenizer = sentencepiece.SentencePieceProcessor(
                model_file=os.path.join(directory, TOKENIZER_FILE)
            )
            self.interpreter = Interpreter(
                model_path=os.path.join(directory, LITERT_MODEL_FILE),
                num_threads=threads or len(os.sched_getaffinity(0)),
            )
            self._translate_ids = self.interpreter.get_signature_runner(TRANSLATE_IDS)
        except (OSError, RuntimeError, ValueError) as error:
            raise ExportError(
                f"LiteRT cannot load the export in {directory} ({error}); write it again with "
                "`python export.py --workdir=DIR --format=litert --output=...`."
            ) from None
        pieces = map(self.tokenizer.id_to_piece, range(self.tokenizer.get_piece_size()))
        self.languages = languages_in_pieces(pieces)
        self.max_source_length = self.settings.max_source_length

    @property
    def beam_size(self) -> int:
        return self.settings.beam_size

    def translate(
        self,
        sentences: Sequence[str],
        request: TranslationRequest = TranslationRequest(),
        batch_size: int = 64,
        progress: bool = True,
    ) -> list[str]:
        """Translates ``sentences`` in batches of similar length, keeping their order (a
        multilingual export's into ``request.target_lang``)."""
        language = request.language(self.languages)
        if request.sampling is not None or request.prefixes(sentences) is not None:
            raise RequestError(f"Sampling and target prefixes: {_ELSEWHERE}")
        if request.sentence_terms(sentences) is not None:
            raise RequestError(f"Terms: {_ELSEWHERE}")

        def translate_rows(rows: list[int]) -> list[str]:
            return self.translate_batch([sentences[row] for row in rows], [language] * len(rows))

        return translate_in_batches(translate_rows, sentences, batch_size, progress)

    def translate_batch(
        self, sentences: Sequence[str], target_langs: Sequence[str | None] | None = None
    ) -> list[str]:
        """One batch through the model, each sentence into its row's target language."""
        if not sentences:
            return []
        output_ids = self._translate_ids(**{SOURCE_IDS: self.source_ids(sentences, target_langs)})
        return [self.tokenizer.decode(_until_eos(row)) for row in output_ids[OUTPUT_IDS].tolist()]

    def source_ids(
        self, sentences: Sequence[str], target_langs: Sequence[str | None] | None = None
    ) -> np.ndarray:
        """The ``(batch, source_len)`` int32 input of ``translate_ids`` (the contract's)."""
        texts = sources_as_read(sentences, target_langs, self.languages)
        rows = [
            ids[: self.max_source_length - 1] + [EOS_ID]
            for ids in self.tokenizer.encode(texts, out_type=int)
        ]
        batch = np.full([len(rows), max(map(len, rows))], PAD_ID, np.int32)
        for number, ids in enumerate(rows):
            batch[number, : len(ids)] = ids
        return batch

    def hypotheses(
        self,
        sentences: Sequence[str],
        request: TranslationRequest = TranslationRequest(),
        batch_size: int = 64,
        progress: bool = True,
    ) -> list[list[Hypothesis]]:
        raise RequestError(f"N-best lists and scores: {_ELSEWHERE}")

    def score(
        self,
        sources: Sequence[str],
        targets: Sequence[str],
        request: TranslationRequest = TranslationRequest(),
        batch_size: int = 64,
        progress: bool = True,
    ) -> list[Hypothesis]:
        raise RequestError(f"Forced scores: {_ELSEWHERE}")

    def align(
        self,
        sources: Sequence[str],
        targets: Sequence[str],
        request: TranslationRequest = TranslationRequest(),
        batch_size: int = 64,
        progress: bool = True,
    ) -> list[Alignment]:
        raise RequestError(f"Word alignments: {_ELSEWHERE}")

    def source_lengths(
        self, sentences: Sequence[str], request: TranslationRequest = TranslationRequest()
    ) -> list[int]:
        """Each sentence's token count (without EOS) as the model reads it (tag included)."""
        language = request.language(self.languages)
        texts = sources_as_read(sentences, [language] * len(sentences), self.languages)
        return [len(ids) for ids in self.tokenizer.encode(texts, out_type=int)]


def export_directory(path: str) -> str:
    """A LiteRT export's directory, given as itself or as its ``model.tflite``."""
    return os.path.dirname(os.path.abspath(path)) if path.endswith(".tflite") else path


def text_translation(path: str, threads: int = 0) -> Callable[[str], str]:
    """A function translating one sentence with the export's ``translate_text`` signature
    (``export.py --litert_text``), in an interpreter with ``tensorflow_text``'s SentencePiece
    ops registered, as an app runs it: tokenization, search and detokenization in the model.

    Example:
        >>> text_translation("/tmp/run/litert")("Ein Hund rennt.")
        'A dog is running.'
    """
    from tensorflow_text import tflite_registrar

    directory = export_directory(path)
    if TRANSLATE_TEXT not in LiteRTSettings.read(directory).signatures:
        raise ExportError(
            f"The LiteRT export in {directory} has no {TRANSLATE_TEXT} signature: export it "
            "again with --litert_text (unigram models of one target language)."
        )
    interpreter = InterpreterWithCustomOps(
        model_path=os.path.join(directory, LITERT_MODEL_FILE),
        custom_op_registerers=tflite_registrar.SELECT_TFTEXT_OPS,
        num_threads=threads or len(os.sched_getaffinity(0)),
    )
    runner = interpreter.get_signature_runner(TRANSLATE_TEXT)

    def translate(sentence: str) -> str:
        outputs = runner(**{TEXT: np.array([sentence], dtype=object)})
        return outputs[TRANSLATION][0].decode("utf-8", errors="replace")

    return translate


def _until_eos(ids: list[int]) -> list[int]:
    """An output row's ids before its EOS (the rest is padding)."""
    return ids[: ids.index(EOS_ID)] if EOS_ID in ids else [i for i in ids if i != PAD_ID]


def model_ops(model: bytes) -> list[str]:
    """The sorted names of the operators a ``.tflite`` model uses: LiteRT's builtin names
    (``"WHILE"``), a custom operator as ``"CUSTOM:<its name>"`` (Flex's begin with ``Flex``).

    Example:
        >>> model_ops(open("/tmp/run/litert/model.tflite", "rb").read())[:2]
        ['ADD', 'BATCH_MATMUL']
    """
    names = {code: name for name, code in vars(schema.BuiltinOperator).items() if name.isupper()}
    parsed = schema.Model.GetRootAs(model, 0)
    ops = set()
    for index in range(parsed.OperatorCodesLength()):
        code = parsed.OperatorCodes(index)
        # Codes below 127 are also kept in the deprecated field; larger ones only in the new.
        name = names[max(code.BuiltinCode(), code.DeprecatedBuiltinCode())]
        ops.add(f"CUSTOM:{code.CustomCode().decode()}" if name == "CUSTOM" else name)
    return sorted(ops)
