"""A classifier's SavedModel served: :predict gives each text's label and score (rows and
columns), text_attention what it attended to, and the metadata its signatures."""

from __future__ import annotations

import httpx2
import pytest

from inference.classifier import load_classifier

pytestmark = pytest.mark.slow


def test_predict_labels_each_text_with_its_score(classifier_server, tiny_classifier_run):
    classifier, _ = load_classifier(tiny_classifier_run[0])
    texts = ["free prize cash", "lunch meeting notes", "winner bonus click urgent"]
    expected = classifier.classify(texts)
    with httpx2.Client(base_url=classifier_server, timeout=60) as client:
        rows = client.post("/v1/models/spam:predict", json={"instances": texts})
        assert rows.status_code == 200, rows.text
        predictions = rows.json()["predictions"]
        assert [p["label"] for p in predictions] == [e.label for e in expected]
        for prediction, result in zip(predictions, expected, strict=True):
            assert prediction["score"] == pytest.approx(result.score, abs=1e-5)
        columns = client.post("/v1/models/spam:predict", json={"inputs": {"text": texts}})
        assert columns.json()["outputs"]["label"] == [e.label for e in expected]
        attended = client.post(
            "/v1/models/spam:predict",
            json={"signature_name": "text_attention", "instances": texts[:1]},
        ).json()["predictions"][0]
        pieces = [piece for piece in attended["pieces"] if piece]
        assert pieces == classifier.attention(texts[0]).pieces
        assert len(attended["attention"]) == 2  # heads
        assert sum(attended["attention"][0]) == pytest.approx(1.0, abs=1e-5)
        metadata = client.get("/v1/models/spam/metadata").json()
        signatures = metadata["metadata"]["signature_def"]["signature_def"]
        assert {"serving_default", "text_attention"} <= set(signatures)
        bad = client.post("/v1/models/spam:predict", json={"instances": [{"txt": "x"}]})
        assert bad.status_code == 400
