"""A CTranslate2 export served: the same REST contract as a SavedModel, without TensorFlow."""

import base64
import subprocess
import sys

import pytest
from starlette.testclient import TestClient

from exports.contract import SIGNATURE_OUTPUTS
from serving.app import create_app
from serving.batching import BatchingOptions
from serving.ctranslate2_model import load_ctranslate2_model
from serving.registry import ModelRegistry
from serving.routes import DEMO_NAMES
from tests.script_runner import REPO_ROOT

SENTENCES = ["Ein Hund rennt über die Wiese.", "Zwei Männer spielen Fußball.", "Ja"]


@pytest.fixture(scope="module", params=[True, False], ids=["batching", "no batching"])
def client(request, tiny_ctranslate2, limits):
    model = load_ctranslate2_model("de-en", tiny_ctranslate2, threads=1)
    app = create_app(
        ModelRegistry([model]), limits, BatchingOptions(request.param, batch_timeout_micros=1000)
    )
    with TestClient(app) as client:
        yield client


@pytest.fixture(scope="module")
def expected(ctranslate2_served) -> list[str]:
    """Each sentence translated by the export alone, and each different: a row given another
    row's translation cannot pass."""
    serve = ctranslate2_served.signature("serving_default")
    translations = [serve([sentence])["translation"][0].decode() for sentence in SENTENCES]
    assert len(set(translations)) == len(translations), translations
    return translations


def test_rows_columns_named_inputs_and_b64_get_the_exports_translations(client, expected):
    predict = "/v1/models/de-en:predict"
    assert client.post(predict, json={"instances": SENTENCES}).json() == {"predictions": expected}
    named = [{"text": sentence} for sentence in SENTENCES]
    assert client.post(predict, json={"instances": named}).json() == {"predictions": expected}
    encoded = [{"b64": base64.b64encode(s.encode()).decode()} for s in SENTENCES]
    assert client.post(predict, json={"inputs": {"text": encoded}}).json() == {"outputs": expected}
    assert client.post(
        "/v1/models/de-en/versions/7:predict", json={"inputs": SENTENCES}
    ).json() == {"outputs": expected}


def test_every_bad_input_gets_the_same_error_as_from_a_saved_model(client, bad_requests):
    for bad in bad_requests:
        answer = client.request(bad.method, bad.path, json=bad.json, content=bad.content)
        assert answer.status_code == bad.status, (bad.what, answer.text)
        assert bad.message in answer.json()["error"], (bad.what, answer.text)


def test_status_metadata_and_the_demo_pages_model_list(client):
    status = client.get("/v1/models/de-en").json()["model_version_status"]
    assert [(s["version"], s["state"]) for s in status] == [("7", "AVAILABLE")]
    defs = client.get("/v1/models/de-en/metadata").json()["metadata"]["signature_def"]
    assert set(defs["signature_def"]) == set(SIGNATURE_OUTPUTS)
    assert defs["signature_def"]["serving_default"]["inputs"]["text"]["dtype"] == "DT_STRING"
    assert client.get("/demo/models").json() == {
        "models": [
            {
                "name": "de-en",
                "version": 7,
                "runtime": "CTranslate2",
                "signatures": sorted(SIGNATURE_OUTPUTS),
                "languages": [],
                "beam_size": 1,
            }
        ],
        "names": DEMO_NAMES,
    }


@pytest.mark.parametrize("signature", ["scored", "n_best"])
def test_the_scored_and_n_best_signatures_score_as_the_saved_model_does(
    client, expected, tiny_served, signature
):
    answer = client.post(
        "/v1/models/de-en:predict", json={"signature_name": signature, "instances": SENTENCES}
    )
    assert answer.status_code == 200, answer.text
    predictions = answer.json()["predictions"]
    assert [row["translation"] for row in predictions] == [[text] for text in expected]  # beam 1
    saved_model = tiny_served.signature(signature)(SENTENCES)
    for row, (translation,), (score,), (length,) in zip(
        predictions,
        saved_model["translation"],
        saved_model["score"],
        saved_model["length"],
        strict=True,
    ):
        if row["translation"][0] == translation.decode():  # the same hypothesis, the same score
            assert row["score"][0] == pytest.approx(float(score), abs=1e-4)
            assert row["length"][0] == length


def test_the_forced_score_signature_scores_as_the_saved_model_does(client, tiny_served):
    targets = ["A dog runs.", "Two men play football.", "Yes."]
    rows = [{"text": s, "target": t} for s, t in zip(SENTENCES, targets, strict=True)]
    answer = client.post(
        "/v1/models/de-en:predict", json={"signature_name": "forced_score", "instances": rows}
    )
    assert answer.status_code == 200, answer.text
    saved_model = tiny_served.signature("forced_score")(targets, SENTENCES)  # inputs sorted
    for row, score, length in zip(
        answer.json()["predictions"], saved_model["score"], saved_model["length"], strict=True
    ):
        assert row["score"] == pytest.approx(float(score), abs=1e-4) and row["length"] == length


def test_cross_attention_gives_one_head_over_the_source_pieces(client, expected):
    answer = client.post(
        "/v1/models/de-en:predict",
        json={"signature_name": "cross_attention", "instances": SENTENCES[:2]},
    )
    predictions = answer.json()["predictions"]
    assert len(predictions) == 2
    for prediction, sentence, translation in zip(
        predictions, SENTENCES[:2], expected[:2], strict=True
    ):
        assert prediction["translation"] == translation
        source = [piece for piece in prediction["source_pieces"] if piece]
        target = [piece for piece in prediction["target_pieces"] if piece]
        assert "".join(source).replace("▁", " ").strip() == sentence
        written = "".join(piece for piece in target if piece != "</s>")
        assert translation and written.replace("▁", " ").strip() == translation
        (head,) = prediction["attention"]  # one head: CTranslate2's alignment head
        # A row for each target piece, a column for each source piece (both padded alike).
        assert len(head) == len(prediction["target_pieces"]) >= len(target)
        assert [len(row) for row in head] == [len(prediction["source_pieces"])] * len(head)
        rows = [row[: len(source)] for row in head[: len(target)]]
        assert all(0.0 < sum(row) <= 1.0 + 1e-5 for row in rows)
        assert all(not any(row[len(source) :]) for row in head)  # padding columns are 0
        assert not any(map(any, head[len(target) :]))  # and padding rows


def test_serving_an_export_loads_no_tensorflow(tiny_ctranslate2):
    script = (
        "import sys\n"
        "from starlette.testclient import TestClient\n"
        "from serving.app import create_app\n"
        "from serving.ctranslate2_model import load_ctranslate2_model\n"
        "from serving.registry import ModelRegistry\n"
        f"model = load_ctranslate2_model('de-en', {tiny_ctranslate2!r}, threads=1)\n"
        "with TestClient(create_app(ModelRegistry([model]))) as client:\n"
        "    answer = client.post('/v1/models/de-en:predict', json={'instances': ['Ja']})\n"
        "print(answer.status_code, sorted(m for m in sys.modules if m.startswith('tensorflow')))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO_ROOT
    )
    assert completed.stdout == "200 []\n", completed.stderr[-2000:]
