"""Using a trained work directory: load it, evaluate BLEU, export a SavedModel.

Example:
    >>> from inference import load_translator
    >>> translator, checkpoint = load_translator("runs/multi30k_de_en", "averaged")
"""

from inference.loading import load_config, load_model, load_translator

__all__ = ["load_config", "load_model", "load_translator"]
