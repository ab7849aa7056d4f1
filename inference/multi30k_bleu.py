"""Multi30k's tokenized lower-cased BLEU: the protocol of the published Multi30k results.

Papers on Multi30k (e.g. Wu et al., ACL 2021: 41.02 BLEU for a text-only Transformer, En→De
test2016) score against the data set's own preprocessed references (`data/task1/tok/`), which
the data set's `scripts/task1-tokenize.sh` made from the raw files with Moses: `lowercase.perl |
normalize-punctuation.perl -l L | tokenizer.perl -l L`. Here our detokenized hypotheses go
through the same three steps (`moses_preprocess`, sacremoses, which reproduces every published
reference file from its raw file exactly) and are scored with sacreBLEU's `--tokenize none`
against those files, in the files' line order. The figure is comparable with the literature;
sacreBLEU on detokenized, cased text stays the primary metric.

Example:
    >>> from common.metrics import bleu
    >>> pairs = [("Ein Hund rennt.", "A dog runs."), ...]  # the evaluated (source, target) pairs
    >>> refs = load_tokenized_references("multi30k/de-en", "test2016", pairs)  # doctest: +SKIP
    >>> hypotheses = refs.hypotheses_in_file_order(translations)  # doctest: +SKIP
    >>> bleu(hypotheses, refs.lines, tokenize="none")  # doctest: +SKIP
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Sequence

from data_pipeline import Corpus, DataError, Multi30k
from data_pipeline.multi30k import has_tokenized_references

LABEL = "Multi30k tokenized lower-cased BLEU (the published papers' protocol)"


def moses_preprocess(lines: Sequence[str], language: str) -> list[str]:
    """Each line lower-cased, punctuation-normalised and tokenized for `language` as the data set's
    `scripts/task1-tokenize.sh` does: hyphens kept whole, and ``&'"<>[]|`` escaped (``&amp;``,
    ``&apos;``, ``&quot;``, ...).

    The normaliser runs with sacremoses' ``perl_parity=True`` (a ``’`` that is not between two
    ASCII letters becomes ``"``, as in the Perl script) on the line plus the ``"\\n"`` that the
    Perl script reads with every line: its German and French rule that puts a closing quote
    before the period (``."`` to ``".``) needs a character after the quote, and so applies at the
    end of a line too. The tokenizer is sacremoses' default (``aggressive_dash_splits=False``,
    ``escape=True``).

    Example:
        >>> moses_preprocess(['Ein Schild: „Tee & Kuchen.“'], "de")
        ['ein schild : &quot; tee &amp; kuchen &quot; .']
    """
    import sacremoses  # here: its import compiles its rules (a second), which export.py skips

    normalizer = sacremoses.MosesPunctNormalizer(lang=language, perl_parity=True)
    tokenizer = sacremoses.MosesTokenizer(lang=language)
    return [
        tokenizer.tokenize(
            normalizer.normalize(line.lower() + "\n"),
            aggressive_dash_splits=False,
            escape=True,
            return_str=True,
        )
        for line in lines
    ]


def file_order(
    pairs: Sequence[tuple[str, str]], file_pairs: Sequence[tuple[str, str]]
) -> list[int]:
    """For each of `pairs` (a prepared split's examples, in TFDS's order), the 0-based line of
    the equal pair in `file_pairs` (the raw files' order), each line used once. Equal pairs are
    interchangeable (the same source has the same translation). A `DataError` unless `pairs` is
    a reordering of `file_pairs`.

    Example:
        >>> file_order([("b", "B"), ("a", "A"), ("b", "B")], [("b", "B"), ("b", "B"), ("a", "A")])
        [0, 2, 1]
    """
    lines = collections.defaultdict(collections.deque)
    for line, pair in enumerate(file_pairs):
        lines[pair].append(line)
    order = []
    for number, pair in enumerate(pairs, 1):
        if not lines[pair]:
            raise DataError(
                f"Example {number} of the prepared split, {pair!r}, is not (or not that often) "
                "in the raw files; the prepared data set is not the one these files make: "
                "prepare it again (load_translation_splits(..., rebuild=True))."
            )
        order.append(lines[pair].popleft())
    if len(order) != len(file_pairs):
        raise DataError(
            f"The prepared split has {len(order)} examples but the raw files have "
            f"{len(file_pairs)} lines: prepare it again (load_translation_splits(..., "
            "rebuild=True))."
        )
    return order


@dataclasses.dataclass(frozen=True)
class TokenizedReferences:
    """A split's tokenized references (the data set's file) and where each evaluated example
    is in them."""

    language: str
    lines: list[str]  # The data set's lc.norm.tok lines, in the file's order.
    file_lines: list[int]  # file_lines[k]: the line of the k-th evaluated example.

    def hypotheses_in_file_order(self, hypotheses: Sequence[str]) -> list[str]:
        """`hypotheses` (one per evaluated example, in their order) processed like the
        references (`moses_preprocess`), line N translating the example of reference line N.

        Example:
            >>> references = TokenizedReferences("en", ["a dog .", "a cat ."], [1, 0])
            >>> references.hypotheses_in_file_order(["A cat.", "The dog."])
            ['the dog .', 'a cat .']
        """
        ordered = [""] * len(self.lines)
        for line, processed in zip(
            self.file_lines, moses_preprocess(hypotheses, self.language), strict=True
        ):
            ordered[line] = processed
        return ordered


def load_tokenized_references(
    corpus: Corpus, split: str, pairs: Sequence[tuple[str, str]], data_dir: str | None = None
) -> TokenizedReferences | None:
    """The data set's tokenized references of `split`, placed for `pairs` (the evaluated
    (source, target) examples, in their order); None where none are published (data sets other
    than Multi30k, its training split). Reads them and the raw files (checked) as the Multi30k
    builder does: from ``$MULTI30K_DIR`` or downloaded.

    Example:
        >>> load_tokenized_references(spec.parse("ted_hrlr_translate/pt_to_en").corpora[0],
        ...                           "test", []) is None
        True
    """
    if not corpus.is_multi30k:
        return None
    builder = Multi30k(config=corpus.direction.label, data_dir=data_dir)
    target = corpus.direction.target
    if not has_tokenized_references(split, target):
        return None
    return TokenizedReferences(
        language=target,
        lines=builder.tokenized_references(split),
        file_lines=file_order(pairs, builder.file_pairs(split)),
    )
