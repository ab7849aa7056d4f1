"""TFDS builder for Multi30k task 1 (registered as `multi30k` when this module is imported).

Configs are language pairs written source first: `de-en`, `en-de`, `fr-en`, `en-fr`, `cs-en`,
`en-cs`, and every other ordered pair of {en, de, fr, cs}. Splits: `train` (29,000),
`validation` (1,014), `test2016` (1,000), `test2017` (1,000), `mscoco2017` (461); pairs with
Czech have only the first three. With `as_supervised=True` examples are (source, target).

The config `multilingual` holds every one of the 12 directions in each split (the 6 without
Czech in `test2017` and `mscoco2017`): 348,000 training examples, each a dict of
`source_language`, `target_language`, `source` and `target` (the same sentence id on both
sides), stored in an order shuffled across directions. `data_pipeline.datasets` reads it.

Raw files: when the environment variable `MULTI30K_DIR` is set, the raw `.gz` files are read
from that directory; otherwise they are downloaded from `URL_PATTERN`. Either way every file's
SHA-256 is checked against `SHA256` below before anything is generated, the two sides of each
split must have the same number of lines, and the text must be valid UTF-8 (see
`data_pipeline.raw_text`). Lines are stored exactly as written in the raw files.

The data set is prepared once into the TFDS data directory (TFRecords) and reused by later
loads; `data_pipeline.load_translation_splits(..., rebuild=True)` prepares it again. A prepared
split holds its examples shuffled (TFDS orders them by a hash of their key, the line number);
`Multi30k.file_pairs(split)` gives them in the files' line order.

Tokenized references: `Multi30k.tokenized_references(split)` returns the data set's own
lower-cased, punctuation-normalised, Moses-tokenized target sentences of a validation or test
split (`data/task1/tok/`, made by the data set's `scripts/task1-tokenize.sh`), in the files' line
order: from `$MULTI30K_DIR/tok/<file>.gz` if the variable is set, else downloaded from
`TOK_URL_PATTERN` (published uncompressed), the SHA-256 of the content checked against
`TOK_SHA256` either way.

Example:
    >>> import data_pipeline  # registers `multi30k`
    >>> import tensorflow_datasets as tfds
    >>> ds = tfds.load("multi30k/de-en", split="test2016", as_supervised=True)  # doctest: +SKIP
    >>> next(iter(ds))  # (German, English) tf.string scalars  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import os
import urllib.request
from collections.abc import Callable

import tensorflow as tf
import tensorflow_datasets as tfds
from absl import logging
from etils import epath

from data_pipeline import raw_text
from data_pipeline.errors import DataError, missing_files_message

ENV_VAR = "MULTI30K_DIR"
COMMIT = "a3d2e0d26b56f3846f66a952536ffed4e401d05a"
URL_PATTERN = f"https://raw.githubusercontent.com/multi30k/dataset/{COMMIT}/data/task1/raw/{{file}}"
TOK_URL_PATTERN = (
    f"https://raw.githubusercontent.com/multi30k/dataset/{COMMIT}/data/task1/tok/{{file}}"
)
LANGUAGES = ("en", "de", "fr", "cs")
# Every ordered pair, those with English first; the builder's configs in this order.
DIRECTIONS = [p for x in ("de", "fr", "cs") for p in ((x, "en"), ("en", x))] + [
    p for p in itertools.permutations(LANGUAGES, 2) if "en" not in p
]
MULTILINGUAL = "multilingual"

# TFDS split name -> raw file prefix (the file is f"{prefix}.{language}.gz").
SPLIT_PREFIXES = {
    "train": "train",
    "validation": "val",
    "test2016": "test_2016_flickr",
    "test2017": "test_2017_flickr",
    "mscoco2017": "test_2017_mscoco",
}
_NO_CZECH = ("test2017", "mscoco2017")

# SHA-256 of every published raw file (multi30k/dataset at COMMIT, data/task1/raw/).
SHA256 = {
    "test_2016_flickr.cs.gz": "200a4a74cc9560f051924abb9803be008d1908d77f747e9141aeb86dfd2797f1",
    "test_2016_flickr.de.gz": "9204244e408ccb38d2a55cfcd344df15005fc42a07a6e55ca6c52b6ababb8cc8",
    "test_2016_flickr.en.gz": "611d361c6334bc7246101d48097c13cf5c4413c5befc793cc629934359d532d9",
    "test_2016_flickr.fr.gz": "6d326e188d259fb1d04ac19eae3af956559b3a0b93d7635e56c90987c40c8b90",
    "test_2017_flickr.de.gz": "a2c89666db00c495cd8513b9d708d5a3acc205d7de312ef2bf5fb7ebc1540aee",
    "test_2017_flickr.en.gz": "76a444ee25172e72695cddb13ae4a3bda59430617be88e0bb46b60504f054074",
    "test_2017_flickr.fr.gz": "3ba671ceb2299f3304ffafefea7a833d08632fbaf0ba18546f8a2ec2391af496",
    "test_2017_mscoco.de.gz": "799e4854c25d601cb6cb6be29eabe5667734c61ace2f495e03e429031a0bc338",
    "test_2017_mscoco.en.gz": "aab300bfb4427697987e02cd0aacd44bfe8aa50456231b6474c08038bbed2b58",
    "test_2017_mscoco.fr.gz": "754f3072ba9f124569ba5258b32730fc1d214bbf8e0c6dfb2b74401676220db0",
    "train.cs.gz": "a65adb8b32e3bc664f21ecba7a6e7f6950fd1f405e135f7c312faabdb6255077",
    "train.de.gz": "726e39b2fa9eb9ffb6dc763fb35a179f80fae06ffc5d28b6ace5faa883de28a6",
    "train.en.gz": "d79cfa999dd4c51d2cb42499b6796d5a882c3a8a961923c25a898c90f8bbd56f",
    "train.fr.gz": "622e75069e9f4c577425c4f277116ce66e63a2401c0a2312d90073cb12379a3c",
    "val.cs.gz": "b63226e05c4bd5dd6a42897d74b86a1b9d2c31498252c572b1ea7f7996927fcc",
    "val.de.gz": "f0cba2f995189cf5770f29a8a9a537a3ad3f51657ad873405082ff6863a5e75a",
    "val.en.gz": "14f7d25ddd868909a9213e361768460edcacdd6ab9d1e77b92560dc10c10dc28",
    "val.fr.gz": "ca3106f1a72390591d25f6c45cb4cd39dec4cd3f123e099748a3ce5256c160e9",
}

# SHA-256 of the content (uncompressed, as published) of every tokenized reference file
# (multi30k/dataset at COMMIT, data/task1/tok/), as `sha256sum` prints them; a local copy is
# gzipped, `<file>.gz`.
_TOK_SHA256SUMS = """\
748c8816de928732365176e5c5d2f9bbabcec9b8d4448fba2d230feb057898a7  test_2016_flickr.lc.norm.tok.cs
c6a33d39d48f9f510de147651316cd9d918e09ad0219df734a2f16b6baccacc4  test_2016_flickr.lc.norm.tok.de
5b7f32627cf99eced828311b955dae9800bb52bc8b91cf8b6526829e605b29d2  test_2016_flickr.lc.norm.tok.en
1463bd5960f9bfe098ec3cd752d3df0c49c84dc646fb518964a29232658cd836  test_2016_flickr.lc.norm.tok.fr
02067e4a9402786a4fcb8c1b6f4307e4a5073ced64800abead5273b54f5f31f6  test_2017_flickr.lc.norm.tok.de
c9d1dfd7a26add989382e534af235af9f0f658b2a30e7eb0efdaf142496ee54f  test_2017_flickr.lc.norm.tok.en
c0583117a47b31e8a6c6a97cfe8de153e462074668f4e994764fcc80b21d33b4  test_2017_flickr.lc.norm.tok.fr
e2825990b8a4e5289d2cdba801d57c187810bab9b4f5d87a30c35800a0d871b6  test_2017_mscoco.lc.norm.tok.de
fe69ae004d71c42ead0301e70c57de5b1b6b5fb7f52210d42b22801e98e656f3  test_2017_mscoco.lc.norm.tok.en
0b6a4620f02b6b9acf7811fda23f90fed9c6baa0b96aa224db50a273078c84d1  test_2017_mscoco.lc.norm.tok.fr
b87ee4917f4a0f9ca6cca03e402026c9f4437dc1bd6a7dadfd2544ecfb6c5501  val.lc.norm.tok.cs
97232bd273eceb7207f689527386a97e4be2616b18ada47576bdaf96c8ae1f00  val.lc.norm.tok.de
46573ce391ae227f1c72f873392436a20ef18e0a6d518098cfbd70b77c8572ec  val.lc.norm.tok.en
b303e301aa21fe7822a846b2b3fb2d5a1121ec807cd5b1d006fb7b2b5507168a  val.lc.norm.tok.fr
"""
TOK_SHA256 = dict(reversed(line.split()) for line in _TOK_SHA256SUMS.splitlines())

_CITATION = """\
@inproceedings{elliott-etal-2016-multi30k,
  title = {Multi30K: Multilingual English-German Image Descriptions},
  author = {Elliott, Desmond and Frank, Stella and Sima'an, Khalil and Specia, Lucia},
  booktitle = {Proceedings of the 5th Workshop on Vision and Language},
  year = {2016},
  pages = {70--74},
}
"""


def splits_for(source: str, target: str) -> list[str]:
    """The split names available for a language pair.

    Example:
        >>> splits_for("cs", "en")
        ['train', 'validation', 'test2016']
    """
    if "cs" in (source, target):
        return [s for s in SPLIT_PREFIXES if s not in _NO_CZECH]
    return list(SPLIT_PREFIXES)


def raw_file(split: str, language: str) -> str:
    """The raw file name of one side of a split.

    Example:
        >>> raw_file("validation", "de")
        'val.de.gz'
    """
    return f"{SPLIT_PREFIXES[split]}.{language}.gz"


def tok_file(split: str, language: str) -> str:
    """The published name of the tokenized reference file of one side of a split.

    Example:
        >>> tok_file("test2016", "de")
        'test_2016_flickr.lc.norm.tok.de'
    """
    return f"{SPLIT_PREFIXES[split]}.lc.norm.tok.{language}"


def has_tokenized_references(split: str, language: str) -> bool:
    """Whether the data set publishes tokenized references for `split` in `language`.

    Example:
        >>> has_tokenized_references("test2016", "de"), has_tokenized_references("train", "de")
        (True, False)
    """
    return split in SPLIT_PREFIXES and tok_file(split, language) in TOK_SHA256


@dataclasses.dataclass(frozen=True)
class _FileKind:
    """One kind of published file: its name under $MULTI30K_DIR and its download address."""

    description: str
    subdir: str  # Under $MULTI30K_DIR ("" for the directory itself).
    local_suffix: str  # Appended to the published name for the local copy.
    url_pattern: str


_RAW = _FileKind("raw Multi30k task 1 .gz files", "", "", URL_PATTERN)
_TOK = _FileKind(
    "Multi30k task 1 tokenized reference files, gzipped (<FILE>.gz)", "tok", ".gz", TOK_URL_PATTERN
)


def _fetch(
    names: list[str], kind: _FileKind, dl_manager: Callable[[], tfds.download.DownloadManager]
) -> dict[str, str]:
    """Local paths of the published files `names`: from $MULTI30K_DIR if set, else downloaded
    (with the download manager `dl_manager()` returns)."""
    local_dir = os.environ.get(ENV_VAR)
    if local_dir:
        directory = os.path.join(local_dir, kind.subdir) if kind.subdir else local_dir
        paths = {n: os.path.join(directory, n + kind.local_suffix) for n in names}
        missing = [n + kind.local_suffix for n in names if not tf.io.gfile.exists(paths[n])]
        if missing:
            exists = "" if tf.io.gfile.isdir(directory) else ", which does not exist"
            raise DataError(
                missing_files_message(
                    missing,
                    f"{directory} (from ${ENV_VAR}{exists})",
                    f"Put the {kind.description} there (published at "
                    f"{kind.url_pattern.format(file='<FILE>')}), point ${ENV_VAR} at a "
                    f"directory that has them, or unset ${ENV_VAR} to download them.",
                )
            )
        logging.info("Reading the %s from %s", kind.description, directory)
        return paths
    urls = {n: kind.url_pattern.format(file=n) for n in names}
    try:
        _probe(urls[names[0]])  # Offline, TFDS's download would retry for minutes.
        downloaded = dl_manager().download(urls)
    except Exception as e:  # Any download failure gets the same advice.
        where = f" in {kind.subdir}/" if kind.subdir else ""
        raise DataError(
            missing_files_message(
                names,
                f"{kind.url_pattern.format(file='<FILE>')} (download failed: "
                f"{type(e).__name__}: {e}); ${ENV_VAR} is not set",
                f"Go online, or set ${ENV_VAR} to a directory holding the {kind.description}"
                f"{where}.",
            )
        ) from e
    return {n: os.fspath(p) for n, p in downloaded.items()}


def _probe(url: str, timeout: float = 15.0) -> None:
    """Raises an OSError (quickly) if `url` cannot be reached."""
    with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=timeout):
        pass


def _read_raw_file(path: str, name: str) -> list[str]:
    """Reads one raw file, verifies its SHA-256 and returns its lines."""
    data = raw_text.read_bytes(path)
    raw_text.verify_sha256(data, SHA256[name], path)
    return raw_text.decode_lines(data, path)


def _read_tok_file(path: str, name: str) -> list[str]:
    """Reads one tokenized reference file (plain or gzipped), verifies the SHA-256 of its content
    and returns its lines."""
    content = raw_text.gunzip_if_compressed(raw_text.read_bytes(path), path)
    raw_text.verify_sha256(
        content,
        TOK_SHA256[name],
        path,
        f"replace it with the published file ({TOK_URL_PATTERN.format(file=name)}), gzipped; "
        "a downloaded copy can be deleted: the next run downloads it again.",
    )
    return raw_text.decode_lines(content, path)


class Multi30kConfig(tfds.core.BuilderConfig):
    """One language pair; `source` comes first in the name and in supervised pairs."""

    def __init__(self, *, source: str, target: str, **kwargs):
        super().__init__(
            name=f"{source}-{target}",
            description=f"Multi30k task 1, {source} to {target}.",
            **kwargs,
        )
        self.source = source
        self.target = target


class Multi30kMultilingualConfig(tfds.core.BuilderConfig):
    """Every direction among the four languages in one data set (see the module docstring)."""

    def __init__(self, **kwargs):
        super().__init__(
            name=MULTILINGUAL,
            description="Multi30k task 1, every direction among en, de, fr and cs.",
            **kwargs,
        )


def directions_for(split: str) -> list[tuple[str, str]]:
    """The (source, target) directions that have ``split``.

    Example:
        >>> len(directions_for("test2016")), len(directions_for("test2017"))
        (12, 6)
    """
    return [(s, t) for s, t in DIRECTIONS if split in splits_for(s, t)]


class Multi30k(tfds.core.GeneratorBasedBuilder):
    """Multi30k task 1 (image-description translation), raw cased text."""

    VERSION = tfds.core.Version("1.0.0")
    RELEASE_NOTES = {"1.0.0": "Raw task 1 files at multi30k/dataset@" + COMMIT[:7] + "."}
    # The first config (de-en) is the default one.
    BUILDER_CONFIGS = [
        *(Multi30kConfig(source=s, target=t) for s, t in DIRECTIONS),
        Multi30kMultilingualConfig(),
    ]

    @tfds.core.utils.classproperty
    @classmethod
    def code_path(cls) -> epath.Path:
        # TFDS 4.9.10's own `code_path` imports the `importlib_resources` backport, which is
        # not installed on Python >= 3.9 (TFDS only requires it below 3.9); the answer is simply
        # this file.
        return epath.Path(inspect.getfile(cls))

    @property
    def _multilingual(self) -> bool:
        return self.builder_config.name == MULTILINGUAL

    def _info(self) -> tfds.core.DatasetInfo:
        if self._multilingual:
            text = tfds.features.Text()
            features = tfds.features.FeaturesDict(
                {k: text for k in ("source_language", "target_language", "source", "target")}
            )
            supervised_keys = None
        else:
            source, target = self.builder_config.source, self.builder_config.target
            features = tfds.features.Translation(languages=(source, target))
            supervised_keys = (source, target)
        return self.dataset_info_from_configs(
            description=(
                "Multi30k task 1: English descriptions of Flickr30k images with German, French "
                "and Czech translations (raw, cased, untokenized)."
            ),
            features=features,
            supervised_keys=supervised_keys,
            homepage="https://github.com/multi30k/dataset",
            citation=_CITATION,
        )

    def _split_generators(self, dl_manager: tfds.download.DownloadManager):
        if self._multilingual:
            return self._multilingual_split_generators(dl_manager)
        source, target = self.builder_config.source, self.builder_config.target
        splits = splits_for(source, target)
        names = [raw_file(s, lang) for s in splits for lang in (source, target)]
        paths = _fetch(names, _RAW, lambda: dl_manager)
        # Read, verify and check everything before generating anything, so a bad file fails fast.
        return {split: self._generate_examples(*self._read_split(paths, split)) for split in splits}

    def _multilingual_split_generators(self, dl_manager: tfds.download.DownloadManager):
        languages = {
            split: sorted({lang for d in directions_for(split) for lang in d})
            for split in SPLIT_PREFIXES
        }
        names = [raw_file(split, lang) for split, langs in languages.items() for lang in langs]
        paths = _fetch(names, _RAW, lambda: dl_manager)
        generators = {}
        for split, langs in languages.items():
            lines = {
                lang: _read_raw_file(paths[raw_file(split, lang)], raw_file(split, lang))
                for lang in langs
            }
            first = raw_file(split, langs[0])
            for lang in langs[1:]:
                raw_text.check_aligned(
                    paths[first], lines[langs[0]], paths[raw_file(split, lang)], lines[lang]
                )
            generators[split] = self._generate_directions(lines, directions_for(split))
        return generators

    def _generate_directions(self, lines: dict[str, list[str]], directions: list[tuple[str, str]]):
        for source, target in directions:
            for i, (s, t) in enumerate(zip(lines[source], lines[target], strict=True)):
                example = {"source_language": source, "target_language": target}
                yield f"{source}-{target}-{i}", {**example, "source": s, "target": t}

    def _read_split(self, paths: dict[str, str], split: str) -> tuple[list[str], list[str]]:
        """The verified, aligned source and target lines of `split`, in the files' order."""
        src_name = raw_file(split, self.builder_config.source)
        tgt_name = raw_file(split, self.builder_config.target)
        src_lines = _read_raw_file(paths[src_name], src_name)
        tgt_lines = _read_raw_file(paths[tgt_name], tgt_name)
        raw_text.check_aligned(paths[src_name], src_lines, paths[tgt_name], tgt_lines)
        return src_lines, tgt_lines

    def split_names(self) -> list[str]:
        """The splits of this config (Czech has no test2017 nor mscoco2017).

        Example:
            >>> Multi30k(config="en-cs").split_names()
            ['train', 'validation', 'test2016']
        """
        if self._multilingual:
            return list(SPLIT_PREFIXES)
        return splits_for(self.builder_config.source, self.builder_config.target)

    def _download_manager(self) -> tfds.download.DownloadManager:
        """A download manager on the directory where TFDS puts this builder's downloads."""
        return tfds.download.DownloadManager(download_dir=self.data_dir_root / "downloads")

    def file_pairs(self, split: str) -> list[tuple[str, str]]:
        """The (source, target) sentences of `split` in the raw files' line order, read and
        checked as when preparing (a prepared split holds them shuffled).

        Example:
            >>> Multi30k(config="de-en").file_pairs("test2016")[0]  # doctest: +SKIP
            ('Ein Mann mit einem orangefarbenen Hut, der etwas anstarrt.',
             'A man in an orange hat starring at something.')
        """
        source, target = self.builder_config.source, self.builder_config.target
        if split not in splits_for(source, target):
            raise DataError(
                f"Unknown split {split!r} for multi30k/{source}-{target}; available: "
                f"{', '.join(splits_for(source, target))}."
            )
        names = [raw_file(split, source), raw_file(split, target)]
        paths = _fetch(names, _RAW, self._download_manager)
        return list(zip(*self._read_split(paths, split), strict=True))

    def tokenized_references(self, split: str) -> list[str]:
        """The data set's own tokenized, lower-cased target sentences of `split`, in the files'
        line order (see the module docstring).

        Example:
            >>> Multi30k(config="de-en").tokenized_references("test2016")[0]  # doctest: +SKIP
            'a man in an orange hat starring at something .'
        """
        target = self.builder_config.target
        if not has_tokenized_references(split, target):
            available = [s for s in SPLIT_PREFIXES if has_tokenized_references(s, target)]
            raise DataError(
                f"Multi30k publishes no tokenized references for {split!r} in {target!r}; it "
                f"does for: {', '.join(available)}."
            )
        name = tok_file(split, target)
        return _read_tok_file(_fetch([name], _TOK, self._download_manager)[name], name)

    def _generate_examples(self, source_lines: list[str], target_lines: list[str]):
        source, target = self.builder_config.source, self.builder_config.target
        for i, (s, t) in enumerate(zip(source_lines, target_lines, strict=True)):
            yield i, {source: s, target: t}
