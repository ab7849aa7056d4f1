"""Training a text classifier (``config.task = "classification"``): the Transformer's encoder
with pooling and a head (``transformer.classifier``) on labelled texts.

The loop is :class:`training.trainer.Trainer`'s (checkpoints with the data position, exact
resume, SIGTERM, progress bar, TensorBoard, early stopping); :class:`ClassifierTrainer` replaces
its task's parts:

* data: the labelled texts of ``config.data.name``, split once and recorded in the work
  directory (``rundir.labelled``); a SentencePiece model trained on the training texts; batches
  of one text an example within a token budget (``data_pipeline.text_batches``);
* the loss: the cross-entropy of the sigmoid (two classes) or the softmax;
* validation: the loss, accuracy and F1 on the validation split (``common.metrics``); the
  positive label's F1 (``classifier.positive_label``), or the macro F1, chooses ``best/``.

Example:
    >>> result = train(configs.spam_assassin.get_config(), "runs/spam")  # training.trainer
    >>> result.score_name, round(result.best_score, 3)
    ('validation_f1', 0.97)
"""

from __future__ import annotations

import dataclasses

import keras
import tensorflow as tf

from common.metrics import ClassificationScores, classification_scores
from data_pipeline.text_batches import make_text_batches
from data_pipeline.tokenizer import Tokenizer, load_or_train_tokenizer
from rundir.labelled import LabelledSplits, record_split
from rundir.model import build_classifier
from training.step import make_step
from training.trainer import Trainer
from transformer.classifier import class_probabilities


def classification_loss(logits: tf.Tensor, labels: tf.Tensor) -> tuple[tf.Tensor, ...]:
    """Sums over the batch: ``(loss_sum, correct, count)``, float32 scalars.

    Args:
        logits: ``(batch, 1)`` (two classes: the second's log-odds) or ``(batch, classes)``.
        labels: int ``(batch,)`` class ids.

    Example:
        >>> loss_sum, correct, count = classification_loss(tf.constant([[2.0]]), tf.constant([1]))
    """
    logits = tf.cast(logits, tf.float32)
    if logits.shape[-1] == 1:
        per_text = tf.nn.sigmoid_cross_entropy_with_logits(
            labels=tf.cast(labels, tf.float32), logits=logits[:, 0]
        )
    else:
        per_text = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    predicted = tf.argmax(class_probabilities(logits), axis=-1, output_type=labels.dtype)
    return (
        tf.reduce_sum(per_text),
        tf.reduce_sum(tf.cast(predicted == labels, tf.float32)),
        tf.cast(tf.size(labels), tf.float32),
    )


def make_classifier_step(model: keras.Model, optimizer: keras.optimizers.Optimizer):
    """``step(batch) -> (loss_sum, correct, count)`` for ``strategy.run`` (``training.step``):
    ``batch`` holds ``tokens`` and ``label``."""

    def sums(batch: dict) -> tuple[tf.Tensor, ...]:
        return classification_loss(model(batch["tokens"], training=True), batch["label"])

    return make_step(model, optimizer, sums)


@dataclasses.dataclass(frozen=True)
class ClassifierValidation:
    """What one validation measured: ``values`` (``validation_loss``, ``validation_accuracy``,
    ``validation_f1``), the scores, and each validation text's predicted label (``translations``:
    the lines the trainer writes)."""

    values: dict[str, float]
    scores: ClassificationScores
    translations: list[str]

    def summary(self) -> str:
        return (
            f"validation loss {self.values['validation_loss']:.4f}, accuracy "
            f"{self.scores.accuracy:.4f}, {self.scores.score_name} {self.scores.score:.4f}"
        )


class ClassifierValidator:
    """Scores the model on the validation texts (tokenized and batched once)."""

    def __init__(self, config, data: LabelledSplits, model, tokenizer: Tokenizer) -> None:
        self.config, self.data, self.model = config, data, model
        split = config.data.validation_split
        self.class_ids = data.class_ids(split)
        # The texts in their own order (no shuffle): batches carry their positions as labels.
        self.batches = make_text_batches(
            data.texts(split),
            range(len(self.class_ids)),
            tokenizer,
            max_length=config.data.max_length,
            tokens_per_batch=config.data.tokens_per_batch,
            shuffle=False,
            seed=0,
        ).cache()
        self.predict = tf.function(
            lambda tokens: model(tokens, training=False),
            input_signature=[tf.TensorSpec([None, None], tf.int32)],
            autograph=False,
        )

    def run(self) -> ClassifierValidation:
        logits_by_text = [None] * len(self.class_ids)
        for batch in self.batches:
            logits = self.predict(batch["tokens"])
            for position, row in zip(batch["label"].numpy(), logits.numpy(), strict=True):
                logits_by_text[position] = row
        logits = tf.constant(logits_by_text)
        labels = tf.constant(self.class_ids)
        loss_sum, _, count = classification_loss(logits, labels)
        predicted = tf.argmax(class_probabilities(logits), axis=-1).numpy().tolist()
        scores = classification_scores(
            self.class_ids, predicted, self.data.labels, self.config.classifier.positive_label
        )
        values = {
            "validation_loss": float(loss_sum / count),
            "validation_accuracy": scores.accuracy,
            "validation_f1": scores.score,
        }
        return ClassifierValidation(values, scores, [self.data.labels[i] for i in predicted])


class ClassifierTrainer(Trainer):
    """The run of a classifier's config (see the module)."""

    score_name = "validation_f1"
    counted = "texts"

    def _load_data(self) -> tf.data.Dataset:
        config = self.config
        self.data = record_split(config, self.workdir)  # the same on every worker (seeded)
        train_texts = tf.data.Dataset.from_tensor_slices(self.data.texts("train"))
        self.tokenizer = load_or_train_tokenizer(
            self.output.tokenizer,
            train_texts,
            config.tokenizer.vocab_size,
            config.tokenizer.model_type,
            input_sentence_size=config.tokenizer.input_sentence_size,
            seed=config.train.seed,
        )
        return make_text_batches(
            self.data.texts("train"),
            self.data.class_ids("train"),
            self.tokenizer,
            max_length=config.data.max_length,
            tokens_per_batch=config.data.tokens_per_batch,
            shuffle=True,
            seed=config.data.shuffle_seed,
            repeat=True,
        )

    def _new_model(self) -> keras.Model:
        return build_classifier(self.config, self.tokenizer.vocab_size, len(self.data.labels))

    def _data_settings(self, num_workers: int) -> dict:
        config = self.config
        return {
            "data.name": config.data.name,
            "data.max_length": config.data.max_length,
            "data.tokens_per_batch": config.data.tokens_per_batch,
            "data.shuffle_seed": config.data.shuffle_seed,
            "train.seed": config.train.seed,
            "workers": num_workers,
        }

    def _replica_step(self):
        return make_classifier_step(self.model, self.optimizer)

    def _new_validator(self) -> ClassifierValidator:
        return ClassifierValidator(self.config, self.data, self.model, self.tokenizer)
