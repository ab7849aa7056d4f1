"""Multilingual data: several translation directions in one data set, for one model.

A multilingual `data.name` lists directions:

* `"multi30k/multilingual"`: the 12 directions among en, de, fr and cs (the Multi30k builder's
  `multilingual` config).
* `"multi30k/en-de,multi30k/de-en,..."`: those Multi30k directions.
* `"text:DIR:de-en,fr-en,..."`: a user's own files, direction `S-T` of split `X` being
  `DIR/X.S[.gz]` and `DIR/X.T[.gz]` (as for one pair, `data_pipeline.text_corpus`).

Every source is read with its target language's tag in front (`common.language_tags`, after
Johnson et al., 2017), so a pair is a plain `(tagged source, target)` for batching and training.
`data_pipeline.datasets` loads them: the training split mixed across directions, validation
and test splits tagged and joined (`load_translation_splits`) or one direction at a time
(`load_direction_splits`, untagged, for scoring each direction).

Example:
    >>> data = parse("text:/data/corpus:de-en,en-de")
    >>> data.directions, data.languages
    ((('de', 'en'), ('en', 'de')), ('de', 'en'))
    >>> data.direction_name(("de", "en"))
    'text:/data/corpus:de-en'
"""

from __future__ import annotations

import dataclasses

import tensorflow as tf

from common.language_tags import DEFUSED_TAG, TAG_END, TAG_IN_TEXT, TAG_START, tag
from data_pipeline import multi30k, text_corpus
from data_pipeline.errors import DataError

MULTI30K_ALL = f"multi30k/{multi30k.MULTILINGUAL}"
USAGE = (
    f"A multilingual data set is {MULTI30K_ALL!r} (its 12 directions), a list of Multi30k "
    "directions ('multi30k/en-de,multi30k/de-en,...') or your own files "
    "('text:DIR:de-en,fr-en,...')."
)


@dataclasses.dataclass(frozen=True)
class MultilingualData:
    """The directions of a multilingual data set and where their files are."""

    name: str
    directions: tuple[tuple[str, str], ...]
    text_directory: str | None = None  # None: Multi30k

    @property
    def languages(self) -> tuple[str, ...]:
        """The target languages, sorted: one tag each."""
        return tuple(sorted({target for _, target in self.directions}))

    @property
    def all_multi30k(self) -> bool:
        """Whether this is every Multi30k direction (the builder's `multilingual` config)."""
        return self.text_directory is None and set(self.directions) == set(multi30k.DIRECTIONS)

    def splits(self, direction: tuple[str, str]) -> list[str]:
        """The splits one direction has (Multi30k: Czech has no test2017 nor mscoco2017)."""
        if self.text_directory is None:
            return multi30k.splits_for(*direction)
        return text_corpus.TextCorpus.from_spec(self.direction_name(direction)).splits

    def direction_name(self, direction: tuple[str, str]) -> str:
        """The data set name of one direction, as `load_translation_splits` takes it."""
        pair = "-".join(direction)
        if self.text_directory is None:
            return f"multi30k/{pair}"
        return f"{text_corpus.TEXT}:{self.text_directory}:{pair}"


def direction_label(direction: tuple[str, str]) -> str:
    """``("de", "fr")`` -> ``"de-fr"``."""
    return "-".join(direction)


def parse_direction(text: str, where: str) -> tuple[str, str]:
    """``"de-fr"`` -> ``("de", "fr")``, checking the codes (a DataError naming ``where``).

    Example:
        >>> parse_direction("de-fr", "--direction")
        ('de', 'fr')
    """
    source, _, target = text.strip().partition("-")
    if not (source and target) or "-" in target or source == target:
        raise DataError(
            f"Cannot read the direction {text!r} in {where}: write it as SRC-TGT, e.g. 'de-fr'."
        )
    for language in (source, target):
        tag(language)  # a language code, else a one-line error
    return source, target


def parse(name: str) -> MultilingualData | None:
    """The multilingual data set `name` names, or None when it names one direction.

    Example:
        >>> len(parse("multi30k/multilingual").directions), parse("multi30k/de-en")
        (12, None)
    """
    if name == MULTI30K_ALL:
        return MultilingualData(name, tuple(multi30k.DIRECTIONS))
    if name.startswith(text_corpus.TEXT + ":"):
        directory, _, pairs = name[len(text_corpus.TEXT) + 1 :].rpartition(":")
        if "," not in pairs:
            return None
        if not directory:
            raise DataError(f"Cannot parse {name!r}. {USAGE}")
        directions = [parse_direction(p, repr(name)) for p in pairs.split(",")]
        return _checked(MultilingualData(name, tuple(directions), directory))
    if "," not in name:
        return None
    directions = []
    for part in (p.strip() for p in name.split(",")):
        dataset, _, pair = part.partition("/")
        direction = parse_direction(pair, repr(name)) if dataset == "multi30k" else None
        if direction not in multi30k.DIRECTIONS:
            available = ", ".join("multi30k/" + direction_label(d) for d in multi30k.DIRECTIONS)
            raise DataError(
                f"{part!r} in {name!r} is not a Multi30k direction ({available}). {USAGE}"
            )
        directions.append(direction)
    return _checked(MultilingualData(name, tuple(directions)))


def _checked(data: MultilingualData) -> MultilingualData:
    repeated = sorted({direction_label(d) for d in data.directions if data.directions.count(d) > 1})
    if repeated:
        raise DataError(f"{data.name!r} names {', '.join(repeated)} more than once.")
    return data


def defuse_in_graph(text: tf.Tensor) -> tf.Tensor:
    """`common.language_tags.defused` on string tensors: a multilingual run's targets, so that
    a tag written in a sentence is learnt as the characters it is.

    Example:
        >>> defuse_in_graph(tf.constant(["Say <2de>."])).numpy()
        array([b'Say < 2de>.'], dtype=object)
    """
    return tf.strings.regex_replace(text, TAG_IN_TEXT, DEFUSED_TAG)


def tag_in_graph(text: tf.Tensor, language: tf.Tensor) -> tf.Tensor:
    """`common.language_tags.tagged` on string tensors (element-wise, broadcast).

    Example:
        >>> tag_in_graph(tf.constant(["Ein Hund."]), tf.constant(["fr"])).numpy()
        array([b'<2fr> Ein Hund.'], dtype=object)
    """
    return tf.strings.join([TAG_START, language, TAG_END, defuse_in_graph(text)])
