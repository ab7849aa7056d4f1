"""Decoding a trained :class:`~transformer.model.Transformer`: greedy and beam search.

Modules: ``common`` (special ids, output length limits), ``greedy`` (cached greedy search and the
no-cache reference), ``beam`` (batched beam search), ``search`` (``decode``, the entry point),
``ensemble`` (several models decoding as one, in any search).
All searches run with the model's key/value cache, inside ``tf.function(jit_compile=True)`` too.

Example:
    >>> ids = decode(model, source_ids, beam_size=4, length_penalty=0.6)   # (batch, out_len)
"""

from decoding.beam import beam_search, gnmt_length_penalty
from decoding.common import BOS_ID, EOS_ID, PAD_ID, output_length_limits
from decoding.ensemble import Ensemble
from decoding.greedy import greedy_search, reference_greedy_search
from decoding.search import decode

__all__ = [
    "BOS_ID",
    "EOS_ID",
    "Ensemble",
    "PAD_ID",
    "beam_search",
    "decode",
    "gnmt_length_penalty",
    "greedy_search",
    "output_length_limits",
    "reference_greedy_search",
]
