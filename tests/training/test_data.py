"""The settings a saved data position depends on, and how a change is reported."""

from configs import tiny
from training.data import changed_settings, data_settings


def test_the_settings_name_what_the_position_depends_on_and_later_options_only_when_set():
    config = tiny.get_config()
    settings = data_settings(config, num_workers=2)
    assert settings["workers"] == 2 and settings["data.max_length"] == config.data.max_length
    assert "data.extra_train_data" not in settings  # positions saved before it still fit
    config.data.extra_train_data = "multi30k/fr-en"
    assert data_settings(config, 2)["data.extra_train_data"] == "multi30k/fr-en"


def test_changed_settings_lists_every_difference_in_name_order():
    saved = {"data.max_length": 48, "workers": 1, "data.concat_ratio": 0.5}
    current = {"data.max_length": 40, "workers": 1}
    assert changed_settings(saved, current) == (
        "data.concat_ratio 0.5 -> None, data.max_length 48 -> 40"
    )
    assert changed_settings(current, dict(current)) is None
