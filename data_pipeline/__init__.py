"""Data sets, tokenizers and batches for Transformer translation.

Importing this package registers the TFDS builder `multi30k` (see `data_pipeline.multi30k`).

Example:
    >>> import data_pipeline as dp
    >>> data = dp.spec.parse("multi30k/de-en")  # the config's data.name, parsed once
    >>> splits = dp.load_translation_splits(data, ["train", "validation"])
    >>> tok = dp.load_or_train_tokenizer("/tmp/run/spm.model", splits["train"], vocab_size=8000)
    >>> batches = dp.make_batches(splits["train"], tok, max_length=128, tokens_per_batch=4096,
    ...                           shuffle=True, seed=0, repeat=True)
"""

from data_pipeline import (
    multi30k,  # noqa: F401  (registers the `multi30k` TFDS builder)
    spec,
)
from data_pipeline.batching import (
    BatchStats,
    bucket_batch_sizes,
    default_bucket_boundaries,
    make_batches,
    make_batches_with_stats,
)
from data_pipeline.datasets import (
    load_corpus,
    load_direction_splits,
    load_training_split,
    load_translation_splits,
    model_pairs,
    pair_texts,
)
from data_pipeline.errors import DataError
from data_pipeline.multi30k import Multi30k
from data_pipeline.raw_text import read_lines, read_parallel
from data_pipeline.spec import Corpus, DataSpec, Direction
from data_pipeline.tokenizer import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    UNK_ID,
    Tokenizer,
    load_or_train_tokenizer,
    normalize_text,
    train_sentencepiece,
)

__all__ = [
    "BOS_ID",
    "EOS_ID",
    "PAD_ID",
    "UNK_ID",
    "BatchStats",
    "Corpus",
    "DataError",
    "DataSpec",
    "Direction",
    "Multi30k",
    "Tokenizer",
    "bucket_batch_sizes",
    "default_bucket_boundaries",
    "load_corpus",
    "load_direction_splits",
    "load_or_train_tokenizer",
    "load_training_split",
    "load_translation_splits",
    "make_batches",
    "make_batches_with_stats",
    "model_pairs",
    "normalize_text",
    "pair_texts",
    "read_lines",
    "read_parallel",
    "spec",
    "train_sentencepiece",
]
