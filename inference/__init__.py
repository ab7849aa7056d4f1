"""Using a trained work directory: load it, evaluate BLEU, export a SavedModel."""
