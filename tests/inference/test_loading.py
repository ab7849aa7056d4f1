import json

from configs import base
from inference.loading import load_config
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
