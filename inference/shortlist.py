"""Building a run's vocabulary shortlist (:mod:`decoding.shortlist`) from its training data.

For each source piece, its ``k`` target pieces are those found most often in the same training
pair (Marian's lexical shortlist ranks by ``p(t | s)``, the same order); the ``frequent`` most
frequent target pieces are kept for every batch. The criterion and both sizes were chosen by
measurement (``benchmarks/shortlist.py``, docs/RESULTS.md). The shortlist is written into the
work directory (``RunDirectory.shortlist``) and from there into every export.

Example:
    >>> counts = Cooccurrences.count([(np.array([5, 6]), np.array([7, 8]))], vocab_size=10)
    >>> shortlist = counts.shortlist(k=1, frequent=1)
    >>> shortlist.table[5].tolist(), shortlist.frequent.tolist()
    ([7], [7])
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Iterator

import numpy as np

from common.files import atomic_file
from common.special_tokens import EOS_ID, PAD_ID
from data_pipeline.datasets import load_training_split
from data_pipeline.tokenizer import Tokenizer
from decoding.shortlist import Shortlist
from rundir.config import data_spec, load_config
from rundir.layout import RunDirectory

# Each source piece's target pieces, and the most frequent target pieces every batch keeps:
# the defaults measured in docs/RESULTS.md.
DEFAULT_K = 50
DEFAULT_FREQUENT = 1000
# Pairs counted at once.
_CHUNK = 20_000


@dataclasses.dataclass(frozen=True)
class Cooccurrences:
    """How often source and target pieces appear in the same pair.

    pairs: int64 ``(source piece, target piece)`` keys ``s * vocab_size + t``, sorted, and
        ``counts``: the pairs holding both;
    source_counts, target_counts: the pairs holding each piece; target_tokens: each target
    piece's occurrences.
    """

    vocab_size: int
    pairs: np.ndarray
    counts: np.ndarray
    source_counts: np.ndarray
    target_counts: np.ndarray
    target_tokens: np.ndarray

    @classmethod
    def count(
        cls, id_pairs: Iterable[tuple[np.ndarray, np.ndarray]], vocab_size: int
    ) -> Cooccurrences:
        """Counts ``(source ids, target ids)`` pairs, a chunk at a time (memory: the distinct
        piece pairs, not the pairs)."""
        pairs, counts = np.zeros(0, np.int64), np.zeros(0, np.int64)
        source_counts = np.zeros(vocab_size, np.int64)
        target_counts = np.zeros(vocab_size, np.int64)
        target_tokens = np.zeros(vocab_size, np.int64)
        for chunk in _chunks(id_pairs, _CHUNK):
            keys = []
            for source, target in chunk:
                source, target = np.unique(source), np.unique(target)
                source_counts[source] += 1
                target_counts[target] += 1
                keys.append((source[:, np.newaxis] * vocab_size + target).ravel())
            for _, target in chunk:
                np.add.at(target_tokens, target, 1)
            keys, key_counts = np.unique(np.concatenate(keys), return_counts=True)
            pairs, inverse = np.unique(np.concatenate([pairs, keys]), return_inverse=True)
            counts = np.bincount(
                inverse, np.concatenate([counts, key_counts]), minlength=len(pairs)
            ).astype(np.int64)
        return cls(vocab_size, pairs, counts, source_counts, target_counts, target_tokens)

    def shortlist(self, k: int = DEFAULT_K, frequent: int = DEFAULT_FREQUENT) -> Shortlist:
        """Each source piece's ``k`` target pieces of most co-occurrences (PAD where it
        co-occurs with fewer), and the ``frequent`` most frequent target pieces."""
        return self.ranked(self.counts, k, frequent)

    def ranked(self, ranks: np.ndarray, k: int, frequent: int) -> Shortlist:
        """:meth:`shortlist` by ``ranks``, one for each of :attr:`pairs` (higher first; ties:
        the lower target id)."""
        if k < 1 or frequent < 0:
            raise ValueError(f"k must be positive and frequent not negative, got {k}, {frequent}.")
        source, target = self.pairs // self.vocab_size, self.pairs % self.vocab_size
        order = np.lexsort((target, -ranks, source))  # by source piece, best first
        source, target = source[order], target[order]
        first = np.searchsorted(source, np.arange(self.vocab_size))
        rank = np.arange(len(source)) - first[source]
        kept = rank < k
        table = np.full([self.vocab_size, k], PAD_ID, np.int32)
        table[source[kept], rank[kept]] = target[kept]
        by_frequency = np.argsort(-self.target_tokens, kind="stable")
        common = by_frequency[: min(frequent, int((self.target_tokens > 0).sum()))]
        return Shortlist(table, np.sort(common).astype(np.int32))


def _chunks(items: Iterable, size: int) -> Iterator[list]:
    chunk = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def training_id_pairs(
    workdir: str, tokenizer: Tokenizer
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The run's training pairs as the model reads them, tokenized: ``(source ids, target
    ids)``, EOS included, streamed."""
    config = load_config(workdir)
    pairs, _ = load_training_split(data_spec(config), config.data.train_split)
    batches = pairs.batch(1024).map(
        lambda source, target: (tokenizer.tokenize(source), tokenizer.tokenize(target))
    )
    eos = np.array([EOS_ID])
    for sources, targets in batches.as_numpy_iterator():
        for source, target in zip(sources, targets, strict=True):
            yield np.concatenate([source, eos]), np.concatenate([target, eos])


def build_shortlist(
    workdir: str, k: int = DEFAULT_K, frequent: int = DEFAULT_FREQUENT
) -> Shortlist:
    """Counts the run's training pairs and writes its shortlist (``RunDirectory.shortlist``,
    atomically); returns it."""
    run = RunDirectory(workdir)
    load_config(workdir)  # a one-line error for what is not a work directory
    tokenizer = Tokenizer.from_file(run.tokenizer)
    counts = Cooccurrences.count(training_id_pairs(workdir, tokenizer), tokenizer.vocab_size)
    shortlist = counts.shortlist(k, frequent)
    write_shortlist(run.shortlist, shortlist)
    return shortlist


def write_shortlist(path: str, shortlist: Shortlist) -> None:
    with atomic_file(path, binary=True) as file:
        np.savez(file, table=shortlist.table, frequent=shortlist.frequent)


def read_shortlist(path: str) -> Shortlist | None:
    """The shortlist written at ``path``, or None when there is none."""
    if not os.path.exists(path):
        return None
    with np.load(path) as arrays:
        return Shortlist(arrays["table"], arrays["frequent"])
