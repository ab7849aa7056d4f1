"""The Validator on its own: each direction's BLEU (their mean chooses the best checkpoint), and
the loss over every validation pair as the model reads them."""

from __future__ import annotations

import keras
import pytest

import data_pipeline as dp
from common.language_tags import tag
from configs import tiny
from rundir.model import build_model
from training.validation import Validator

pytestmark = pytest.mark.slow  # trains a small tokenizer


def small_tokenizer(data: dp.DataSpec, directory) -> dp.Tokenizer:
    """A small vocabulary (with the data's tags) trained on its validation sentences."""
    pairs = dp.load_translation_splits(data, ["validation"])["validation"]
    tags = [tag(language) for language in data.languages]
    return dp.load_or_train_tokenizer(
        str(directory / "spm.model"), pairs, 400, user_defined_symbols=tags
    )


@pytest.mark.parametrize(
    ("directions", "labels"), [("de-en,en-de", ["de-en", "en-de"]), ("de-en", [])]
)
def test_one_validation_scores_each_direction_and_the_loss_of_all(
    small_corpus, tmp_path, directions, labels
):
    config = tiny.get_config()
    config.data.name = f"text:{small_corpus}:{directions}"
    config.train.eval_max_sentences = 3
    data = dp.spec.parse(config.data.name)
    tokenizer = small_tokenizer(data, tmp_path)
    by_direction = dp.load_direction_splits(data, [config.data.validation_split])
    keras.utils.set_random_seed(0)
    model = build_model(config, tokenizer.vocab_size)
    validator = Validator(config, data, by_direction, model, tokenizer)
    assert [s.request.target_lang for s in validator.sets] == [
        d.target if data.tagged else None for d in data.directions
    ]
    validation = validator.run()
    per_direction = [key.partition("/")[2] for key in validation.values if "/" in key]
    assert per_direction == labels
    assert validation.values["validation_loss"] > 0
    assert len(validation.translations) == 3 * len(data.directions)
    scores = [validation.values[f"validation_bleu/{label}"] for label in labels]
    if scores:
        assert validation.values["validation_bleu"] == pytest.approx(sum(scores) / len(scores))
