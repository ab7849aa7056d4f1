import json

from configs import base
from inference.loading import load_config


def test_work_directories_from_before_num_decoder_layers_keep_their_depth(tmp_path):
    saved = json.loads(base.get_config().to_json())
    saved["model"]["num_layers"] = 5
    del saved["model"]["num_decoder_layers"]
    (tmp_path / "config.json").write_text(json.dumps(saved))
    config = load_config(str(tmp_path))
    assert (config.model.num_layers, config.model.num_decoder_layers) == (5, 5)
