"""Validation during training: the loss (teacher forcing) on every validation pair as the model
reads them (a multilingual run's tagged), and greedy BLEU on the first
``train.eval_max_sentences`` sentences of each direction; their mean chooses the best checkpoint.

Example:
    >>> validator = Validator(config, data, loaded.by_direction, model, tokenizer)
    >>> validation = validator.run()
    >>> validation.values["validation_bleu"], len(validation.translations)
    (31.2, 1014)
"""

from __future__ import annotations

import dataclasses

import ml_collections
import tensorflow as tf

import data_pipeline
from common.metrics import bleu
from common.translation import TranslationRequest
from decoding.options import SearchOptions
from decoding.translator import ModelTranslator
from training.loss import loss_function


@dataclasses.dataclass(frozen=True)
class ValidationSet:
    """Sentences whose translation BLEU is measured during training: one direction's."""

    label: str  # its direction's, "de-fr"
    sources: list[str]
    references: list[str]
    request: TranslationRequest = TranslationRequest()  # a multilingual run's: its target


def validation_sets(
    config: ml_collections.ConfigDict,
    data: data_pipeline.DataSpec,
    by_direction: data_pipeline.datasets.DirectionSplits,
) -> list[ValidationSet]:
    """The first ``train.eval_max_sentences`` sentences of each direction's validation split
    (the mean of their BLEU chooses a multilingual run's best checkpoint).

    Example:
        >>> [s.label for s in validation_sets(config, data, by_direction)][:2]  # doctest: +SKIP
        ['de-en', 'en-de']
    """
    limit = config.train.eval_max_sentences or -1
    split = config.data.validation_split
    sets = []
    for direction, splits in by_direction.items():
        if split in splits:
            sources, references = data_pipeline.pair_texts(splits[split].take(limit))
            request = TranslationRequest(target_lang=data.tag_language(direction) or None)
            sets.append(ValidationSet(direction.label, sources, references, request))
    return sets


@dataclasses.dataclass(frozen=True)
class Validation:
    """What one validation measured: ``values`` (``validation_loss``, ``validation_accuracy``,
    ``validation_bleu`` and, with several directions, ``validation_bleu/<direction>``) and the
    greedy translations, the directions one after another."""

    values: dict[str, float]
    translations: list[str]

    def summary(self) -> str:
        """``"validation loss 2.310, accuracy 0.541, BLEU 31.20"`` (with each direction's)."""
        values = self.values
        directions = "".join(
            f" {key.partition('/')[2]} {value:.1f}" for key, value in values.items() if "/" in key
        )
        return (
            f"validation loss {values['validation_loss']:.3f}, "
            f"accuracy {values['validation_accuracy']:.3f}, "
            f"BLEU {values['validation_bleu']:.2f}"
            + (f" (mean of{directions})" if directions else "")
        )


class Validator:
    """Validates ``model`` on ``data``'s validation split (read once, ``by_direction``).

    Args:
        config: the run's config (its data, decoding length limits and loss settings).
        data: the run's data.
        by_direction: each direction's splits (``training.data.load_data``).
        model: the model being trained.
        tokenizer: its tokenizer.
    """

    def __init__(
        self,
        config: ml_collections.ConfigDict,
        data: data_pipeline.DataSpec,
        by_direction: data_pipeline.datasets.DirectionSplits,
        model,
        tokenizer: data_pipeline.Tokenizer,
    ) -> None:
        self.sets = validation_sets(config, data, by_direction)
        pairs = data_pipeline.model_pairs(data, by_direction)[config.data.validation_split]
        self.batches = data_pipeline.make_batches(
            pairs,
            tokenizer,
            max_length=config.data.max_length,
            tokens_per_batch=config.data.tokens_per_batch,
            shuffle=False,
            seed=0,
        )
        loss = loss_function(config.train.jit_compile_loss)

        def eval_step(batch: dict) -> tf.Tensor:
            logits = model((batch["source"], batch["target_in"]), training=False)
            return tf.stack(loss(logits, batch["target_out"], 0.0, data_pipeline.PAD_ID))

        # One trace for every batch shape.
        self.eval_step = tf.function(
            eval_step, input_signature=[self.batches.element_spec], autograph=False
        )
        self.translator = ModelTranslator(
            model,
            tokenizer,
            SearchOptions(
                beam_size=1,
                max_length_ratio=config.decode.max_length_ratio,
                max_length_offset=config.decode.max_length_offset,
            ),
        )

    def run(self) -> Validation:
        """The validation loss and accuracy (teacher forcing) and greedy-decoding BLEU."""
        loss_sum = correct = count = 0.0
        for batch in self.batches:
            batch_loss, batch_correct, batch_count = self.eval_step(batch).numpy()
            loss_sum, correct, count = (
                loss_sum + batch_loss,
                correct + batch_correct,
                count + batch_count,
            )
        values = {
            "validation_loss": float(loss_sum / max(count, 1.0)),
            "validation_accuracy": float(correct / max(count, 1.0)),
        }
        scores, translations = {}, []
        for validation_set in self.sets:
            translated = self.translator.translate(
                validation_set.sources, validation_set.request, progress=False
            )
            scores[validation_set.label] = bleu(translated, validation_set.references)
            translations += translated
        # One direction's BLEU, or the mean of a multilingual run's directions'.
        values["validation_bleu"] = sum(s[0].score for s in scores.values()) / len(scores)
        if len(scores) > 1:
            values.update({f"validation_bleu/{label}": s[0].score for label, s in scores.items()})
        return Validation(values, translations)
