"""``translate.py``'s sampling flags: random sampling in place of the search, as one
:class:`common.translation.Sampling` of the translation request.

Any of ``--sampling_topk``, ``--sampling_topp`` or ``--sampling_temperature`` turns sampling on
(``--sampling_topk=0``: the whole vocabulary); ``--seed`` makes it reproducible (default 0).
"""

from __future__ import annotations

import dataclasses

from absl import flags

from common.translation import RequestError, Sampling


@dataclasses.dataclass(frozen=True)
class SamplingFlags:
    """``--sampling_topk``, ``--sampling_topp``, ``--sampling_temperature`` and ``--seed``."""

    top_k: flags.FlagHolder
    top_p: flags.FlagHolder
    temperature: flags.FlagHolder
    seed: flags.FlagHolder

    def sampling(self) -> Sampling | None:
        """The flags' :class:`Sampling`, or None when none of the first three is given.

        Raises:
            RequestError: a bad value, named with its flag.
        """
        given = {
            "top_k": self.top_k.value,
            "top_p": self.top_p.value,
            "temperature": self.temperature.value,
        }
        given = {field: value for field, value in given.items() if value is not None}
        if not given:
            return None
        for field, value in given.items():  # each checked alone, to name its flag
            try:
                Sampling(**{field: value})
            except RequestError as error:
                raise RequestError(f"--sampling_{field.replace('_', '')}: {error}") from None
        return Sampling(**given, seed=self.seed.value)


def define_sampling_flags() -> SamplingFlags:
    """Defines the flags of :class:`SamplingFlags` (at a script's module level).

    Example:
        >>> _SAMPLING = define_sampling_flags()
        >>> TranslationRequest(sampling=_SAMPLING.sampling())   # in main()
    """
    return SamplingFlags(
        top_k=flags.DEFINE_integer(
            "sampling_topk",
            None,
            "Sample each token among the K most likely (0: the whole vocabulary) instead of "
            "searching; translations only (no --n_best or scores).",
        ),
        top_p=flags.DEFINE_float(
            "sampling_topp",
            None,
            "Sample among the most likely tokens whose probability reaches P (nucleus sampling).",
        ),
        temperature=flags.DEFINE_float(
            "sampling_temperature",
            None,
            "Divide the logits by T before sampling (below 1 sharper, above 1 flatter).",
        ),
        seed=flags.DEFINE_integer(
            "seed", 0, "Sampling seed: the same seed and input give the same translations."
        ),
    )
