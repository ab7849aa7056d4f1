"""Using a trained work directory: translators, evaluation, and writing SavedModel and
CTranslate2 exports (through ``exports.contract``; reading them is ``exports/``).

The package imports none of its modules.

Example:
    >>> from inference.loading import load_translator
    >>> translator, checkpoint = load_translator("runs/multi30k_de_en", "averaged")
"""
