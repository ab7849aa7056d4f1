"""TensorFlow Serving's REST API, in-process (Starlette's TestClient) on the tiny model."""

import asyncio
import base64

import pytest
from starlette.testclient import TestClient

from exports.contract import SIGNATURE_OUTPUTS
from serving.app import create_app
from serving.batching import BatchingOptions
from serving.errors import ApiError
from serving.registry import ModelRegistry
from serving.routes import unless_disconnected

SENTENCES = ["Ein Hund rennt über die Wiese.", "Zwei Männer spielen Fußball.", "Ja"]


@pytest.fixture(scope="module", params=[True, False], ids=["batching", "no batching"])
def client(request, tiny_served, shout_served, limits):
    app = create_app(
        ModelRegistry([tiny_served, shout_served]),
        limits,
        BatchingOptions(enabled=request.param, batch_timeout_micros=1000),
    )
    with TestClient(app) as client:
        yield client


def test_row_and_columnar_requests_get_tf_servings_response_shapes(
    client, tiny_served, translate_directly
):
    expected = [translate_directly(tiny_served, [sentence])[0] for sentence in SENTENCES]
    assert len(set(expected)) == len(expected), f"rows the test cannot tell apart: {expected}"
    rows = client.post("/v1/models/de-en:predict", json={"instances": SENTENCES})
    assert rows.status_code == 200 and rows.json() == {"predictions": expected}
    named = [{"text": sentence} for sentence in SENTENCES]
    assert client.post("/v1/models/de-en/versions/7:predict", json={"instances": named}).json() == {
        "predictions": expected
    }
    encoded = [{"b64": base64.b64encode(s.encode()).decode()} for s in SENTENCES]
    columns = client.post("/V1/Models/de-en:PREDICT", json={"inputs": {"text": encoded}})
    assert columns.json() == {"outputs": expected}
    assert client.post("/v1/models/de-en:predict", json={"inputs": SENTENCES[:1]}).json() == {
        "outputs": expected[:1]
    }


def test_each_model_answers_under_its_own_name(client, shout):
    answer = client.post("/v1/models/shout:predict", json={"instances": SENTENCES})
    assert answer.json() == {"predictions": [shout(sentence) for sentence in SENTENCES]}
    assert client.get("/v1/models/shout").json()["model_version_status"][0]["version"] == "1"


def test_the_cross_attention_signature_gives_pieces_and_one_map_per_head(client, tiny_served):
    answer = client.post(
        "/v1/models/de-en:predict",
        json={"signature_name": "cross_attention", "instances": SENTENCES[:2]},
    )
    predictions = answer.json()["predictions"]
    translations = client.post("/v1/models/de-en:predict", json={"instances": SENTENCES[:2]})
    assert [p["translation"] for p in predictions] == translations.json()["predictions"]
    first = predictions[0]
    assert set(first) == {"attention", "source_pieces", "target_pieces", "translation"}
    heads = tiny_served.signature_defs["cross_attention"]["outputs"]["attention"]["tensor_shape"]
    assert len(first["attention"]) == int(heads["dim"][1]["size"]) == 2
    sources = [piece for piece in first["source_pieces"] if piece]
    targets = [piece for piece in first["target_pieces"] if piece]
    assert sources[-1] == "</s>" and "".join(sources).replace("▁", " ").strip().startswith("Ein")
    assert sum(first["attention"][0][0][: len(sources)]) == pytest.approx(1, abs=1e-5)
    assert len(targets) <= len(first["attention"][0])


def test_status_and_metadata(client, tiny_served):
    status = {
        "model_version_status": [
            {
                "version": "7",
                "state": "AVAILABLE",
                "status": {"error_code": "OK", "error_message": ""},
            }
        ]
    }
    assert client.get("/v1/models/de-en").json() == status
    assert client.get("/v1/models/de-en/versions/7").json() == status
    for path in ("/v1/models/de-en/metadata", "/v1/models/de-en/versions/7/metadata"):
        assert client.get(path).json() == tiny_served.metadata()
    assert client.get("/demo/models").json() == {
        "models": [
            {
                "name": "de-en",
                "version": 7,
                "runtime": "SavedModel",
                "signatures": sorted(SIGNATURE_OUTPUTS),
                "languages": [],
                "beam_size": 1,
            },
            {
                "name": "shout",
                "version": 1,
                "runtime": "SavedModel",
                "signatures": ["serving_default"],
                "languages": [],
                "beam_size": 1,
            },
        ],
        # The names the demo page uses and spells nowhere itself.
        "names": {
            "translate": "serving_default",
            "crossAttention": "cross_attention",
            "scoredSignature": "scored",
            "nBestSignature": "n_best",
            "prefixedSignature": "prefixed",
            "constrainedSignature": "constrained",
            "alignmentSignature": "alignment",
            "textAttention": "text_attention",
            "label": "label",
            "pieces": "pieces",
            "text": "text",
            "targetLang": "target_lang",
            "translation": "translation",
            "score": "score",
            "attention": "attention",
            "sourcePieces": "source_pieces",
            "targetPieces": "target_pieces",
            "nBest": "n_best",
            "withScores": "with_scores",
            "targetPrefix": "target_prefix",
            "terms": "terms",
            "alignments": "alignments",
            "document": "document",
            "sourceLang": "source_lang",
            "html": "html",
            "alignment": "alignment",
            "hypotheses": "hypotheses",
            "confidence": "confidence",
        },
    }


def test_every_bad_request_is_a_4xx_json_error_and_the_server_still_answers(
    client, bad_requests, shout
):
    for bad in bad_requests:
        answer = client.request(bad.method, bad.path, json=bad.json, content=bad.content)
        assert (answer.status_code, bad.message in answer.json()["error"]) == (
            bad.status,
            True,
        ), (bad.what, answer.text)
    answer = client.post("/v1/models/shout:predict", json={"instances": ["still here"]})
    assert answer.json() == {"predictions": [shout("still here")]}


def test_the_demo_page_and_its_files_are_served(client):
    page = client.get("/")
    assert page.status_code == 200 and 'src="/static/demo.js"' in page.text
    for name in ("demo.js", "demo.css"):
        assert client.get(f"/static/{name}").status_code == 200


class _FakeRequest:
    """A request whose client disconnects after ``delay`` seconds."""

    def __init__(self, delay: float) -> None:
        self.delay = delay

    async def receive(self) -> dict:
        await asyncio.sleep(self.delay)
        return {"type": "http.disconnect"}


def test_work_is_cancelled_when_the_client_disconnects_first():
    async def scenario() -> asyncio.Future:
        never = asyncio.get_running_loop().create_future()
        with pytest.raises(ApiError, match="client closed request") as raised:
            await unless_disconnected(_FakeRequest(0.01), never)
        assert raised.value.status == 499
        return never

    assert asyncio.run(scenario()).cancelled()

    async def finishes_first() -> str:
        await asyncio.sleep(0)
        return "done"

    assert asyncio.run(unless_disconnected(_FakeRequest(10), finishes_first())) == "done"


@pytest.mark.parametrize("signature", ["scored", "n_best"])
def test_the_scored_and_n_best_signatures_give_each_row_its_hypotheses_and_scores(
    client, tiny_served, translate_directly, signature
):
    expected = [translate_directly(tiny_served, [sentence])[0] for sentence in SENTENCES]
    answer = client.post(
        "/v1/models/de-en:predict", json={"signature_name": signature, "instances": SENTENCES}
    )
    assert answer.status_code == 200, answer.text
    predictions = answer.json()["predictions"]
    assert [row["translation"] for row in predictions] == [[text] for text in expected]  # beam 1
    for row in predictions:
        assert row["score"][0] < 0 and row["log_prob"][0] < 0 and row["length"][0] >= 1


def test_the_forced_score_signature_scores_each_rows_target(client, tiny_served):
    targets = ["A dog runs.", "Two men play football.", "Yes."]
    rows = [{"text": s, "target": t} for s, t in zip(SENTENCES, targets, strict=True)]
    answer = client.post(
        "/v1/models/de-en:predict", json={"signature_name": "forced_score", "instances": rows}
    )
    assert answer.status_code == 200, answer.text
    expected = tiny_served.signature("forced_score")(targets, SENTENCES)  # inputs sorted
    for row, score, length in zip(
        answer.json()["predictions"], expected["score"], expected["length"], strict=True
    ):
        assert row["score"] == pytest.approx(float(score), abs=1e-5) and row["length"] == length
        assert len(row["token_log_probs"]) >= length
    alone = client.post(
        "/v1/models/de-en:predict",
        json={"signature_name": "forced_score", "instances": rows[1:2]},
    ).json()["predictions"][0]
    assert alone["score"] == pytest.approx(answer.json()["predictions"][1]["score"], abs=1e-5)
