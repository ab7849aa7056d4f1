"""A multilingual model served (its SavedModel and its CTranslate2 export): each row names its
target language, in TF Serving's row and columnar forms; an unknown language is a 400."""

import pytest
from starlette.testclient import TestClient

from serving.app import create_app
from serving.batching import BatchingOptions
from serving.registry import ModelRegistry

SENTENCES = ["Ein Hund rennt über die Wiese.", "Zwei Männer spielen Fußball.", "Ja"]
LANGUAGES = ["fr", "de", "fr"]


@pytest.fixture(scope="module")
def models(multilingual_served, multilingual_ctranslate2_served):
    return [multilingual_served, multilingual_ctranslate2_served]


@pytest.fixture(scope="module")
def client(models, limits):
    """Batching on: rows of several requests, in several languages, run as one batch."""
    app = create_app(
        ModelRegistry(models), limits, BatchingOptions(True, batch_timeout_micros=1000)
    )
    with TestClient(app) as client:
        yield client


@pytest.fixture(scope="module")
def expected(multilingual_served) -> list[str]:
    """Each sentence translated into its language by the SavedModel, one at a time."""
    serve = multilingual_served.signature("serving_default")  # columns: target_lang, text
    return [
        serve([lang], [sentence])["translation"][0].decode()
        for sentence, lang in zip(SENTENCES, LANGUAGES, strict=True)
    ]


@pytest.mark.parametrize("name", ["multi", "multi-ct2"])
def test_each_row_is_translated_into_its_own_language(client, name, expected, models):
    predict = f"/v1/models/{name}:predict"
    rows = [{"text": s, "target_lang": lang} for s, lang in zip(SENTENCES, LANGUAGES, strict=True)]
    answer = client.post(predict, json={"instances": rows}).json()["predictions"]
    columns = {"inputs": {"text": SENTENCES, "target_lang": LANGUAGES}}
    assert client.post(predict, json=columns).json()["outputs"] == answer
    if name == "multi":
        assert answer == expected
    assert not any("<2" in translation for translation in answer)
    attention = client.post(
        predict, json={"signature_name": "cross_attention", "instances": rows[:1]}
    ).json()["predictions"][0]
    assert attention["translation"] == answer[0]
    assert "<2fr>" in attention["source_pieces"]


@pytest.mark.parametrize("name", ["multi", "multi-ct2"])
def test_an_unknown_or_missing_language_is_a_400_naming_the_models_languages(client, name):
    predict = f"/v1/models/{name}:predict"
    rows = [{"text": "Ein Hund.", "target_lang": "fr"}, {"text": "Ja", "target_lang": "cs"}]
    answer = client.post(predict, json={"instances": rows})
    assert answer.status_code == 400, answer.text
    expected = "Unknown target language 'cs': this model translates into de, en, fr."
    assert answer.json()["error"] == expected
    assert "\n" not in answer.json()["error"]
    missing = client.post(predict, json={"instances": ["Ein Hund."]})
    assert missing.status_code == 400, missing.text
    assert "target_lang" in missing.json()["error"]


def test_metadata_and_the_demo_pages_model_list_name_the_languages(client):
    defs = client.get("/v1/models/multi-ct2/metadata").json()["metadata"]["signature_def"]
    assert set(defs["signature_def"]["serving_default"]["inputs"]) == {"text", "target_lang"}
    listed = {m["name"]: m["languages"] for m in client.get("/demo/models").json()["models"]}
    assert listed == {"multi": ["de", "en", "fr"], "multi-ct2": ["de", "en", "fr"]}
