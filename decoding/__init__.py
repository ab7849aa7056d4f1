"""Decoding a trained :class:`~transformer.model.Transformer`: greedy and beam search.

Modules: ``options`` (``SearchOptions``: beam size, length penalty, length limits, special ids),
``common`` (output length limits, tokens never generated), ``greedy`` (cached greedy search and
the no-cache reference), ``beam`` (batched beam search), ``search`` (``decode``, the entry point),
``ensemble`` (several models decoding as one, in any search), ``translator`` (strings in,
strings out). All searches run with the model's key/value cache, inside
``tf.function(jit_compile=True)`` too.

Example:
    >>> ids = decode(model, source_ids, SearchOptions(beam_size=4))   # (batch, out_len)
"""

from decoding.beam import beam_search, gnmt_length_penalty
from decoding.common import output_length_limits
from decoding.ensemble import Ensemble
from decoding.greedy import greedy_search, reference_greedy_search
from decoding.options import BOS_ID, EOS_ID, PAD_ID, SearchOptions
from decoding.search import decode
from decoding.translator import ModelTranslator, Translator

__all__ = [
    "BOS_ID",
    "EOS_ID",
    "Ensemble",
    "ModelTranslator",
    "PAD_ID",
    "SearchOptions",
    "Translator",
    "beam_search",
    "decode",
    "gnmt_length_penalty",
    "greedy_search",
    "output_length_limits",
    "reference_greedy_search",
]
