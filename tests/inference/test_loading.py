import json

import pytest

from configs import base
from decoding import Ensemble
from inference.export import export_saved_model
from inference.loading import SavedModelTranslator, load_config, load_translator
from training.config import ConfigError
from training.trainer import build_model


def test_work_directories_from_before_num_decoder_layers_keep_their_depth(tmp_path):
    saved = json.loads(base.get_config().to_json())
    saved["model"]["num_layers"] = 5
    del saved["model"]["num_decoder_layers"]
    (tmp_path / "config.json").write_text(json.dumps(saved))
    config = load_config(str(tmp_path))
    assert (config.model.num_layers, config.model.num_decoder_layers) == (5, 5)


def test_work_directories_from_before_the_separate_dropout_rates_build_their_model(tmp_path):
    saved = json.loads(base.get_config().to_json())
    saved["model"].update(dropout=0.3, num_layers=1, num_decoder_layers=1, d_model=16, d_ff=32)
    del saved["model"]["attention_dropout"], saved["model"]["activation_dropout"]
    (tmp_path / "config.json").write_text(json.dumps(saved))
    model = build_model(load_config(str(tmp_path)), vocab_size=20)
    assert (model.attention_dropout, model.activation_dropout) == (0.3, 0.3)


def test_an_ensemble_of_a_work_directory_with_itself_translates_as_it_alone(tiny_run, tmp_path):
    workdir, _ = tiny_run
    sentences = ["Ein Hund rennt.", "Zwei Männer stehen auf einer Straße und reden."]
    alone, _ = load_translator(workdir, "latest", beam_size=2)
    ensemble, path = load_translator(workdir, "latest", beam_size=2, ensemble=[workdir])
    assert isinstance(ensemble.model, Ensemble) and path.count("ckpt-") == 2
    translations = alone.translate(sentences, progress=False)
    assert ensemble.translate(sentences, progress=False) == translations
    # Exported, the ensemble is one SavedModel that serves the same translations.
    exported = SavedModelTranslator(export_saved_model(ensemble, str(tmp_path / "saved_model")))
    assert exported.translate(sentences, progress=False) == translations


def test_an_ensemble_refuses_a_work_directory_with_another_tokenizer(
    tiny_run, workdir_with_another_tokenizer
):
    with pytest.raises(ConfigError, match="tokenizer differs"):
        load_translator(tiny_run[0], "latest", ensemble=[workdir_with_another_tokenizer])

