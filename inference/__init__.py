"""Using a trained work directory: translators, evaluation, SavedModel and CTranslate2 exports.

The package imports none of its modules: ``ctranslate2_translator`` (running a CTranslate2
export) and ``ctranslate2_files`` import no TensorFlow.

Example:
    >>> from inference.loading import load_translator
    >>> translator, checkpoint = load_translator("runs/multi30k_de_en", "averaged")
"""
