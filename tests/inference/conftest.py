import os
import shutil

import numpy as np
import pytest

from data_pipeline import Tokenizer
from data_pipeline.tokenizer import train_sentencepiece
from tests.workdirs import at_its_first_checkpoint


@pytest.fixture
def tiny_run_at_its_first_checkpoint(tiny_run, tmp_path) -> str:
    """The tiny run at its first kept checkpoint (:func:`at_its_first_checkpoint`)."""
    return at_its_first_checkpoint(tiny_run[0], tmp_path / "earlier")


@pytest.fixture
def workdir_with_another_tokenizer(tiny_run, tmp_path) -> str:
    """A copy of the tiny run (config and checkpoints) whose SentencePiece model has as many
    pieces, trained on other text: its model loads, but cannot join the tiny run's ensemble."""
    workdir, destination = tiny_run[0], tmp_path / "other"
    shutil.copytree(workdir, destination, ignore=shutil.ignore_patterns("eval", "saved_model*"))
    vocab_size = Tokenizer.from_file(os.path.join(workdir, "spm.model")).vocab_size
    rng = np.random.default_rng(0)
    letters = list("abcdefghijklmnop")
    words = ["".join(rng.choice(letters, size=rng.integers(2, 9))) for _ in range(3000)]
    sentences = [" ".join(rng.choice(words, size=8)) for _ in range(3000)]
    train_sentencepiece(sentences, str(destination / "spm"), vocab_size)
    return str(destination)
