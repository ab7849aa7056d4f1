"""Whether LiteRT's SentencePiece ops (tensorflow_text's) can stand in for SentencePiece.

    .venv/bin/python benchmarks/litert_sentencepiece.py --workdir=runs/multi30k_de_en
        [--split=test2016] [--bpe_vocab_size=8000]

``export.py --format=litert --litert_text`` tokenizes and detokenizes in the model with
``tensorflow_text.FastSentencepieceTokenizer``'s LiteRT ops. This measures, in LiteRT itself, on
the sources of ``--split``: the share of sentences whose pieces equal SentencePiece's (Python)
for the work directory's model (unigram) and for a BPE model of ``--bpe_vocab_size`` pieces
trained here on the same training sources; and the share whose pieces, detokenized one sentence
a call, give back SentencePiece's own round trip. Then it detokenizes a batch of two sentences
in a child process and reports how that process ended (a crash is a segmentation fault: why the
text signature takes one sentence a call).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import harness
import numpy as np
import sentencepiece
import tensorflow as tf
import tensorflow_text
from absl import flags
from ai_edge_litert.interpreter import InterpreterWithCustomOps

from cli.errors import run_main
from data_pipeline.tokenizer import train_sentencepiece
from inference.evaluation import read_split
from rundir.config import data_spec, load_config
from rundir.layout import RunDirectory

_WORKDIR = flags.DEFINE_string("workdir", None, "A trained work directory.", required=True)
_SPLIT = flags.DEFINE_string("split", "test2016", "The split whose sources are tokenized.")
_BPE_VOCAB_SIZE = flags.DEFINE_integer("bpe_vocab_size", 8000, "The BPE model's pieces.")


def litert_interpreter(function: tf.types.experimental.ConcreteFunction, owner: tf.Module):
    """``function`` converted to LiteRT (builtins and tensorflow_text's ops) and loaded."""
    converter = tf.lite.TFLiteConverter.from_concrete_functions([function], owner)
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
    converter.allow_custom_ops = True
    interpreter = InterpreterWithCustomOps(
        model_content=converter.convert(),
        custom_op_registerers=tensorflow_text.tflite_registrar.SELECT_TFTEXT_OPS,
    )
    return interpreter.get_signature_runner()


def agreement(model_file: str, sentences: list[str]) -> tuple[float, float]:
    """``(share of sentences tokenized as SentencePiece does, share detokenized back to
    SentencePiece's round trip)`` in LiteRT, one sentence a call."""
    with open(model_file, "rb") as file:
        fast = tensorflow_text.FastSentencepieceTokenizer(file.read())
    processor = sentencepiece.SentencePieceProcessor(model_file=model_file)
    owner = tf.Module()
    owner.fast = fast
    tokenize = litert_interpreter(
        tf.function(
            lambda text: {"ids": fast.tokenize(text).values},
            input_signature=[tf.TensorSpec([1], tf.string, name="text")],
        ).get_concrete_function(),
        owner,
    )
    detokenize = litert_interpreter(
        tf.function(
            lambda ids: {
                "text": fast.detokenize(
                    tf.RaggedTensor.from_row_splits(ids, tf.stack([0, tf.size(ids)]))
                )
            },
            input_signature=[tf.TensorSpec([None], tf.int32, name="ids")],
        ).get_concrete_function(),
        owner,
    )
    same_ids = same_text = 0
    for sentence in sentences:
        expected = processor.encode(sentence)
        ids = tokenize(text=np.array([sentence], dtype=object))["ids"].tolist()
        same_ids += ids == expected
        text = detokenize(ids=np.array(expected, np.int32))["text"][0].decode()
        same_text += text == processor.decode(expected)
    return same_ids / len(sentences), same_text / len(sentences)


BATCH_OF_TWO = """
import numpy as np, sys, tensorflow as tf, tensorflow_text
from ai_edge_litert.interpreter import InterpreterWithCustomOps
fast = tensorflow_text.FastSentencepieceTokenizer(open(sys.argv[1], "rb").read())
owner = tf.Module(); owner.fast = fast
function = tf.function(
    lambda ids: {"text": fast.detokenize(tf.RaggedTensor.from_tensor(ids, padding=0,
                 row_splits_dtype=tf.int32))},
    input_signature=[tf.TensorSpec([None, None], tf.int32)]).get_concrete_function()
converter = tf.lite.TFLiteConverter.from_concrete_functions([function], owner)
converter.allow_custom_ops = True
interpreter = InterpreterWithCustomOps(model_content=converter.convert(),
    custom_op_registerers=tensorflow_text.tflite_registrar.SELECT_TFTEXT_OPS)
print(interpreter.get_signature_runner()(ids=np.array([[5, 6, 7], [8, 9, 0]], np.int32)))
"""


def batch_of_two_ends(model_file: str) -> str:
    """How a child process detokenizing a batch of two sentences in LiteRT ended."""
    completed = subprocess.run(
        [sys.executable, "-c", BATCH_OF_TWO, model_file], capture_output=True, text=True
    )
    if completed.returncode == -11:
        return "killed by a segmentation fault (SIGSEGV)"
    return f"exit code {completed.returncode}: {completed.stdout.strip()[-200:]}"


def main(argv: list[str]) -> None:
    del argv
    harness.start(__doc__)
    config = load_config(_WORKDIR.value)
    data = data_spec(config)
    sources, _ = read_split(data.corpus, _SPLIT.value, data.data_dir)
    train_sources, _ = read_split(data.corpus, "train", data.data_dir)
    unigram = RunDirectory(_WORKDIR.value).tokenizer
    with tempfile.TemporaryDirectory() as directory:
        bpe = train_sentencepiece(
            train_sources, os.path.join(directory, "bpe"), _BPE_VOCAB_SIZE.value, "bpe"
        )
        harness.print_config(
            "data",
            {
                "sentences": f"{data.name} {_SPLIT.value} sources ({len(sources)})",
                "unigram": f"{unigram} ({config.tokenizer.model_type})",
                "bpe": f"{_BPE_VOCAB_SIZE.value} pieces, trained on {len(train_sources)} "
                "training sources",
            },
        )
        print(f"\n{'model':<10} {'pieces as SentencePiece':>24} {'text as SentencePiece':>22}")
        for name, model_file in (("unigram", unigram), ("bpe", bpe)):
            same_ids, same_text = agreement(model_file, sources)
            print(f"{name:<10} {same_ids:>24.1%} {same_text:>22.1%}")
        print(f"\ndetokenizing a batch of two sentences: {batch_of_two_ends(unigram)}")


if __name__ == "__main__":
    run_main(main)
