"""What the command-line scripts share, one module a job.

``errors`` (``run_main``: one-line errors instead of tracebacks, a bad ``--config`` file or flag
as one line), ``translator_flags`` (the flags that choose a work directory's translator),
``ctranslate2_flags`` (``--ctranslate2``: an export to translate with), ``quiet`` (TensorFlow's
start-up lines filtered from stderr). A script imports the modules it uses.

Importing the package installs the filter of ``quiet`` when a script of this repository is the
program being run, before any module imports TensorFlow (scripts import ``cli`` first).
"""

from cli import quiet

quiet.install_when_run_as_script()
