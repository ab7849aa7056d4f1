"""What a search needs besides the model and the source ids, in one value with one set of defaults.

Each sentence's output length limit (its real length ``n`` counts the non-padding source
tokens; EOS included in the output)::

    limit = min(max_length, round(max_length_ratio * n + max_length_offset))   # at least 1

Example:
    >>> options = SearchOptions(beam_size=4, length_penalty=1.2)
    >>> dataclasses.replace(options, beam_size=1).beam_size   # greedy search, same limits
    1
"""

from __future__ import annotations

import dataclasses

from common.special_tokens import BOS_ID, EOS_ID, PAD_ID


def _is_positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


@dataclasses.dataclass(frozen=True)
class SearchOptions:
    """Search options; the constructor checks them and raises a ValueError naming a bad one.

    Args:
        beam_size: hypotheses kept per sentence; 1 runs greedy search.
        length_penalty: GNMT ``alpha`` of beam search, ``((5 + length) / 6) ** alpha``; 0 ranks
            hypotheses by the plain sum of log-probabilities.
        max_length: a hard cap on every output's length, or None.
        max_length_ratio, max_length_offset: the output limit relative to the source length.
        bos_id, eos_id, pad_id: special ids; ``eos_id=None`` decodes every sentence to its limit.
        forbidden_ids: more ids a search never writes besides PAD and BOS (a multilingual
            model's target-language tags, ``data_pipeline.Tokenizer.tag_ids``).
    """

    beam_size: int = 4
    length_penalty: float = 0.6
    max_length: int | None = None
    max_length_ratio: float = 1.5
    max_length_offset: float = 10
    bos_id: int = BOS_ID
    eos_id: int | None = EOS_ID
    pad_id: int = PAD_ID
    forbidden_ids: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not _is_positive_int(self.beam_size):
            raise ValueError(f"beam_size must be a positive integer, got {self.beam_size!r}.")
        if self.length_penalty < 0:
            raise ValueError(f"length_penalty must not be negative, got {self.length_penalty}.")
        if self.max_length is not None and not _is_positive_int(self.max_length):
            raise ValueError(
                f"max_length must be a positive integer or None, got {self.max_length!r}."
            )
        if self.max_length_ratio < 0 or self.max_length_offset < 0:
            raise ValueError(
                f"max_length_ratio ({self.max_length_ratio}) and max_length_offset "
                f"({self.max_length_offset}) must not be negative."
            )

    @property
    def never_written(self) -> list[int]:
        """The ids no search writes: PAD, BOS and ``forbidden_ids``.

        Example:
            >>> SearchOptions(forbidden_ids=(4, 5)).never_written
            [0, 2, 4, 5]
        """
        return [self.pad_id, self.bos_id, *self.forbidden_ids]

    def gnmt_penalty(self, length: int) -> float:
        """GNMT's length penalty ``((5 + length) / 6) ** length_penalty`` of one hypothesis, in
        Python (``decoding.beam.gnmt_length_penalty`` on tensors): a score is the sum of its
        tokens' log-probabilities divided by it.

        Example:
            >>> round(SearchOptions(length_penalty=0.6).gnmt_penalty(7), 4)   # (12 / 6) ** 0.6
            1.5157
        """
        return ((5.0 + length) / 6.0) ** self.length_penalty

    def output_length_limit(self, source_length: int) -> int:
        """One sentence's output length limit (EOS included) for ``source_length`` source tokens
        (EOS included), in Python: what ``decoding.common.output_length_limits`` gives it.

        Example:
            >>> SearchOptions().output_length_limit(4)   # round(1.5 * 4 + 10)
            16
        """
        limit = max(1, round(self.max_length_ratio * source_length + self.max_length_offset))
        return limit if self.max_length is None else min(limit, self.max_length)
