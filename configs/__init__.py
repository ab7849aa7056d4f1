"""ml_collections configuration files; load one with ``--config=configs/NAME.py``."""
