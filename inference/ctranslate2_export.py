"""A trained model as a CTranslate2 model directory: fast CPU decoding, int8 weights too.

The directory holds what ``ctranslate2.Translator`` loads (``model.bin``, ``config.json``, the
vocabulary) and, beside it, our SentencePiece model (``spm.model``) and the decoding options
(``decoding.json``) that :class:`~exports.ctranslate2.CTranslate2Translator` reads, all named
by :mod:`exports.contract`.
The conversion goes through CTranslate2's own converter API (:class:`TransformerConverter`
returns a ``TransformerSpec``), so CTranslate2 validates and quantizes the weights itself.

What the mapping sets explicitly, because CTranslate2's defaults differ from our model:

* the position table: ours interleaves sines and cosines (PE(pos, 2i) = sin, PE(pos, 2i+1) =
  cos, as in the paper); CTranslate2's built-in sinusoid puts all sines first. The table is written
  for every position a translation can reach.
* the layer-norm epsilon (ours, ``transformer.settings.LAYER_NORM_EPSILON``; CTranslate2's
  default is 1e-5).
* the special tokens: pieces in id order, so CTranslate2's ids are ours; ``<s>`` starts the
  decoder, ``</s>`` is appended to every source (``add_source_eos``), as in training.
* the vocabulary shortlist, when the translator has one (:mod:`decoding.shortlist`): written as
  CTranslate2's vocabulary map (``vmap.txt``: a source piece, a tab, its target pieces; the
  empty source's, the frequent pieces), which the export's readers use (``use_vmap``).

Pre-norm and post-norm, different encoder and decoder depths and the three embedding-sharing
modes map one to one. An ensemble cannot be expressed (CTranslate2 decodes one model).

Example:
    >>> translator, _ = load_translator("runs/multi30k_de_en", "averaged")
    >>> export_ctranslate2(translator, "runs/multi30k_de_en/ct2_int8", quantization="int8",
    ...                    length_penalty=0.6)
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

import ctranslate2
import numpy as np
import tensorflow as tf
from ctranslate2.specs import common_spec, transformer_spec

from common.files import atomic_directory, write_json
from common.metrics import bleu
from common.special_tokens import SPECIAL_PIECES
from data_pipeline import DataSpec
from decoding.alignment import alignment_layer
from decoding.ensemble import Ensemble
from decoding.shortlist import Shortlist
from decoding.translator import ModelTranslator
from exports.contract import (
    CTRANSLATE2_VMAP_FILE,
    DECODING_FILE,
    QUANTIZATIONS,
    TOKENIZER_FILE,
    DecodingSettings,
    ExportError,
)
from exports.ctranslate2 import CTranslate2Translator
from inference.evaluation import read_split
from rundir.config import data_spec, load_config
from transformer import Transformer
from transformer.embedding import positional_encoding
from transformer.settings import LAYER_NORM_EPSILON

LENGTH_PENALTY_CANDIDATES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.2)


def _linear(spec: common_spec.LinearSpec, *dense_layers) -> None:
    """Keras Dense layers (kernel ``(in, out)``) -> one CTranslate2 linear (weight ``(out, in)``),
    concatenated along the outputs when several (fused query/key/value projections)."""
    spec.weight = np.concatenate([layer.kernel.numpy().T for layer in dense_layers], axis=0)
    if dense_layers[0].bias is not None:
        spec.bias = np.concatenate([layer.bias.numpy() for layer in dense_layers], axis=0)


def _layer_norm(spec: common_spec.LayerNormSpec, norm) -> None:
    spec.gamma = norm.gamma.numpy()
    spec.beta = norm.beta.numpy()


def _self_attention(spec, attention, norm) -> None:
    _linear(spec.linear[0], attention.W_q, attention.W_k, attention.W_v)
    _linear(spec.linear[1], attention.W_o)
    _layer_norm(spec.layer_norm, norm)


def _feed_forward(spec, layer) -> None:
    _linear(spec.linear_0, layer.feed_forward.hidden)
    _linear(spec.linear_1, layer.feed_forward.output_projection)
    _layer_norm(spec.layer_norm, layer.feed_forward_norm)


class TransformerConverter(ctranslate2.converters.Converter):
    """Converts a built :class:`transformer.Transformer` and its vocabulary into a CTranslate2
    ``TransformerSpec`` (see the module docstring for what is set explicitly).

    Args:
        model: the model, float32 weights.
        pieces: the SentencePiece pieces in id order (source and target share them).
        max_positions: rows of the position table: the longest source or output it can read.

    Example:
        >>> TransformerConverter(model, pieces, 200).convert("/tmp/ct2", quantization="int8")
    """

    def __init__(self, model: Transformer, pieces: list[str], max_positions: int) -> None:
        self.model, self.pieces, self.max_positions = model, pieces, max_positions

    def _load(self) -> transformer_spec.TransformerSpec:
        model, config = self.model, self.model.config
        encoder = transformer_spec.TransformerEncoderSpec(
            config.num_layers, config.num_heads, pre_norm=config.norm_first
        )
        # CTranslate2's attention (return_attention) is our alignment's: the heads' mean of
        # the layer decoding.alignment chooses.
        decoder = transformer_spec.TransformerDecoderSpec(
            config.num_decoder_layers,
            config.num_heads,
            pre_norm=config.norm_first,
            alignment_layer=alignment_layer(config.num_decoder_layers),
            alignment_heads=config.num_heads,
        )
        positions = positional_encoding(tf.range(self.max_positions), config.d_model).numpy()
        encoder.embeddings[0].weight = model.source_embedding.embedding.embeddings.numpy()
        encoder.position_encodings.encodings = positions
        for spec, layer in zip(encoder.layer, model.encoder_layers, strict=True):
            _self_attention(spec.self_attention, layer.self_attention, layer.self_attention_norm)
            _feed_forward(spec.ffn, layer)
        decoder.embeddings.weight = model.target_embedding.embedding.embeddings.numpy()
        decoder.position_encodings.encodings = positions
        for spec, layer in zip(decoder.layer, model.decoder_layers, strict=True):
            _self_attention(spec.self_attention, layer.self_attention, layer.self_attention_norm)
            cross = layer.cross_attention
            _linear(spec.attention.linear[0], cross.W_q)
            _linear(spec.attention.linear[1], cross.W_k, cross.W_v)
            _linear(spec.attention.linear[2], cross.W_o)
            _layer_norm(spec.attention.layer_norm, layer.cross_attention_norm)
            _feed_forward(spec.ffn, layer)
        if config.norm_first:  # pre-norm stacks end with a layer norm
            _layer_norm(encoder.layer_norm, model.encoder_norm)
            _layer_norm(decoder.layer_norm, model.decoder_norm)
        if model.output_projection is None:  # tied to the target embedding
            decoder.projection.weight = decoder.embeddings.weight
        else:
            _linear(decoder.projection, model.output_projection)

        spec = transformer_spec.TransformerSpec(encoder, decoder)
        spec.config.layer_norm_epsilon = LAYER_NORM_EPSILON
        spec.config.add_source_eos = True
        spec.config.bos_token, spec.config.eos_token = "<s>", "</s>"
        spec.config.unk_token, spec.config.decoder_start_token = "<unk>", "<s>"
        spec.register_source_vocabulary(self.pieces)
        spec.register_target_vocabulary(self.pieces)
        return spec


def export_ctranslate2(
    translator: ModelTranslator,
    output_dir: str,
    quantization: str = "float32",
    length_penalty: float = 0.0,
) -> str:
    """Writes ``translator``'s model as a CTranslate2 model directory, atomically.

    Args:
        translator: a work directory's translator (``inference.loading.load_translator``); its
            beam size, output length limits and source truncation go into ``decoding.json``.
        output_dir: the directory to write; an existing one is replaced only once the new one
            is complete.
        quantization: the weights' type, one of :data:`QUANTIZATIONS`.
        length_penalty: CTranslate2's length penalty (``score / length ** length_penalty``),
            the default of translations with this export.

    Raises:
        ExportError: an ensemble, or an unknown quantization.

    Example:
        >>> export_ctranslate2(translator, "/tmp/run/ct2", quantization="int8")
        '/tmp/run/ct2'
    """
    if isinstance(translator.model, Ensemble):
        raise ExportError(
            "--ensemble cannot be exported to CTranslate2, which decodes one model: export each "
            "work directory on its own, or average checkpoints of one run instead."
        )
    if quantization not in QUANTIZATIONS:
        raise ExportError(
            f"--quantization={quantization} is not one of {', '.join(QUANTIZATIONS)}."
        )
    if length_penalty < 0:
        raise ExportError(f"the length penalty must not be negative, got {length_penalty}.")
    options, tokenizer = translator.options, translator.tokenizer
    pieces = [
        piece.decode("utf-8")
        for piece in tokenizer.id_to_piece(tf.range(tokenizer.vocab_size)).numpy()
    ]
    longest_output = options.output_length_limit(translator.max_source_length)
    converter = TransformerConverter(
        translator.model, pieces, max(translator.max_source_length, longest_output) + 1
    )
    settings = DecodingSettings(
        beam_size=options.beam_size,
        length_penalty=float(length_penalty),
        gnmt_length_penalty=options.length_penalty,
        max_length_ratio=options.max_length_ratio,
        max_length_offset=options.max_length_offset,
        max_length=options.max_length,
        max_source_length=translator.max_source_length,
        quantization=quantization,
    )
    with atomic_directory(output_dir) as staging:
        converter.convert(staging, quantization=quantization, force=True)
        with open(os.path.join(staging, TOKENIZER_FILE), "wb") as file:
            file.write(tokenizer.model_proto)
        write_json(os.path.join(staging, DECODING_FILE), dataclasses.asdict(settings))
        if translator.shortlist is not None:
            with open(os.path.join(staging, CTRANSLATE2_VMAP_FILE), "w", encoding="utf-8") as file:
                file.writelines(vocabulary_map(translator.shortlist, pieces))
    return os.path.abspath(output_dir)


def vocabulary_map(shortlist: Shortlist, pieces: Sequence[str]) -> list[str]:
    """A shortlist as the lines of CTranslate2's vocabulary map: each source piece with target
    pieces, a tab, them (PAD and the other special ids left out: CTranslate2 adds its own),
    and for the empty source, the frequent pieces.

    Example:
        >>> vocabulary_map(Shortlist(np.array([[0], [0], [0], [0], [5]]), np.array([4])),
        ...                ["<pad>", "<unk>", "<s>", "</s>", "▁a", "▁b"])
        ['\t▁a\n', '▁a\t▁b\n']
    """

    def targets(ids: np.ndarray) -> str:
        return " ".join(pieces[i] for i in ids if i not in SPECIAL_PIECES)

    table, frequent = (np.asarray(array) for array in shortlist)
    lines = [f"\t{targets(frequent)}\n"]
    for source, row in enumerate(table):
        if source not in SPECIAL_PIECES and targets(row):
            lines.append(f"{pieces[source]}\t{targets(row)}\n")
    return lines


def set_length_penalty(path: str, length_penalty: float) -> None:
    """Sets the default length penalty of the export in ``path`` (its ``decoding.json``)."""
    settings = DecodingSettings.read(path)
    updated = dataclasses.replace(settings, length_penalty=float(length_penalty))
    write_json(os.path.join(path, DECODING_FILE), dataclasses.asdict(updated))


def choose_length_penalty(
    path: str,
    sources: Sequence[str],
    references: Sequence[str],
    candidates: Sequence[float] = LENGTH_PENALTY_CANDIDATES,
    progress: bool = True,
    target_langs: Sequence[str | None] | None = None,
) -> tuple[float, dict[float, float]]:
    """CTranslate2's length penalty with the best sacreBLEU on ``sources`` (the validation split;
    a multilingual export's each into its ``target_langs``): ``(the best, {candidate: BLEU})``;
    ties go to the smaller penalty.

    Example:
        >>> choose_length_penalty("/tmp/run/ct2", sources, references)
        (0.6, {0.0: 40.1, 0.2: 40.6, ...})
    """
    scores = {}
    for candidate in candidates:
        translator = CTranslate2Translator(path, length_penalty=candidate)
        languages = [None] * len(sources) if target_langs is None else target_langs
        hypotheses = translator.translate_rows(sources, languages, progress=progress)
        scores[candidate] = bleu(hypotheses, references)[0].score
    best = max(candidates, key=lambda candidate: (scores[candidate], -candidate))
    return best, scores


@dataclasses.dataclass(frozen=True)
class CTranslate2Export:
    """What :func:`export_with_length_penalty` wrote: the export's directory, its length penalty
    and, when it was chosen on the validation split, each candidate's BLEU (else empty)."""

    path: str
    length_penalty: float
    scores: dict[float, float]
    validation_split: str | None = None


def export_with_length_penalty(
    translator: ModelTranslator,
    workdir: str,
    output_dir: str,
    quantization: str = "float32",
    length_penalty: float | None = None,
    progress: bool = True,
) -> CTranslate2Export:
    """Exports ``translator`` (``workdir``'s) to CTranslate2 with ``length_penalty``, or, when it
    is None, with the candidate that scores best on ``workdir``'s validation split (0 for greedy
    search, which has none). The split is read before exporting (a missing data set fails fast)
    and the candidates are tried with the export itself.

    Example:
        >>> export_with_length_penalty(translator, "runs/multi30k_de_en", "/tmp/ct2").length_penalty
        0.6
    """
    if length_penalty is None and translator.beam_size == 1:
        length_penalty = 0.0
    if length_penalty is not None:
        path = export_ctranslate2(translator, output_dir, quantization, length_penalty)
        return CTranslate2Export(path, length_penalty, {})
    config = load_config(workdir)
    sources, references, target_langs = _validation_sample(
        data_spec(config), config.data.validation_split, translator.languages
    )
    path = export_ctranslate2(translator, output_dir, quantization)
    best, scores = choose_length_penalty(
        path, sources, references, progress=progress, target_langs=target_langs
    )
    set_length_penalty(path, best)
    return CTranslate2Export(path, best, scores, config.data.validation_split)


def _validation_sample(
    data: DataSpec, split: str, languages: Sequence[str]
) -> tuple[list[str], list[str], list[str | None]]:
    """``(sources, references, target languages)``: the directions' ``split`` one after another
    (those that have it), every n-th pair of that (n: the number of directions); each into its
    direction's target language for a model of several (``languages``: a multilingual model,
    or one fine-tuned from it on one direction), None for a model of one."""
    sources, references, target_langs = [], [], []
    for corpus in data.corpora_with(split):
        direction_sources, direction_references = read_split(corpus, split, data.data_dir)
        sources += direction_sources
        references += direction_references
        target_lang = corpus.direction.target if languages else None
        target_langs += [target_lang] * len(direction_sources)
    stride = len(data.corpora)
    return sources[::stride], references[::stride], target_langs[::stride]
