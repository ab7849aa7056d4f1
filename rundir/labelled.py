"""A classifier's data as its run split it: the labels and each split's examples.

The first run of a classifier's work directory splits its data (seeded by
``classifier.split_seed``, stratified: ``data_pipeline.labelled_text``) and writes the split to
``split.json``; a resumed run, ``evaluate.py`` and the baseline read that file, so every one of
them scores the same texts, whatever the code's split does later. A label's class id is its
position in the sorted labels.

Example:
    >>> data = record_split(config, "runs/spam")       # training: split once, then read
    >>> data.labels, len(data.texts("test"))
    (('ham', 'spam'), 604)
"""

from __future__ import annotations

import dataclasses

import ml_collections

from common.files import read_json, write_json
from data_pipeline.errors import DataError
from data_pipeline.labelled_text import (
    Example,
    load_labelled_text,
    recorded_split,
    split_record,
)
from rundir.layout import RunDirectory


@dataclasses.dataclass(frozen=True)
class LabelledSplits:
    """The labels (sorted: a class id is a position) and each split's examples."""

    labels: tuple[str, ...]
    splits: dict[str, list[Example]]

    def examples(self, split: str) -> list[Example]:
        if split not in self.splits:
            raise DataError(f"No split {split!r}: the run's are {', '.join(self.splits)}.")
        return self.splits[split]

    def texts(self, split: str) -> list[str]:
        return [example.text for example in self.examples(split)]

    def class_ids(self, split: str) -> list[int]:
        return [self.labels.index(example.label) for example in self.examples(split)]


def record_split(config: ml_collections.ConfigDict, workdir: str) -> LabelledSplits:
    """The run's split of ``config.data``: read from ``split.json``, or made (seeded by
    ``config.classifier.split_seed``) and written there the first time."""
    examples = load_labelled_text(config.data.name, config.data.data_dir or None)
    path = RunDirectory(workdir).split
    record = read_json(path)
    if record is None:
        record = split_record(examples, config.classifier.split_seed)
        write_json(path, record)
    return LabelledSplits(tuple(record["labels"]), recorded_split(examples, record))


def read_labels(workdir: str) -> tuple[str, ...]:
    """The labels of a classifier's run (its ``split.json``)."""
    return tuple(_record(workdir)["labels"])


def read_split(config: ml_collections.ConfigDict, workdir: str) -> LabelledSplits:
    """The split a classifier's run recorded, of its data read again."""
    record = _record(workdir)
    examples = load_labelled_text(config.data.name, config.data.data_dir or None)
    return LabelledSplits(tuple(record["labels"]), recorded_split(examples, record))


def _record(workdir: str) -> dict:
    path = RunDirectory(workdir).split
    record = read_json(path)
    if record is None:
        raise FileNotFoundError(
            f"{workdir} has no {path}: it is not a classifier's work directory, or its training "
            "has not started; train it with train.py first."
        )
    return record
