"""TFDS builder for Multi30k task 1 (registered as `multi30k` when this module is imported).

Configs are language pairs written source first: `de-en`, `en-de`, `fr-en`, `en-fr`, `cs-en`,
`en-cs`, and every other ordered pair of {en, de, fr, cs}. Splits: `train` (29,000),
`validation` (1,014), `test2016` (1,000), `test2017` (1,000), `mscoco2017` (461); pairs with
Czech have only the first three. With `as_supervised=True` examples are (source, target).

Raw files: when the environment variable `MULTI30K_DIR` is set, the raw `.gz` files are read
from that directory; otherwise they are downloaded from `URL_PATTERN`. Either way every file's
SHA-256 is checked against `SHA256` below before anything is generated, the two sides of each
split must have the same number of lines, and the text must be valid UTF-8 (see
`data_pipeline.raw_text`). Lines are stored exactly as written in the raw files.

The data set is prepared once into the TFDS data directory (TFRecords) and reused by later
loads; `data_pipeline.load_translation_splits(..., rebuild=True)` prepares it again.

Example:
    >>> import data_pipeline  # registers `multi30k`
    >>> import tensorflow_datasets as tfds
    >>> ds = tfds.load("multi30k/de-en", split="test2016", as_supervised=True)  # doctest: +SKIP
    >>> next(iter(ds))  # (German, English) tf.string scalars  # doctest: +SKIP
"""

from __future__ import annotations

import inspect
import itertools
import os
import urllib.request

import tensorflow as tf
import tensorflow_datasets as tfds
from absl import logging
from etils import epath

from data_pipeline import raw_text
from data_pipeline.errors import DataError, missing_files_message

ENV_VAR = "MULTI30K_DIR"
COMMIT = "a3d2e0d26b56f3846f66a952536ffed4e401d05a"
URL_PATTERN = (
    f"https://raw.githubusercontent.com/multi30k/dataset/{COMMIT}/data/task1/raw/{{file}}"
)
LANGUAGES = ("en", "de", "fr", "cs")

# TFDS split name -> raw file prefix (the file is f"{prefix}.{language}.gz").
SPLIT_PREFIXES = {
    "train": "train",
    "validation": "val",
    "test2016": "test_2016_flickr",
    "test2017": "test_2017_flickr",
    "mscoco2017": "test_2017_mscoco",
}
SPLIT_SIZES = {
    "train": 29_000,
    "validation": 1_014,
    "test2016": 1_000,
    "test2017": 1_000,
    "mscoco2017": 461,
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


def _probe(url: str, timeout: float = 15.0) -> None:
    """Raises an OSError (quickly) if `url` cannot be reached."""
    with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=timeout):
        pass


def _read_raw_file(path: str, name: str) -> list[str]:
    """Reads one raw file, verifies its SHA-256 and returns its lines."""
    data = raw_text.read_bytes(path)
    raw_text.verify_sha256(data, SHA256[name], path)
    return raw_text.decode_lines(data, path)


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


class Multi30k(tfds.core.GeneratorBasedBuilder):
    """Multi30k task 1 (image-description translation), raw cased text."""

    VERSION = tfds.core.Version("1.0.0")
    RELEASE_NOTES = {"1.0.0": "Raw task 1 files at multi30k/dataset@" + COMMIT[:7] + "."}
    # The first config (de-en) is the default one.
    BUILDER_CONFIGS = [
        Multi30kConfig(source=s, target=t)
        for s, t in [p for x in ("de", "fr", "cs") for p in ((x, "en"), ("en", x))]
        + [p for p in itertools.permutations(LANGUAGES, 2) if "en" not in p]
    ]

    @tfds.core.utils.classproperty
    @classmethod
    def code_path(cls) -> epath.Path:
        # TFDS 4.9.10's own `code_path` imports the `importlib_resources` backport, which is
        # not installed on Python >= 3.9 (TFDS only requires it below 3.9); the answer is simply
        # this file.
        return epath.Path(inspect.getfile(cls))

    def _info(self) -> tfds.core.DatasetInfo:
        source, target = self.builder_config.source, self.builder_config.target
        return self.dataset_info_from_configs(
            description=(
                "Multi30k task 1: English descriptions of Flickr30k images with German, French "
                "and Czech translations (raw, cased, untokenized)."
            ),
            features=tfds.features.Translation(languages=(source, target)),
            supervised_keys=(source, target),
            homepage="https://github.com/multi30k/dataset",
            citation=_CITATION,
        )

    def _raw_paths(self, dl_manager: tfds.download.DownloadManager, names: list[str]):
        """Local paths of the raw files: from $MULTI30K_DIR if set, else downloaded."""
        local_dir = os.environ.get(ENV_VAR)
        if local_dir:
            missing = [n for n in names if not tf.io.gfile.exists(os.path.join(local_dir, n))]
            if missing:
                exists = "" if tf.io.gfile.isdir(local_dir) else ", which does not exist"
                raise DataError(
                    missing_files_message(
                        missing,
                        f"{local_dir} (from ${ENV_VAR}{exists})",
                        f"Put the raw Multi30k task 1 .gz files there (published at "
                        f"{URL_PATTERN.format(file='<FILE>')}), point ${ENV_VAR} at a "
                        f"directory that has them, or unset ${ENV_VAR} to download them.",
                    )
                )
            logging.info("Reading Multi30k raw files from %s=%s", ENV_VAR, local_dir)
            return {n: os.path.join(local_dir, n) for n in names}
        urls = {n: URL_PATTERN.format(file=n) for n in names}
        try:
            _probe(urls[names[0]])  # Offline, TFDS's download would retry for minutes.
            paths = dl_manager.download(urls)
        except Exception as e:  # Any download failure gets the same advice.
            raise DataError(
                missing_files_message(
                    names,
                    f"{URL_PATTERN.format(file='<FILE>')} (download failed: "
                    f"{type(e).__name__}: {e}); ${ENV_VAR} is not set",
                    f"Go online, or set ${ENV_VAR} to a directory holding the raw .gz files.",
                )
            ) from e
        return {n: os.fspath(p) for n, p in paths.items()}

    def _split_generators(self, dl_manager: tfds.download.DownloadManager):
        source, target = self.builder_config.source, self.builder_config.target
        splits = splits_for(source, target)
        names = [raw_file(s, lang) for s in splits for lang in (source, target)]
        paths = self._raw_paths(dl_manager, names)
        # Read, verify and check everything before generating anything, so a bad file fails fast.
        generators = {}
        for split in splits:
            src_name, tgt_name = raw_file(split, source), raw_file(split, target)
            src_lines = _read_raw_file(paths[src_name], src_name)
            tgt_lines = _read_raw_file(paths[tgt_name], tgt_name)
            raw_text.check_aligned(paths[src_name], src_lines, paths[tgt_name], tgt_lines)
            generators[split] = self._generate_examples(src_lines, tgt_lines)
        return generators

    def _generate_examples(self, source_lines: list[str], target_lines: list[str]):
        source, target = self.builder_config.source, self.builder_config.target
        for i, (s, t) in enumerate(zip(source_lines, target_lines, strict=True)):
            yield i, {source: s, target: t}
