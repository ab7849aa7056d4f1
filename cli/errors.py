"""One-line errors instead of tracebacks: ``run_main`` is the last line of every script.

Bad input (a config, a data set, a flag) and faults of the environment (a full disk, a directory
that cannot be written, an unreadable checkpoint, a non-finite loss) end a script with one line
``error: ...`` saying what happened, which file, what is kept and what to do; ``--traceback``
adds the Python traceback (for a bug report). These are the :class:`common.errors.UserError`
types, files that do not exist, and refusals of the file system (``common.storage``).
"""

from __future__ import annotations

import ast
import os
import sys
import traceback
from collections.abc import Callable

from absl import app, flags

from common.errors import UserError
from common.storage import storage_error

_TRACEBACK = flags.DEFINE_boolean(
    "traceback", False, "On an error, print the Python traceback before the one-line message."
)


def error_line(error: BaseException) -> str | None:
    """The one line a script prints for an error the user can act on, or None (a bug: the
    traceback is printed).

    Example:
        >>> error_line(OSError(errno.EROFS, "Read-only file system", "/mnt/ro/run"))
        'error: The file system is read-only while writing /mnt/ro/run; anything written there
        before is unchanged. Make it writable or choose another directory, then rerun.'
    """
    storage = storage_error(error)
    if storage is not None:
        return f"error: {storage}"
    if isinstance(error, UserError | FileNotFoundError):
        return f"error: {error}"
    return None


def config_file_problem(path: str) -> str | None:
    """Why the config file ``path`` (a ``--config`` value; an ``:argument`` suffix aside) cannot
    give a config: it does not exist, is not Python or defines no ``get_config``; else None.

    Example:
        >>> config_file_problem("configs/tiny.py") is None
        True
        >>> config_file_problem("configs/tiny")[:41]
        'The config file configs/tiny does not exi'
    """
    path = path.split(":", 1)[0]
    if not os.path.isfile(path):
        return (
            f"The config file {path} does not exist; give one of configs/*.py "
            "(e.g. --config=configs/multi30k_de_en.py) or a path from this directory."
        )
    with open(path, "rb") as file:
        try:
            module = ast.parse(file.read(), path)
        except SyntaxError as error:
            return f"The config file {path} is not valid Python: line {error.lineno}: {error.msg}."
    defined = set()
    for node in module.body:
        if isinstance(node, ast.FunctionDef):
            defined.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            defined.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Assign):
            defined.update(target.id for target in node.targets if isinstance(target, ast.Name))
    if not defined & {"get_config", "*"}:
        return (
            f"The config file {path} defines no get_config(), the function that returns the "
            "config (see configs/tiny.py)."
        )
    return None


def _config_file_problem(argv: list[str]) -> str | None:
    """Why a config flag's file (its last value in ``argv``, else its default) cannot give a
    config; ml_collections would report it in many lines, or only when the config is used."""
    for name in flags.FLAGS:
        if flags.FLAGS[name].flag_type() != "config object":  # DEFINE_config_file's flags
            continue
        path = getattr(flags.FLAGS[name], "default_unparsed", None)
        for index, argument in enumerate(argv[1:], 1):
            if argument in (f"-{name}", f"--{name}") and index + 1 < len(argv):
                path = argv[index + 1]
            elif argument.startswith((f"-{name}=", f"--{name}=")):
                path = argument.split("=", 1)[1]
        problem = path and config_file_problem(path)
        if problem:
            return problem
    return None


def _without_config_traceback(message: str) -> str:
    """ml_collections puts the traceback of an error raised by a config file's ``get_config()``
    (a bad ``--config=FILE:argument``) in the flag's message: keep its last line's text."""
    flag, marker, trace = message.partition("Error whilst parsing config file:")
    if not marker or not trace.strip():
        return message
    error_type, _, error_text = trace.strip().splitlines()[-1].partition(": ")
    return flag + (error_text or error_type)


def _parse_flags(argv: list[str]) -> list[str]:
    problem = _config_file_problem(argv)
    if problem:
        sys.exit(f"error: {problem}")
    try:
        return flags.FLAGS(argv)
    except (flags.Error, AttributeError, KeyError, ValueError, TypeError, OSError) as error:
        message = _without_config_traceback(str(error))
        message = message.strip("'\"").replace("\\n", " ").replace("\\'", "'")
        sys.exit(f"error: bad command line: {message}\nRun `{argv[0]} --helpshort` for the flags.")


def run_main(main: Callable[[list[str]], None]) -> None:
    """``absl.app.run(main)``, turning the errors the user can act on into one-line messages
    (:func:`error_line`).

    Example:
        >>> run_main(main)  # the last line of a script
    """

    def guarded(argv: list[str]) -> None:
        try:
            main(argv)
        except KeyboardInterrupt:
            sys.exit(130)
        except Exception as error:
            line = error_line(error)
            if line is None:
                raise
            if _TRACEBACK.value:
                traceback.print_exc()
            sys.exit(line)

    app.run(guarded, flags_parser=_parse_flags)
