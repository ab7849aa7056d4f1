"""A training work directory as training and inference both read it: its config, its model
built from that config, its checkpoints.

Modules: ``layout`` (``RunDirectory``: every path of a run, spelt once), ``config``
(``config.json`` and the data spec it names), ``model`` (``build_model``: the Transformer of a
config), ``checkpoints`` (the model's variables by name, which checkpoint to read, one-line
accounts of a checkpoint that cannot be read or written). Training writes a work directory,
inference reads it; both import this package and never each other.

Example:
    >>> from rundir.model import build_workdir_model
    >>> model, tokenizer = build_workdir_model("runs/multi30k_de_en")   # untrained weights
"""
