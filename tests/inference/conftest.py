"""Fixtures of the inference tests: runs in other states, and a copy model (confident: its
translations measure agreement between runtimes, not float ties)."""

import os
import shutil
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

import data_pipeline
from data_pipeline import Tokenizer
from data_pipeline.tokenizer import train_sentencepiece
from decoding.options import SearchOptions
from decoding.translator import ModelTranslator
from inference.evaluation import read_split
from tests.conftest import built_once
from tests.workdirs import at_its_first_checkpoint
from transformer import Transformer, TransformerConfig

COPY_TRAINING_STEPS = 250
DE_EN = data_pipeline.spec.parse("multi30k/de-en").corpus


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


@pytest.fixture(scope="session")
def tokenizer(tiny_run) -> Tokenizer:
    return Tokenizer.from_file(os.path.join(tiny_run[0], "spm.model"))


def _train_to_copy(model: Transformer, vocab_size: int) -> None:
    """COPY_TRAINING_STEPS of Adam on random piece sequences, each its own target."""
    optimizer = keras.optimizers.Adam(5e-3)
    optimizer.build(model.trainable_variables)
    rng = np.random.default_rng(0)

    @tf.function(autograph=False)
    def train_step(source, target_in, target_out):
        with tf.GradientTape() as tape:
            logits = model((source, target_in), training=True)
            weights = tf.cast(target_out != 0, tf.float32)
            losses = keras.losses.sparse_categorical_crossentropy(
                target_out, logits, from_logits=True
            )
            loss = tf.reduce_sum(losses * weights) / tf.reduce_sum(weights)
        variables = model.trainable_variables
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables, strict=True))
        return loss

    longest = 40
    for _ in range(COPY_TRAINING_STEPS):
        source = np.zeros([64, longest + 1], np.int32)  # random pieces, then EOS (3), padding
        target_in = np.zeros_like(source)
        target_out = np.zeros_like(source)
        for row, length in enumerate(rng.integers(2, longest, size=64)):
            pieces = rng.integers(4, vocab_size, size=length)
            source[row, : length + 1] = [*pieces, 3]
            target_in[row, : length + 1] = [2, *pieces]
            target_out[row, : length + 1] = [*pieces, 3]
        loss = train_step(source, target_in, target_out)
    assert loss < 0.2, f"the copy model did not learn to copy (loss {float(loss):.3f})"


@pytest.fixture(scope="session")
def copy_model(tokenizer, tmp_path_factory) -> Transformer:
    """A tiny model trained to copy its source: confident on every sentence, so that agreement
    measures the runtimes and not float ties (a 60-step model has near-ties everywhere).
    Trained once per test run: the other test process loads its weights."""
    keras.utils.set_random_seed(0)
    model = Transformer(
        TransformerConfig(
            tokenizer.vocab_size,
            num_layers=1,
            d_model=64,
            num_heads=2,
            d_ff=128,
            dropout=0.0,
            norm_first=True,
        )
    )
    # Built before the step is traced: variables created inside a trace cost a second trace.
    model((tf.ones([1, 2], tf.int32), tf.ones([1, 2], tf.int32)))

    def train(directory: Path) -> None:
        _train_to_copy(model, tokenizer.vocab_size)
        directory.mkdir(parents=True)
        model.save_weights(str(directory / "copy.weights.h5"))

    model.load_weights(str(built_once(tmp_path_factory, "copy-model", train) / "copy.weights.h5"))
    return model


@pytest.fixture(scope="session")
def validation_sentences(tokenizer, tfds_dir) -> list[str]:
    """The first 200 validation sentences of at most 32 pieces (the copy model learnt up to 39)."""
    sources, _ = read_split(DE_EN, "validation", tfds_dir)
    lengths = tokenizer.tokenize(tf.constant(sources)).row_lengths().numpy()
    return [sentence for sentence, length in zip(sources, lengths, strict=True) if length <= 32][
        :200
    ]


@pytest.fixture(scope="session")
def copy_translators(copy_model, tokenizer, validation_sentences):
    """``beam_size -> (our translator, its translations of validation_sentences)``, each
    computed once, with length penalty 0 (the one value both penalties share)."""
    translators = {}
    for beam_size in (1, 4):
        options = SearchOptions(beam_size=beam_size, length_penalty=0.0)
        translator = ModelTranslator(copy_model, tokenizer, options, max_source_length=48)
        translators[beam_size] = (
            translator,
            translator.translate(validation_sentences, progress=False),
        )
    return translators


@pytest.fixture(scope="session")
def bfloat16_copy_model(copy_translators) -> Transformer:
    """The copy model with its matrix products in bfloat16 (the same float32 weights)."""
    model = Transformer(copy_translators[4][0].model.config, dtype="mixed_bfloat16")
    model((tf.ones([1, 2], tf.int32), tf.ones([1, 2], tf.int32)))
    model.set_weights(copy_translators[4][0].model.get_weights())
    return model
