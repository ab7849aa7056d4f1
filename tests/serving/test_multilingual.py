"""A multilingual model served (its SavedModel and its CTranslate2 export): each row names its
target language, in TF Serving's row and columnar forms; an unknown language is a 400."""

import pytest
from starlette.testclient import TestClient

from serving.app import create_app
from serving.batching import BatchingOptions
from serving.registry import ModelRegistry

# One sentence into two languages, and others: a server that gave every row of a request the
# first row's language, or another row's sentence, would answer a row wrongly.
SENTENCES = [
    "Ein Hund rennt über die Wiese.",
    "Ein Hund rennt über die Wiese.",
    "Zwei Männer.",
    "Ja",
]
LANGUAGES = ["fr", "en", "de", "fr"]
ROWS = [{"text": s, "target_lang": lang} for s, lang in zip(SENTENCES, LANGUAGES, strict=True)]


@pytest.fixture(scope="module")
def models(multilingual_served, multilingual_ctranslate2_served):
    return {"multi": multilingual_served, "multi-ct2": multilingual_ctranslate2_served}


@pytest.fixture(scope="module")
def client(models, limits):
    """Batching on: rows of several requests, in several languages, run as one batch."""
    app = create_app(
        ModelRegistry(list(models.values())),
        limits,
        BatchingOptions(True, batch_timeout_micros=1000),
    )
    with TestClient(app) as client:
        yield client


def one_at_a_time(model) -> list[str]:
    """Each row translated by the model itself (its serving_default called in this process)
    alone: what the server must answer for it in any request."""
    serve = model.signature("serving_default")  # columns: target_lang, text
    return [
        serve([lang], [sentence])["translation"][0].decode()
        for sentence, lang in zip(SENTENCES, LANGUAGES, strict=True)
    ]


@pytest.mark.parametrize("name", ["multi", "multi-ct2"])
def test_each_row_is_translated_into_its_own_language(client, name, models):
    expected = one_at_a_time(models[name])
    assert len(set(expected)) == len(expected), f"rows the test cannot tell apart: {expected}"
    predict = f"/v1/models/{name}:predict"
    answer = client.post(predict, json={"instances": ROWS}).json()["predictions"]
    assert answer == expected
    columns = {"inputs": {"text": SENTENCES, "target_lang": LANGUAGES}}
    assert client.post(predict, json=columns).json()["outputs"] == expected
    reversed_rows = client.post(predict, json={"instances": ROWS[::-1]}).json()["predictions"]
    assert reversed_rows == expected[::-1]
    assert not any("<2" in translation for translation in answer)
    attention = client.post(
        predict, json={"signature_name": "cross_attention", "instances": ROWS[:1]}
    ).json()["predictions"][0]
    assert attention["translation"] == expected[0]
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
