"""What every translator offers (:class:`Translator`) and the helpers they share, in Python only.

A work directory's :class:`~decoding.translator.ModelTranslator`, an exported SavedModel
(``inference.export.SavedModelTranslator``) and a CTranslate2 export
(``inference.ctranslate2_translator.CTranslate2Translator``) are all Translators: scripts and
evaluation take any. This module imports no TensorFlow, so the CTranslate2 runtime needs none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from tqdm import tqdm


class Translator(Protocol):
    """Anything that translates sentences: a :class:`ModelTranslator` or an exported SavedModel.

    Example:
        >>> def translate_file(translator: Translator, lines: list[str]) -> list[str]:
        ...     for warning in translator.truncation_warnings(lines):
        ...         print(warning)
        ...     return translator.translate(lines)
    """

    @property
    def beam_size(self) -> int:
        """The beam size of its search (1: greedy)."""
        ...

    @property
    def languages(self) -> tuple[str, ...]:
        """A multilingual model's target languages, sorted; () for one target language."""
        ...

    def translate(
        self,
        sentences: Sequence[str],
        batch_size: int = 64,
        progress: bool = True,
        target_lang: str | None = None,
    ) -> list[str]:
        """Translations of ``sentences``, in their order; a multilingual model's into
        ``target_lang`` (an UnknownLanguageError for a code not in ``languages``)."""
        ...

    def truncation_warnings(self, sentences: Sequence[str]) -> list[str]:
        """One line for each sentence longer than the model reads (it is truncated)."""
        ...


def truncation_warnings(source_lengths: Sequence[int], max_source_length: int) -> list[str]:
    """Warnings for the sentences whose token count (without EOS) exceeds what is translated.

    Example:
        >>> truncation_warnings([3, 70], max_source_length=64)
        ['warning: sentence 2 has 70 tokens; only the first 63 are translated.']
    """
    limit = max_source_length - 1
    return [
        f"warning: sentence {number} has {length} tokens; only the first {limit} are translated."
        for number, length in enumerate(source_lengths, 1)
        if length > limit
    ]


def translate_in_batches(
    translate_batch: Callable[[list[str]], list[str]],
    sentences: Sequence[str],
    batch_size: int = 64,
    progress: bool = True,
) -> list[str]:
    """Runs ``translate_batch`` over batches of similar length, with a progress bar; the
    translations come back in the order of ``sentences``."""
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    translations: list[str] = [""] * len(sentences)
    with tqdm(
        total=len(sentences),
        desc="translate",
        unit="sent",
        disable=not progress,
        dynamic_ncols=True,
    ) as bar:
        for start in range(0, len(order), batch_size):
            indices = order[start : start + batch_size]
            outputs = translate_batch([sentences[i] for i in indices])
            for index, output in zip(indices, outputs, strict=True):
                translations[index] = output
            bar.update(len(indices))
    return translations
