"""The data a config names, parsed once: a `DataSpec`, a corpus of one or more directions.

`parse(name, extra_train_data, data_dir)` reads `config.data.name` (and
`config.data.extra_train_data`) once, at config load; data loading, training, validation,
evaluation, export and the benchmarks take the `DataSpec` it returns and never read the name
again. A direction has one form, `Direction("de", "en")`; its label `"de-en"` and its
corpus's name `"multi30k/de-en"` are derived from it, for printing and for file names.

`name` is one of:

* **One direction**, a language pair, untagged:
  - a TFDS translation set `"dataset/config"`: `"multi30k/de-en"` (the builder in
    `data_pipeline.multi30k`) or a catalog set such as `"ted_hrlr_translate/pt_to_en"` (the
    TensorFlow tutorial's) or `"wmt14_translate/de-en"`; its direction is the set's supervised
    keys, read from the builder (no data is read);
  - your own files `"text:DIR:SRC-TGT"`: split `S` is `DIR/S.SRC[.gz]` and `DIR/S.TGT[.gz]`
    (`data_pipeline.text_corpus`).
* **Several directions**, one model, each source tagged with its target language
  (`common.language_tags`, after Johnson et al., 2017):
  - `"multi30k/multilingual"`: the 12 directions among en, de, fr and cs;
  - `"multi30k/en-de,multi30k/de-en,..."`: those Multi30k directions;
  - `"text:DIR:de-en,fr-en,..."`: your own files, as above for each direction.

`extra_train_data` (comma-separated names of one direction each) adds training pairs
translating into the same target language (many-to-one), mixed into each pass of the training
data. A name may end in `@WEIGHT`, the share of that corpus each pass reads (`@0.2`: a fifth of
it, `@3`: three times over): `"multi30k/de-en@0.2"` keeps some general data beside a domain's.

Whether the data is tagged (has more than one direction) is decided here: the loaders
(`data_pipeline.datasets`) and the consumers go through `corpora_with`, `tag_language`,
`model_pairs` and `languages`, which they call the same way for one direction and for many.

Example:
    >>> data = parse("text:/data/corpus:de-en,en-de")  # doctest: +SKIP
    >>> data.directions, data.languages  # doctest: +SKIP
    ((Direction(source='de', target='en'), Direction(source='en', target='de')), ('de', 'en'))
    >>> data.corpora[0].name  # doctest: +SKIP
    'text:/data/corpus:de-en'
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import tensorflow as tf
import tensorflow_datasets as tfds

from common.language_tags import tag
from data_pipeline import multi30k, tagging, text_corpus
from data_pipeline.errors import DataError

MULTI30K = "multi30k"
MULTI30K_ALL = f"{MULTI30K}/{multi30k.MULTILINGUAL}"
TEXT = "text"
USAGE = (
    "Use a TFDS translation set as 'dataset/config' (e.g. 'multi30k/de-en', "
    "'ted_hrlr_translate/pt_to_en', 'wmt14_translate/de-en'), your own files as "
    "'text:DIR:SRC-TGT' (split S read from DIR/S.SRC[.gz] and DIR/S.TGT[.gz]), or several "
    f"directions for one model: {MULTI30K_ALL!r} (its 12 directions), a list of Multi30k "
    "directions ('multi30k/en-de,multi30k/de-en,...') or your own files "
    "('text:DIR:de-en,fr-en,...')."
)


class Direction(NamedTuple):
    """A translation direction: ``Direction("de", "fr")``, labelled ``"de-fr"``."""

    source: str
    target: str

    @property
    def label(self) -> str:
        """``"de-fr"``: how a direction is printed and written in names and flags."""
        return f"{self.source}-{self.target}"

    @classmethod
    def parse(cls, label: str, where: str) -> Direction:
        """``"de-fr"`` -> ``Direction("de", "fr")``, or a DataError naming ``where``.

        Example:
            >>> Direction.parse("de-fr", "--direction")
            Direction(source='de', target='fr')
        """
        source, _, target = label.strip().partition("-")
        if not (source and target) or "-" in target or source == target:
            raise DataError(
                f"Cannot read the direction {label!r} in {where}: write it as SRC-TGT, e.g. "
                "'de-fr'."
            )
        return cls(source, target)


@dataclasses.dataclass(frozen=True)
class Corpus:
    """One direction's pairs and where they are: a TFDS set, or a directory of text files."""

    direction: Direction
    tfds_name: str = ""  # "multi30k/de-en", "ted_hrlr_translate/pt_to_en"; "" for text files
    text_directory: str = ""  # DIR of "text:DIR:SRC-TGT"; "" for a TFDS set
    weight: float = 1.0  # an extra training corpus's share read each pass ("NAME@WEIGHT")

    @property
    def name(self) -> str:
        """The name it was given by: ``"multi30k/de-fr"``, ``"text:DIR:de-fr"``."""
        return self.tfds_name or f"{TEXT}:{self.text_directory}:{self.direction.label}"

    @property
    def is_multi30k(self) -> bool:
        return self.tfds_name.startswith(MULTI30K + "/")

    def text_files(self) -> text_corpus.TextCorpus:
        """A text corpus's files, found in its directory."""
        return text_corpus.TextCorpus.find(self.text_directory, *self.direction)

    def has_split(self, split: str) -> bool:
        """Whether it has ``split`` (TFDS slicing such as ``"test2016[:10]"`` allowed); True
        for a TFDS catalog set, whose loader says which splits it has."""
        base = split.split("[")[0]
        if self.text_directory:
            return base in self.text_files().splits
        if self.is_multi30k:
            return base in multi30k.splits_for(*self.direction)
        return True


@dataclasses.dataclass(frozen=True)
class DataSpec:
    """The data of a run: its corpora (one a direction) and where TFDS keeps its sets.

    Args:
        name: the name it was parsed from (``config.data.name``), for messages.
        corpora: one per direction, in the order named. More than one: each source is read
            with its target language's tag in front.
        extra_train: more training pairs, each into the one direction's target language.
        data_dir: TFDS's data directory (None: its default); a text corpus's training split is
            prepared there too.
        tag_one_direction: tag the sources of one direction too, as a multilingual model
            (whose vocabulary has tags) fine-tuned on one of its directions reads them.
    """

    name: str
    corpora: tuple[Corpus, ...]
    extra_train: tuple[Corpus, ...] = ()
    data_dir: str | None = None
    tag_one_direction: bool = False

    @property
    def directions(self) -> tuple[Direction, ...]:
        return tuple(corpus.direction for corpus in self.corpora)

    @property
    def tagged(self) -> bool:
        """Whether each source carries its target language's tag: more than one direction, or
        ``tag_one_direction``."""
        return len(self.corpora) > 1 or self.tag_one_direction

    @property
    def languages(self) -> tuple[str, ...]:
        """The target languages a tag names, sorted; () for untagged data."""
        if not self.tagged:
            return ()
        return tuple(sorted({direction.target for direction in self.directions}))

    @property
    def corpus(self) -> Corpus:
        """The one corpus of data of one direction; a DataError for several (for what needs a
        model of one language pair).

        Example:
            >>> parse("multi30k/de-en").corpus.name
            'multi30k/de-en'
        """
        if len(self.corpora) > 1:
            raise DataError(
                f"{self.name!r} has {len(self.corpora)} directions; this needs data of one "
                "language pair."
            )
        return self.corpora[0]

    def tag_language(self, direction: Direction) -> str:
        """The language of the tag in front of ``direction``'s sources: its target's when the
        data is tagged, "" (no tag) when not."""
        return direction.target if self.tagged else ""

    def model_pairs(self, direction: Direction, pairs: tf.data.Dataset) -> tf.data.Dataset:
        """``direction``'s (source, target) ``pairs`` as the model reads them: each source
        tagged when there are several directions (`data_pipeline.tagging`)."""
        language = self.tag_language(direction)
        if not language:
            return pairs
        return pairs.map(lambda source, target: tagging.tagged_pair(source, target, language))

    def corpora_with(self, split: str) -> tuple[Corpus, ...]:
        """The corpora that have ``split``: those of several directions that have it (a
        DataError when none does); the one direction's, whose loader says why it has not.

        Example:
            >>> [c.name for c in parse("multi30k/en-cs,multi30k/de-en").corpora_with("test2017")]
            ['multi30k/de-en']
        """
        if not self.tagged:
            return self.corpora
        having = tuple(corpus for corpus in self.corpora if corpus.has_split(split))
        if not having:
            raise DataError(f"No direction of {self.name!r} has the split {split!r}.")
        return having

    def chosen(self, direction: str | None, split: str) -> tuple[Corpus, ...]:
        """The corpora a ``--direction`` flag chooses: ``"de-fr"``, or every one that has
        ``split`` (``"all"`` or None).

        Example:
            >>> [c.name for c in parse("multi30k/multilingual").chosen("de-fr", "test2016")]
            ['multi30k/de-fr']
        """
        if direction in (None, "all"):
            return self.corpora_with(split)
        wanted = Direction.parse(direction, "--direction")
        for corpus in self.corpora:
            if corpus.direction == wanted:
                return (corpus,)
        raise DataError(
            f"{direction!r} is not a direction of {self.name!r}: "
            f"{', '.join(d.label for d in self.directions)}."
        )


def parse(name: str, extra_train_data: str = "", data_dir: str | None = None) -> DataSpec:
    """The `DataSpec` that ``name`` and ``extra_train_data`` name (see the module docstring);
    a DataError naming what cannot be read, before any data is.

    Example:
        >>> len(parse("multi30k/multilingual").corpora), parse("multi30k/de-en").tagged
        (12, False)
    """
    data = DataSpec(name, _corpora(name.strip(), data_dir), data_dir=data_dir)
    extra_names = [n.strip() for n in extra_train_data.split(",") if n.strip()]
    if not extra_names:
        return data
    if data.tagged:
        raise DataError(
            f"config.data.extra_train_data ({extra_train_data!r}) is for a model of one language "
            f"pair; config.data.name ({name!r}) is multilingual: list every direction in "
            "config.data.name instead."
        )
    target = data.directions[0].target
    extra = []
    for weighted_name in extra_names:
        extra_name, weight = _weighted(weighted_name)
        corpora = _corpora(extra_name, data_dir)
        if len(corpora) > 1 or corpora[0].direction.target != target:
            raise DataError(
                f"config.data.extra_train_data names {extra_name!r}, which translates into "
                f"{', '.join(sorted({c.direction.target for c in corpora}))!r}, but "
                f"config.data.name ({name!r}) into {target!r}; add only data sets of one "
                "language pair with the same target language."
            )
        extra.append(dataclasses.replace(corpora[0], weight=weight))
    return dataclasses.replace(data, extra_train=tuple(extra))


def _weighted(name: str) -> tuple[str, float]:
    """``"NAME@WEIGHT"`` -> ``(NAME, WEIGHT)``; ``"NAME"`` -> ``(NAME, 1.0)``."""
    if "@" not in name:
        return name, 1.0
    bare, _, weight = name.rpartition("@")
    try:
        value = float(weight)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise DataError(
            f"config.data.extra_train_data names {name!r}: its weight {weight!r} must be a "
            "positive number (the share of it each pass reads, e.g. 'multi30k/de-en@0.2')."
        )
    return bare.strip(), value


def _corpora(name: str, data_dir: str | None) -> tuple[Corpus, ...]:
    """The corpora ``name`` names: one, or several (each direction's codes checked)."""
    if name == MULTI30K_ALL:
        return tuple(Corpus(Direction(s, t), f"{MULTI30K}/{s}-{t}") for s, t in multi30k.DIRECTIONS)
    if name.startswith(TEXT + ":"):
        directory, _, labels = name[len(TEXT) + 1 :].rpartition(":")
        if not directory:
            raise DataError(f"Cannot parse {name!r}. {USAGE}")
        directions = [Direction.parse(label, repr(name)) for label in labels.split(",")]
        corpora = tuple(Corpus(d, text_directory=directory) for d in directions)
        return _checked(name, corpora) if len(corpora) > 1 else corpora
    if "," not in name:
        return (_tfds_corpus(name, data_dir),)
    corpora = []
    for part in (p.strip() for p in name.split(",")):
        dataset, _, label = part.partition("/")
        direction = Direction.parse(label, repr(name)) if dataset == MULTI30K else None
        if direction not in multi30k.DIRECTIONS:
            available = ", ".join(f"{MULTI30K}/{s}-{t}" for s, t in multi30k.DIRECTIONS)
            raise DataError(
                f"{part!r} in {name!r} is not a Multi30k direction ({available}). {USAGE}"
            )
        corpora.append(Corpus(direction, part))
    return _checked(name, tuple(corpora))


def _checked(name: str, corpora: tuple[Corpus, ...]) -> tuple[Corpus, ...]:
    """Several directions: each language a code (it names a tag), none named twice."""
    directions = [corpus.direction for corpus in corpora]
    for language in {language for direction in directions for language in direction}:
        tag(language)
    repeated = sorted({d.label for d in directions if directions.count(d) > 1})
    if repeated:
        raise DataError(f"{name!r} names {', '.join(repeated)} more than once.")
    return corpora


def _tfds_corpus(name: str, data_dir: str | None) -> Corpus:
    """A TFDS set of one language pair, its direction read from its builder."""
    dataset, _, config = name.partition("/")
    if dataset == MULTI30K:
        configs = [c.name for c in multi30k.Multi30k.BUILDER_CONFIGS if c.name != "multilingual"]
        if config not in configs:
            raise DataError(
                f"Unknown Multi30k language pair {config!r} in {name!r}; available: "
                f"{', '.join(f'{MULTI30K}/{c}' for c in configs)}."
            )
        return Corpus(Direction.parse(config, repr(name)), name)
    return Corpus(Direction(*supervised_pair(name, tfds_builder(name, data_dir))), name)


def tfds_builder(name: str, data_dir: str | None) -> tfds.core.DatasetBuilder:
    """The TFDS builder of ``name`` (not prepared), or a DataError naming the set."""
    try:
        return tfds.builder(name, data_dir=data_dir)
    except tfds.core.registered.DatasetNotFoundError as e:
        raise DataError(f"Unknown data set {name!r}. {USAGE}\nTFDS says: {e}") from e
    except ValueError as e:
        raise DataError(f"Cannot use data set {name!r}: {e}\n{USAGE}") from e


def supervised_pair(name: str, builder: tfds.core.DatasetBuilder) -> tuple[str, str]:
    """A TFDS translation set's (source, target) supervised keys, else a DataError."""
    supervised = builder.info.supervised_keys
    if not (
        isinstance(supervised, tuple)
        and len(supervised) == 2
        and all(isinstance(k, str) for k in supervised)
        and all(isinstance(builder.info.features[k], tfds.features.Text) for k in supervised)
    ):
        raise DataError(
            f"{name!r} is not a translation data set: its supervised keys {supervised!r} are "
            f"not a (source, target) pair of text features. {USAGE}"
        )
    return supervised
