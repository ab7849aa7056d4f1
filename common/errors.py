"""The errors a user can act on, and the config's error type.

Each project error type derives from :class:`UserError`: its message says what is wrong, which
file, key or flag, and what to do, and the command-line scripts print it as one line
(``cli.errors``) instead of a traceback. This module imports nothing, so every layer (and the
CTranslate2 runtime, which needs no TensorFlow) can raise them.

Example:
    >>> raise ConfigError("config.model.d_model = 30 is invalid: it must be even.")
    Traceback (most recent call last):
    ...
    common.errors.ConfigError: config.model.d_model = 30 is invalid: it must be even.
"""


class UserError(Exception):
    """An error whose message is the one line to show the user (what, where, what to do)."""


class ConfigError(UserError, ValueError):
    """A configuration value, a work directory's ``config.json`` or an option is invalid; the
    message names the key."""
