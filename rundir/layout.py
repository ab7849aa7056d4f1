"""Where each file of a run is in its work directory: every path of a run, spelt here once.

::

    WORKDIR/
      config.json          the config the run trains with (rundir.config)
      spm.model            its SentencePiece model
      split.json           a classifier's labels and its data's split (data_pipeline.labelled_text)
      shortlist.npz        its vocabulary shortlist (inference.shortlist)
      checkpoints/         model and optimizer, the newest train.keep_checkpoints, and beside each
                           the data position of each worker (data-worker<i>-<step>)
      best/                the model of the best validation BLEU, and best.json (its scores)
      averaged/            the mean of the last checkpoints (average_checkpoints.py)
      tensorboard/         the run's summaries
      eval/                validation translations (validation-step<N>.txt), each validation's
                           BLEU (validations.json) and evaluate.py's files: its own,
                           ensemble/'s, ctranslate2-<export>/'s
      .worker-<i>/         a non-chief worker's scratch copies while a multi-worker run trains

Example:
    >>> run = RunDirectory("runs/de_en")
    >>> run.checkpoints, run.data_position(worker=0, step=200)
    ('runs/de_en/checkpoints', 'runs/de_en/checkpoints/data-worker0-200')
"""

from __future__ import annotations

import dataclasses
import os


@dataclasses.dataclass(frozen=True)
class RunDirectory:
    """The paths of the run in the work directory ``root``."""

    root: str

    def _path(self, *parts: str) -> str:
        return os.path.join(self.root, *parts)

    @property
    def config(self) -> str:
        return self._path("config.json")

    @property
    def tokenizer(self) -> str:
        return self._path("spm.model")

    @property
    def split(self) -> str:
        """A classifier's labels and the names of each split's examples (JSON)."""
        return self._path("split.json")

    @property
    def checkpoints(self) -> str:
        return self._path("checkpoints")

    def data_position(self, worker: int, step: int | str) -> str:
        """Worker ``worker``'s position in the training data at ``step`` (a checkpoint prefix;
        ``step="*"`` globs every step's)."""
        return self._path("checkpoints", f"data-worker{worker}-{step}")

    @property
    def shortlist(self) -> str:
        """The vocabulary shortlist (``inference.shortlist``; numpy's .npz)."""
        return self._path("shortlist.npz")

    @property
    def best(self) -> str:
        return self._path("best")

    @property
    def best_scores(self) -> str:
        """The validation scores of the best checkpoint (JSON)."""
        return self._path("best", "best.json")

    @property
    def averaged(self) -> str:
        return self._path("averaged")

    @property
    def tensorboard(self) -> str:
        return self._path("tensorboard")

    @property
    def eval(self) -> str:
        return self._path("eval")

    @property
    def validations(self) -> str:
        """Each validation's step and BLEU (JSON), for early stopping."""
        return self._path("eval", "validations.json")

    def validation_translations(self, step: int) -> str:
        return self._path("eval", f"validation-step{step}.txt")

    def evaluation(
        self, ensemble: bool = False, ctranslate2_export: str = "", litert_export: str = ""
    ) -> str:
        """Where ``evaluate.py`` writes its files: ``eval/``, ``eval/ensemble/`` for an
        ensemble, ``eval/ctranslate2-<name>/`` for a CTranslate2 export and
        ``eval/litert-<name>/`` for a LiteRT export (the directory's name; given as its
        ``model.tflite``, the directory holding it).
        """
        if ctranslate2_export:
            name = os.path.basename(os.path.normpath(ctranslate2_export))
            return self._path("eval", f"ctranslate2-{name}")
        if litert_export:
            directory = os.path.normpath(litert_export)
            if directory.endswith(".tflite"):
                directory = os.path.dirname(os.path.abspath(directory))
            return self._path("eval", f"litert-{os.path.basename(directory)}")
        return self._path("eval", "ensemble") if ensemble else self.eval

    def worker_scratch(self, task_id: int) -> str:
        """Where a non-chief worker writes its (required) copies of collective saves."""
        return self._path(f".worker-{task_id}")
