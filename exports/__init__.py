"""Exported models: the export contract and the runtimes that read exports.

``contract`` (every signature, input, output, variable and file name of an export, and the
CTranslate2 export's ``decoding.json``; no TensorFlow), ``saved_model`` (``SavedModelTranslator``:
TensorFlow and ``tensorflow_text`` only), ``ctranslate2`` (``CTranslate2Translator``: ctranslate2
and sentencepiece, no TensorFlow). The exporters live in ``inference/``; the server reads
exports through this package alone. The package imports none of its modules.

Example:
    >>> from exports.saved_model import SavedModelTranslator
    >>> SavedModelTranslator("runs/de_en/saved_model").translate(["Ein Hund rennt."])
    ['A dog is running.']
"""
