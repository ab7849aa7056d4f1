"""A classifier's work directory, loaded: texts in, labels and scores out, what it attended to,
and its scores on a split of its data.

:class:`Classifier` is a ``tf.Module`` whose functions take strings (tokenization in-graph), so
the SavedModel export (``inference.export``) saves the same graph this module runs.

Example:
    >>> classifier, checkpoint = load_classifier("runs/spam")
    >>> [(c.label, round(c.score, 3)) for c in classifier.classify(["WIN a FREE prize now"])]
    [('spam', 0.998)]
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from common.errors import ConfigError
from common.files import atomic_write_text
from common.metrics import ClassificationScores, classification_scores
from data_pipeline.text_batches import text_tokens
from data_pipeline.tokenizer import PAD_ID, Tokenizer
from rundir.checkpoints import restore_model
from rundir.config import CLASSIFICATION, load_config, task
from rundir.labelled import LabelledSplits, read_labels
from rundir.layout import RunDirectory
from rundir.model import build_classifier
from transformer.classifier import TextClassifier, class_probabilities

_TEXTS = tf.TensorSpec([None], tf.string)


@dataclasses.dataclass(frozen=True)
class Classified:
    """One text's label, the probability of that label, and every label's probability."""

    label: str
    score: float
    probabilities: dict[str, float]


@dataclasses.dataclass(frozen=True)
class TextAttention:
    """What the classifier's last layer attended to in one text, for a heat map: the pieces it
    read (BOS first) and each head's weights over them, ``(heads, pieces)``."""

    pieces: list[str]
    weights: np.ndarray


class Classifier(tf.Module):
    """A trained :class:`TextClassifier` with its tokenizer and labels (strings in)."""

    def __init__(
        self,
        model: TextClassifier,
        tokenizer: Tokenizer,
        labels: Sequence[str],
        max_length: int,
        positive_label: str = "",
    ) -> None:
        super().__init__(name="classifier")
        if len(labels) != model.num_classes:
            raise ValueError(f"{len(labels)} labels for a model of {model.num_classes} classes.")
        self.model, self.tokenizer, self.max_length = model, tokenizer, max_length
        self.labels, self.positive_label = tuple(labels), positive_label
        self._label_strings = tf.constant(self.labels)

    def _tokens(self, texts: tf.Tensor) -> tf.Tensor:
        """``[N]`` strings -> ``(N, length)`` ids, padded: what the model reads of each text."""
        return text_tokens(self.tokenizer, texts, self.max_length).to_tensor(PAD_ID)

    @tf.function(input_signature=[_TEXTS], autograph=False)
    def classify_texts(self, texts: tf.Tensor) -> dict[str, tf.Tensor]:
        """``[N]`` texts -> ``label`` ``[N]`` strings, ``score`` ``[N]`` (its probability),
        ``class_id`` ``[N]`` and ``probabilities`` ``[N, labels]``."""
        probabilities = class_probabilities(self.model(self._tokens(texts)))
        class_ids = tf.argmax(probabilities, axis=-1, output_type=tf.int32)
        return {
            "label": tf.gather(self._label_strings, class_ids),
            "score": tf.reduce_max(probabilities, axis=-1),
            "class_id": class_ids,
            "probabilities": probabilities,
        }

    @tf.function(input_signature=[_TEXTS], autograph=False)
    def attend(self, texts: tf.Tensor) -> dict[str, tf.Tensor]:
        """``[N]`` texts -> ``pieces`` ``[N, length]`` (padded with ""), ``length`` ``[N]`` and
        ``attention`` ``[N, heads, length]`` (``TextClassifier.pooled_attention``)."""
        tokens = self._tokens(texts)
        _, weights = self.model(tokens, return_attention_scores=True)
        real = tokens != PAD_ID
        pieces = tf.where(real, self.tokenizer.id_to_piece(tokens), "")
        return {
            "pieces": pieces,
            "length": tf.reduce_sum(tf.cast(real, tf.int32), axis=1),
            "attention": self.model.pooled_attention(tokens, weights),
        }

    def classify(self, texts: Sequence[str], batch_size: int = 32) -> list[Classified]:
        """Each text's :class:`Classified`, in order (batched by length)."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        results: list[Classified | None] = [None] * len(texts)
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            out = self.classify_texts(tf.constant([texts[i] for i in chunk]))
            for i, class_id, probabilities in zip(
                chunk, out["class_id"].numpy(), out["probabilities"].numpy(), strict=True
            ):
                results[i] = Classified(
                    self.labels[class_id],
                    float(probabilities[class_id]),
                    dict(zip(self.labels, map(float, probabilities), strict=True)),
                )
        return results

    def attention(self, text: str) -> TextAttention:
        """What the last layer attended to in ``text`` (see :class:`TextAttention`)."""
        out = self.attend(tf.constant([text]))
        length = int(out["length"][0])
        pieces = [piece.decode("utf-8") for piece in out["pieces"][0, :length].numpy()]
        return TextAttention(pieces, out["attention"][0, :, :length].numpy())

    def scores(
        self, texts: Sequence[str], class_ids: Sequence[int]
    ) -> tuple[ClassificationScores, list[Classified]]:
        """The scores of classifying ``texts`` against their ``class_ids``, and the results."""
        results = self.classify(texts)
        predicted = [self.labels.index(result.label) for result in results]
        return (
            classification_scores(class_ids, predicted, self.labels, self.positive_label),
            results,
        )


def load_classifier(workdir: str, which: str = "best") -> tuple[Classifier, str]:
    """A classifier's work directory at its ``which`` checkpoint: ``(Classifier, checkpoint)``."""
    config = load_config(workdir)
    if task(config) != CLASSIFICATION:
        raise ConfigError(
            f"{workdir} holds a {task(config)} model, not a classifier: use translate.py."
        )
    tokenizer = Tokenizer.from_file(RunDirectory(workdir).tokenizer)
    labels = read_labels(workdir)
    model = build_classifier(config, tokenizer.vocab_size, len(labels))
    checkpoint = restore_model(model, workdir, which)
    classifier = Classifier(
        model, tokenizer, labels, config.data.max_length, config.classifier.positive_label
    )
    return classifier, checkpoint


def evaluate_classifier(
    classifier: Classifier, data: LabelledSplits, split: str, output_dir: str
) -> tuple[ClassificationScores, str]:
    """Classifies ``split`` of the run's data; writes each text's name, label, predicted label
    and score to ``output_dir/<split>.predictions.tsv`` and the report to
    ``<split>.scores.md``; returns the scores and the predictions file."""
    examples = data.examples(split)
    scores, results = classifier.scores(data.texts(split), data.class_ids(split))
    predictions = os.path.join(output_dir, f"{split}.predictions.tsv")
    atomic_write_text(
        predictions,
        "name\tlabel\tpredicted\tscore\n"
        + "".join(
            f"{example.name}\t{example.label}\t{result.label}\t{result.score:.6f}\n"
            for example, result in zip(examples, results, strict=True)
        ),
    )
    atomic_write_text(os.path.join(output_dir, f"{split}.scores.md"), scores.report() + "\n")
    return scores, predictions
