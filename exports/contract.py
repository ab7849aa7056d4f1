"""The export contract: every name an export is written with and read by, in one place.

The exporters (``inference.export``, ``inference.ctranslate2_export``) write through these
names; the readers (:mod:`exports.saved_model`, :mod:`exports.ctranslate2`), the server
(``serving/``), ``translate.py`` and the demo page (through the server's model list) read
through them. Inputs are always picked by name, never by position.

A SavedModel (TensorFlow and ``tensorflow_text`` serve it; nothing of this project):

* ``serving_default``: ``text`` (tf.string ``[None]``) -> ``translation`` (tf.string ``[None]``);
  a multilingual model's also takes ``target_lang`` (tf.string ``[None]``: each row's target
  language; an unknown one is an InvalidArgumentError naming the model's languages).
* ``cross_attention`` (one model, not an ensemble): the same inputs -> ``translation``,
  ``source_pieces`` ``(batch, source_len)``, ``target_pieces`` ``(batch, target_len)`` and
  ``attention`` ``(batch, heads, target_len, source_len)`` float32 (pieces ``""`` and weights 0
  past a sentence's end).
* ``scored``: the same inputs -> ``serving_default``'s translation with what the model thinks of
  it, each ``(batch, 1)``: ``translation``, ``score`` (float32, ``log_prob / lp(length)``, GNMT's
  length penalty), ``log_prob`` (float32, the sum of its tokens' log-probabilities),
  ``length`` (int32, tokens with EOS) and ``token_log_probs`` (float32 ``(batch, 1,
  out_len)``, 0 past its end); ``n_best``: the same for the beam's best hypotheses, each
  ``(batch, beam_size[, out_len])``, best first (length 0 and score -inf: a hypothesis the
  search never finished).
* ``prefixed``: the same inputs and ``target_prefix`` (tf.string ``[None]``: each translation's
  start, ``""`` for none) -> ``translation``: ``serving_default``'s search going on from each
  prefix (the translation includes it).
* ``constrained``: the same inputs, ``target_prefix`` and each sentence's ``terms`` and
  ``avoid`` (tf.string ``[None]``: target-language phrases, one a line; ``""``: none) ->
  ``scored``'s outputs for the translation holding every term and no avoided phrase
  (constrained beam search, ``decoding.constraints``), from its prefix.
* ``alignment``: the same inputs and ``target`` (each sentence's given translation) ->
  ``source_pieces`` ``(batch, source_len)``, ``target_pieces`` ``(batch, target_len)`` (EOS
  included, ``""`` past the end) and ``attention`` ``(batch, target_len, source_len)`` float32:
  the alignment's (the heads' mean of the decoder layer before the last) as each target piece is
  predicted; ``common.alignment`` makes word alignments of them.
* ``forced_score``: the same inputs and ``target`` (tf.string ``[None]``: each sentence's given
  translation) -> ``score``, ``log_prob``, ``length`` ``(batch,)`` and ``token_log_probs``
  ``(batch, target_len)`` float32 (0 past a target's end): forced decoding.
* On the exported object: the variables ``beam_size_variable``, ``max_source_length_variable``
  and, for a multilingual model, ``languages_variable``; the function ``source_lengths(text,
  target_lang)`` (token counts, without EOS, of the sources as the model reads them).

A classifier's SavedModel (``configs/spam_assassin.py``): ``serving_default`` maps ``text``
(tf.string ``[None]``) to ``label`` (tf.string ``[None]``) and ``score`` (float32 ``[None]``,
that label's probability); ``text_attention`` maps ``text`` to the same and ``pieces``
``(batch, length)`` (what the classifier read of each text, BOS first, ``""`` past its end) and
``attention`` ``(batch, heads, length)`` float32 (what each head of the last layer attended to,
``TextClassifier.pooled_attention``; 0 past the end): the demo page's heat map. Its object holds
``labels_variable`` (the labels, a class id's label at its position) and
``max_length_variable`` (the pieces it reads of a text, BOS included).

A CTranslate2 export: CTranslate2's ``model.bin`` (and vocabularies), our SentencePiece model
``spm.model`` and the search it translates with, ``decoding.json`` (:class:`DecodingSettings`).
Its server gives it the SavedModel's signatures (:data:`SIGNATURE_OUTPUTS`).

A LiteRT export (on-device; :mod:`exports.litert` runs it with ``ai-edge-litert``): a directory
of ``model.tflite``, ``spm.model`` and ``litert.json`` (:class:`LiteRTSettings`). Its signature
``translate_ids`` maps ``source_ids`` int32 ``(batch, source_len)`` (each source's SentencePiece
ids, a multilingual model's with its tag in front, truncated to ``max_source_length - 1``, then
EOS, padded with PAD) to ``output_ids`` int32 ``(batch, out_len)`` (each ends with EOS, then PAD):
the search the work directory's config names, with its length penalty. Builtin ops only. With
``--litert_text`` also ``translate_text``: ``text`` tf.string ``[1]`` (one sentence) to
``translation`` tf.string ``[1]``, tokenized and detokenized in the model by ``tensorflow_text``'s
two SentencePiece custom ops (``SENTENCEPIECE_OPS``; unigram models of one target language).

Imports no TensorFlow.

Example:
    >>> signature_inputs(("de", "fr")), signature_inputs(())
    (('target_lang', 'text'), ('text',))
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Sequence

from common.errors import UserError
from decoding.options import SearchOptions

# Signatures, their inputs and their outputs.
SERVING_DEFAULT = "serving_default"
CROSS_ATTENTION = "cross_attention"
TEXT, TARGET_LANG = "text", "target_lang"
SCORED, N_BEST, FORCED_SCORE = "scored", "n_best", "forced_score"
PREFIXED, ALIGNMENT, CONSTRAINED = "prefixed", "alignment", "constrained"
TARGET, TARGET_PREFIX, TERMS, AVOID = "target", "target_prefix", "terms", "avoid"
TRANSLATION = "translation"
SOURCE_PIECES, TARGET_PIECES, ATTENTION = "source_pieces", "target_pieces", "attention"
SCORE, LOG_PROB, LENGTH = "score", "log_prob", "length"
TOKEN_LOG_PROBS = "token_log_probs"
# The outputs of the scored and n-best signatures, in the order of ``ScoredTranslations``
# (exports of 63998ee and before have no token_log_probs).
SCORED_OUTPUTS = {
    TRANSLATION: ("DT_STRING", 2),
    SCORE: ("DT_FLOAT", 2),
    LOG_PROB: ("DT_FLOAT", 2),
    LENGTH: ("DT_INT32", 2),
    TOKEN_LOG_PROBS: ("DT_FLOAT", 3),
}
# The outputs of forced_score, in the order of ``decoding.translator.TargetScores``.
FORCED_SCORE_OUTPUTS = {
    SCORE: ("DT_FLOAT", 1),
    LOG_PROB: ("DT_FLOAT", 1),
    LENGTH: ("DT_INT32", 1),
    TOKEN_LOG_PROBS: ("DT_FLOAT", 2),
}
# Each signature's outputs as (TensorFlow Serving dtype, rank).
SIGNATURE_OUTPUTS = {
    SERVING_DEFAULT: {TRANSLATION: ("DT_STRING", 1)},
    CROSS_ATTENTION: {
        TRANSLATION: ("DT_STRING", 1),
        SOURCE_PIECES: ("DT_STRING", 2),
        TARGET_PIECES: ("DT_STRING", 2),
        ATTENTION: ("DT_FLOAT", 4),
    },
    SCORED: SCORED_OUTPUTS,
    N_BEST: SCORED_OUTPUTS,
    CONSTRAINED: SCORED_OUTPUTS,
    FORCED_SCORE: FORCED_SCORE_OUTPUTS,
    PREFIXED: {TRANSLATION: ("DT_STRING", 1)},
    ALIGNMENT: {
        SOURCE_PIECES: ("DT_STRING", 2),
        TARGET_PIECES: ("DT_STRING", 2),
        ATTENTION: ("DT_FLOAT", 3),
    },
}
# A classifier's signatures, outputs and variables.
TEXT_ATTENTION, LABEL, PIECES = "text_attention", "label", "pieces"
CLASSIFIER_OUTPUTS = {
    SERVING_DEFAULT: {LABEL: ("DT_STRING", 1), SCORE: ("DT_FLOAT", 1)},
    TEXT_ATTENTION: {
        LABEL: ("DT_STRING", 1),
        SCORE: ("DT_FLOAT", 1),
        PIECES: ("DT_STRING", 2),
        ATTENTION: ("DT_FLOAT", 3),
    },
}
LABELS_VARIABLE, MAX_LENGTH_VARIABLE = "labels_variable", "max_length_variable"
# The string inputs of each signature that takes more than the sources, in its functions' order.
MORE_INPUTS = {
    FORCED_SCORE: (TARGET,),
    PREFIXED: (TARGET_PREFIX,),
    ALIGNMENT: (TARGET,),
    CONSTRAINED: (TARGET_PREFIX, TERMS, AVOID),
}
# What the exported SavedModel object holds besides its signatures.
BEAM_SIZE_VARIABLE = "beam_size_variable"
MAX_SOURCE_LENGTH_VARIABLE = "max_source_length_variable"
LANGUAGES_VARIABLE = "languages_variable"
SOURCE_LENGTHS = "source_lengths"
# The vocabulary shortlist's table and frequent pieces (decoding.shortlist; [] without one).
SHORTLIST_VARIABLES = "shortlist_variables"
# The precision of the model's matrix products: "float32" or "bfloat16".
PRECISION_VARIABLE = "precision_variable"
# The parts of an export that earlier versions lacked, each with the commit that added it. An
# export without one is refused, naming that commit (exports.saved_model.check_version).
ADDED_IN = {
    MAX_SOURCE_LENGTH_VARIABLE: "debda56 (2026-11-25)",
    SOURCE_LENGTHS: "b99ed18 (2026-12-04)",  # its target_lang input
    TOKEN_LOG_PROBS: "78493b7 (2026-12-05)",  # among the scored signature's outputs
}

# A CTranslate2 export's files beside CTranslate2's vocabularies.
CTRANSLATE2_MODEL_FILE = "model.bin"
DECODING_FILE = "decoding.json"
# A CTranslate2 export's vocabulary shortlist, CTranslate2's vocabulary map (used when present).
CTRANSLATE2_VMAP_FILE = "vmap.txt"
TOKENIZER_FILE = "spm.model"
# The weight types a CTranslate2 export can have. Not bfloat16: CTranslate2 converts weights to
# it only with PyTorch installed, which nothing else here needs.
QUANTIZATIONS = ("float32", "int8", "int8_float32", "int16")

# A LiteRT export's files (beside TOKENIZER_FILE), its signature and the weights it can have.
LITERT_MODEL_FILE = "model.tflite"
LITERT_SETTINGS_FILE = "litert.json"
TRANSLATE_IDS, SOURCE_IDS, OUTPUT_IDS = "translate_ids", "source_ids", "output_ids"
TRANSLATE_TEXT = "translate_text"
# The only operators of a LiteRT export that are not LiteRT builtins: tensorflow_text's, in
# translate_text alone (registered by tensorflow_text.tflite_registrar).
SENTENCEPIECE_OPS = (
    "CUSTOM:TFText>FastSentencepieceDetokenize",
    "CUSTOM:TFText>FastSentencepieceTokenize",
)
LITERT_QUANTIZATIONS = ("float32", "float16", "dynamic_int8")


def signature_inputs(languages: Sequence[str], signature: str = SERVING_DEFAULT) -> tuple[str, ...]:
    """The inputs of ``signature`` of a model of ``languages`` (() for one target language),
    sorted as TensorFlow Serving lists them: ``forced_score`` and ``alignment`` also take
    ``target``, ``prefixed`` ``target_prefix``, ``constrained`` ``target_prefix``, ``terms``
    and ``avoid`` (:data:`MORE_INPUTS`)."""
    inputs = (TARGET_LANG, TEXT) if languages else (TEXT,)
    return tuple(sorted((*inputs, *MORE_INPUTS.get(signature, ()))))


class ExportError(UserError, ValueError):
    """A model or option a CTranslate2 export cannot express, or an export CTranslate2 cannot
    load; the message names it and what to do."""


@dataclasses.dataclass(frozen=True)
class DecodingSettings:
    """What ``decoding.json`` holds: the search a CTranslate2 export translates with by default.

    ``length_penalty`` is CTranslate2's (scores divided by ``length ** length_penalty``), not
    GNMT's ``((5 + length) / 6) ** alpha`` (``gnmt_length_penalty``, the work directory's, kept
    for reference). The output length limits and source truncation are the work directory's.
    """

    beam_size: int
    length_penalty: float
    gnmt_length_penalty: float
    max_length_ratio: float
    max_length_offset: float
    max_length: int | None
    max_source_length: int
    quantization: str

    @classmethod
    def read(cls, directory: str) -> DecodingSettings:
        return cls(**_export_settings(directory, DECODING_FILE, "CTranslate2", "ctranslate2"))

    def search_options(self, beam_size: int | None = None) -> SearchOptions:
        """The search's options (output length limits, beam size; GNMT's length penalty)."""
        return SearchOptions(
            beam_size=self.beam_size if beam_size is None else beam_size,
            length_penalty=self.gnmt_length_penalty,
            max_length=self.max_length,
            max_length_ratio=self.max_length_ratio,
            max_length_offset=self.max_length_offset,
        )


@dataclasses.dataclass(frozen=True)
class LiteRTSettings:
    """What ``litert.json`` holds: how the LiteRT export in its directory was made.

    ``beam_size`` and ``length_penalty`` (GNMT's) are the search in ``model.tflite``; the sources
    are truncated to ``max_source_length`` tokens with EOS; ``signatures`` maps each signature
    to its inputs and outputs; ``ops`` lists the model's operators (all LiteRT builtins).
    """

    beam_size: int
    length_penalty: float
    max_source_length: int
    quantization: str
    signatures: dict[str, dict[str, list[str]]]
    ops: list[str]

    @classmethod
    def read(cls, directory: str) -> LiteRTSettings:
        return cls(**_export_settings(directory, LITERT_SETTINGS_FILE, "LiteRT", "litert"))


def _export_settings(directory: str, file_name: str, kind: str, export_format: str) -> dict:
    """The JSON object of an export's settings file; a FileNotFoundError saying how to write
    the export when it is missing (the directory is not such an export)."""
    path = os.path.join(directory, file_name)
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"No {file_name} in {directory}: it is not a {kind} export of this project; write "
            f"one with `python export.py --workdir=DIR --format={export_format} "
            f"--output={directory}`."
        )
    with open(path, encoding="utf-8") as file:
        return json.load(file)
