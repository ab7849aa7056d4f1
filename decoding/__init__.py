"""Decoding a trained :class:`~transformer.model.Transformer`: greedy and beam search, random
sampling.

Modules: ``options`` (``SearchOptions``: beam size, length penalty, length limits, special ids),
``common`` (output length limits, tokens never generated), ``greedy`` (cached greedy search and the
no-cache reference), ``sampling`` (tokens drawn with top-k, top-p and a temperature, seeded per
sentence), ``beam`` (batched beam search, its n best hypotheses with their scores),
``scoring`` (forced decoding: the log-probabilities of given targets), ``search`` (``decode``, the
entry point), ``ensemble`` (several models decoding as one, in any search), ``translator`` (strings
in, strings out: a ``common.translation.Translator``). All searches run with the model's key/value
cache, inside ``tf.function(jit_compile=True)`` too.

The package imports none of its modules: ``options`` imports no TensorFlow, so the export
contract (``exports.contract``) and the CTranslate2 runtime use it without loading it.

Example:
    >>> from decoding.search import decode
    >>> ids = decode(model, source_ids, SearchOptions(beam_size=4))   # (batch, out_len)
"""
