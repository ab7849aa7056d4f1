"""Per-instance translation options (``n_best``, ``with_scores``, ``target_prefix``,
``alignments``) in ``:predict`` rows, on the tiny run decoded with a beam of 4: its SavedModel and
its CTranslate2 export, served in-process."""

import math
import re

import pytest
from starlette.testclient import TestClient

from common.alignment import alignments_of
from common.documents import split_document, translate_document
from common.translation import Sampling
from exports.saved_model import SavedModelTranslator
from serving.app import create_app
from serving.batching import BatchingOptions
from serving.ctranslate2_model import load_ctranslate2_model
from serving.errors import ApiError
from serving.options import RowOptions, row_options
from serving.registry import ModelRegistry
from serving.saved_model import load_saved_model

SENTENCES = [
    "Ein Hund rennt über die Wiese.",
    "Zwei Männer stehen auf einer Straße.",
    "Eine Frau liest ein Buch.",
    "Ja",
]
FIELDS = ("translation", "score", "log_prob", "length", "confidence", "token_log_probs")


def test_rows_without_options_ask_for_none_and_each_bad_value_is_named():
    assert row_options(["Ja", {"text": "Nein"}], columnar=False) is None
    assert row_options({"text": ["Ja"]}, columnar=True) is None
    assert row_options(["Ja", {"text": "Nein", "with_scores": True}], columnar=False) == [
        RowOptions(),
        RowOptions(with_scores=True),
    ]
    for row, message in [
        ({"text": "Ja", "n_best": 0}, r"instances\[1\]: n_best must be a positive integer, got 0"),
        ({"text": "Ja", "n_best": "2"}, r"instances\[1\].n_best must be a positive integer"),
        ({"text": "Ja", "n_best": True}, r"instances\[1\].n_best must be a positive integer"),
        ({"text": "Ja", "with_scores": 1}, r"instances\[1\].with_scores must be true or false"),
        ({"text": "Ja", "target_prefix": 5}, r"instances\[1\].target_prefix must be a string"),
        (
            {"text": "Ja", "target_prefix": "A", "n_best": 2},
            r"instances\[1\]: a target_prefix is continued without scores: drop n_best",
        ),
        (
            {"text": "Ja", "alignments": "fuzzy"},
            r"instances\[1\].alignments must be one of hard, soft, not 'fuzzy'",
        ),
        (
            {"text": "Ja", "sampling": {"top_k": -1}},
            r"instances\[1\].sampling: top_k must be 0 \(the whole vocabulary\) or a positive",
        ),
        (
            {"text": "Ja", "sampling": {"k": 1}},
            r"instances\[1\].sampling must be an object of any of top_k, top_p, temperature, seed",
        ),
        (
            {"text": "Ja", "sampling": {"seed": 1}, "n_best": 2},
            r"instances\[1\]: a sampled translation comes alone: drop n_best",
        ),
        ({"text": "Ja", "document": "yes"}, r"instances\[1\].document must be true or false"),
        ({"text": "Ja", "html": True}, r'instances\[1\].html goes with "document": true'),
        ({"text": "Ja", "source_lang": "de"}, r'instances\[1\].source_lang goes with "document"'),
        (
            {"text": "Ja", "document": True, "source_lang": 7},
            r"instances\[1\].source_lang must be a language code, not 7",
        ),
        (
            {"text": "Ja", "document": True, "alignments": "hard"},
            r"instances\[1\]: a document comes back as one text: drop n_best",
        ),
        ({"text": "Ja", "terms": "dog"}, r'instances\[1\]: "terms" must be a list of strings'),
        ({"text": "Ja", "avoid": [""]}, r"instances\[1\]: avoided phrases must not hold an empty"),
        (
            {"text": "Ja", "terms": ["dog"], "n_best": 2},
            r"instances\[1\]: a translation with terms comes alone \(the 'constrained' signature",
        ),
        (
            {"text": "Ja", "terms": ["dog"], "sampling": {"seed": 1}},
            r"instances\[1\]: a sampled translation comes alone: drop n_best, with_scores, targ",
        ),
    ]:
        with pytest.raises(ApiError, match=message) as error:
            row_options(["Ja", row], columnar=False)
        assert error.value.status == 400
    with pytest.raises(ApiError, match=r"n_best: options are given per row, in row format"):
        row_options({"text": ["Ja"], "n_best": [2]}, columnar=True)


@pytest.fixture(scope="module")
def served(tiny_beam4_exports):
    """The beam-4 SavedModel and CTranslate2 export, by name."""
    saved_model, ctranslate2 = tiny_beam4_exports
    return {
        "saved": load_saved_model("saved", saved_model),
        "ct2": load_ctranslate2_model("ct2", ctranslate2, threads=1),
    }


@pytest.fixture(scope="module", params=[True, False], ids=["batching", "no batching"])
def client(request, served, shout_served, limits):
    app = create_app(
        ModelRegistry([*served.values(), shout_served]),
        limits,
        BatchingOptions(enabled=request.param, batch_timeout_micros=1000),
    )
    with TestClient(app) as client:
        yield client


def _hypotheses(served, signature: str, sentence: str) -> list[dict]:
    """The served model's own hypotheses of ``sentence`` (its signature called in-process)."""
    outputs = served.signature(signature)([sentence])
    return [
        {"translation": text.decode(), "score": score, "log_prob": log_prob, "length": length}
        for text, score, log_prob, length in zip(
            *(outputs[name][0] for name in ("translation", "score", "log_prob", "length")),
            strict=True,
        )
        if length > 0
    ]


def _assert_same_hypothesis(answered: dict, expected: dict) -> None:
    assert set(answered) == set(FIELDS)
    assert answered["translation"] == expected["translation"]
    assert answered["length"] == expected["length"]
    assert answered["score"] == pytest.approx(float(expected["score"]), abs=1e-5)
    assert answered["log_prob"] == pytest.approx(float(expected["log_prob"]), abs=1e-5)
    confidence = math.exp(answered["log_prob"] / answered["length"])
    assert answered["confidence"] == pytest.approx(confidence) and 0 < confidence <= 1
    assert len(answered["token_log_probs"]) == answered["length"]
    assert sum(answered["token_log_probs"]) == pytest.approx(answered["log_prob"], abs=1e-4)


@pytest.mark.parametrize("model", ["saved", "ct2"])
def test_a_mixed_request_gives_each_row_what_its_options_ask_for(
    client, served, translate_directly, model
):
    rows = [
        SENTENCES[0],
        {"text": SENTENCES[1], "n_best": 3},
        {"text": SENTENCES[2], "with_scores": True},
        {"text": SENTENCES[3], "n_best": 2, "with_scores": True},
    ]
    answer = client.post(f"/v1/models/{model}:predict", json={"instances": rows})
    assert answer.status_code == 200, answer.text
    plain, three, scored, two = answer.json()["predictions"]
    translations = [translate_directly(served[model], [sentence])[0] for sentence in SENTENCES]
    assert plain == translations[0]

    assert set(three) == {"translation", "hypotheses"} and three["translation"] == translations[1]
    expected = _hypotheses(served[model], "n_best", SENTENCES[1])[:3]
    assert len(three["hypotheses"]) == len(expected) == 3
    for answered, own in zip(three["hypotheses"], expected, strict=True):
        _assert_same_hypothesis(answered, own)
    assert three["hypotheses"][0]["translation"] == translations[1]

    assert scored["translation"] == translations[2]
    _assert_same_hypothesis(scored, _hypotheses(served[model], "scored", SENTENCES[2])[0])

    assert set(two) == {*FIELDS, "hypotheses"} and len(two["hypotheses"]) == 2
    _assert_same_hypothesis(
        {k: v for k, v in two.items() if k != "hypotheses"}, two["hypotheses"][0]
    )
    assert two["translation"] == translations[3]


@pytest.mark.parametrize("model", ["saved", "ct2"])
def test_options_the_model_cannot_honour_are_400s_naming_the_limit(client, model):
    def error(body: dict, model: str = model) -> str:
        answer = client.post(f"/v1/models/{model}:predict", json=body)
        assert answer.status_code == 400, answer.text
        return answer.json()["error"]

    five = {"instances": ["Ja", {"text": "Nein", "n_best": 5}]}
    assert error(five) == (
        "instances[1]: n_best (5) must not exceed the beam size (4): a search keeps that many "
        "hypotheses; ask for fewer, or decode with a larger beam (--beam_size with --workdir)."
    )
    other_signature = {"signature_name": "cross_attention", "instances": [five["instances"][1]]}
    assert "options of serving_default's rows, not of the signature cross_attention" in error(
        other_signature
    )
    assert "has no scored signature" in error(
        {"instances": [{"text": "Ja", "with_scores": True}]}, model="shout"
    )
    assert "has no alignment signature" in error(
        {"instances": [{"text": "Ja", "alignments": "hard"}]}, model="shout"
    )
    assert "must name the inputs text; it has txt" in error(
        {"instances": [{"txt": "Ja", "n_best": 2}]}
    )


@pytest.mark.parametrize("model", ["saved", "ct2"])
def test_prefixes_and_alignments_in_a_mixed_request(client, served, translate_directly, model):
    prefix = "Ein Mann"
    rows = [
        {"text": SENTENCES[0], "alignments": "hard"},
        {"text": SENTENCES[1], "target_prefix": prefix},
        {"text": SENTENCES[1], "target_prefix": prefix, "alignments": "soft"},
        {"text": SENTENCES[3], "n_best": 2, "alignments": "hard"},
        SENTENCES[0],
    ]
    answer = client.post(f"/v1/models/{model}:predict", json={"instances": rows})
    assert answer.status_code == 200, answer.text
    hard, continued, soft, two, plain = answer.json()["predictions"]
    own = served[model]
    translation = translate_directly(own, [SENTENCES[0]])[0]
    assert plain == translation and set(hard) == {"translation", "alignment"}

    def own_alignment(sentence: str, target: str):
        outputs = own.signature("alignment")([target], [sentence])  # inputs: target, text
        names = ("source_pieces", "target_pieces", "attention")
        return alignments_of(*(outputs[name].tolist() for name in names))[0]

    assert hard["translation"] == translation
    assert hard["alignment"] == own_alignment(SENTENCES[0], translation).pharaoh() != ""
    (expected,) = own.signature("prefixed")([prefix], [SENTENCES[1]])["translation"]
    assert continued == expected.decode() and continued.startswith(prefix)
    assert soft["translation"] == continued
    expected_soft = own_alignment(SENTENCES[1], continued).fields()
    assert set(soft["alignment"]) == set(expected_soft)
    for name in ("source_pieces", "target_pieces"):
        assert soft["alignment"][name] == expected_soft[name]
    attention = zip(soft["alignment"]["attention"], expected_soft["attention"], strict=True)
    for row, expected_row in attention:
        assert row == pytest.approx(expected_row, abs=1e-5)  # batched with other rows
    assert len(two["hypotheses"]) == 2
    for hypothesis in two["hypotheses"]:
        links = own_alignment(SENTENCES[3], hypothesis["translation"]).pharaoh()
        assert hypothesis["alignment"] == links
    assert two["alignment"] == two["hypotheses"][0]["alignment"]


def test_terms_in_a_mixed_request_and_a_ctranslate2_export_avoids_phrases_only(
    client, served, translate_directly
):
    rows = [
        {"text": SENTENCES[0], "terms": ["a dog"]},
        {"text": SENTENCES[1], "terms": ["street"], "target_prefix": "Two", "with_scores": True},
        {"text": SENTENCES[2], "avoid": ["woman"], "terms": ["book"], "alignments": "hard"},
        SENTENCES[0],
    ]
    answer = client.post("/v1/models/saved:predict", json={"instances": rows})
    assert answer.status_code == 200, answer.text
    dog, street, book, plain = answer.json()["predictions"]
    constrained = served["saved"].signature("constrained")  # avoid, target_prefix, terms, text

    def expected(row: dict) -> dict:
        outputs = constrained(
            ["\n".join(row.get("avoid", []))],
            [row.get("target_prefix", "")],
            ["\n".join(row["terms"])],
            [row["text"]],
        )
        return {name: outputs[name][0][0] for name in ("translation", "score", "length")}

    assert dog == expected(rows[0])["translation"].decode() and "a dog" in dog
    assert street["translation"] == expected(rows[1])["translation"].decode()
    assert street["translation"].startswith("Two") and "street" in street["translation"]
    assert street["score"] == pytest.approx(float(expected(rows[1])["score"]), abs=1e-5)
    assert book["translation"] == expected(rows[2])["translation"].decode()
    assert "book" in book["translation"] and "woman" not in book["translation"].split()
    assert (
        book["alignment"] != ""
        and plain
        == served["saved"].signature("serving_default")([SENTENCES[0]])["translation"][0].decode()
    )
    refused = client.post("/v1/models/ct2:predict", json={"instances": rows[:1]})
    assert refused.status_code == 400
    assert refused.json()["error"] == (
        "terms: CTranslate2 has no constrained search to place terms (it avoids phrases only): "
        "serve the model's SavedModel (--saved_model) for terms"
    )
    # Avoided phrases CTranslate2 suppresses, a set of them at a time.
    word = translate_directly(served["ct2"], [SENTENCES[2]])[0].rstrip(".").split()[-1]
    rows = [{"text": SENTENCES[2], "avoid": [word], "with_scores": True}, SENTENCES[2]]
    answer = client.post("/v1/models/ct2:predict", json={"instances": rows})
    assert answer.status_code == 200, answer.text
    avoided, plain = answer.json()["predictions"]
    assert word not in re.findall(r"\w+", avoided["translation"]) and word in plain
    expected = served["ct2"].loaded.avoiding([word]).translate([SENTENCES[2]], progress=False)
    assert avoided["translation"] == expected[0]


def test_sampled_rows_repeat_their_seed_and_a_saved_model_says_where_to_sample(client, served):
    wild = {"top_k": 0, "temperature": 1.5, "seed": 1}
    rows = [
        {"text": SENTENCES[0], "sampling": wild},
        {"text": SENTENCES[1], "sampling": wild},
        {"text": SENTENCES[0], "sampling": {**wild, "seed": 2}},
        SENTENCES[0],
        {"text": SENTENCES[2], "sampling": {"top_k": 1}, "alignments": "hard"},
    ]
    answers = [client.post("/v1/models/ct2:predict", json={"instances": rows}) for _ in range(2)]
    assert answers[0].status_code == 200, answers[0].text
    first, second = (answer.json()["predictions"] for answer in answers)
    assert first == second  # the same request, the same samples
    translator = served["ct2"].loaded
    expected = translator.sample(SENTENCES[:2], Sampling(**wild), progress=False)
    assert first[:2] == expected  # the rows of one setting sampled together
    assert (
        first[2]
        == translator.sample(SENTENCES[:1], Sampling(**{**wild, "seed": 2}), progress=False)[0]
    )
    assert first[3] == translator.translate(SENTENCES[:1], progress=False)[0]
    assert set(first[4]) == {"translation", "alignment"} and first[4]["alignment"]
    refused = client.post("/v1/models/saved:predict", json={"instances": rows})
    assert refused.status_code == 400
    assert (
        "translates with the search it was exported with and cannot sample: serve a "
        in (refused.json()["error"])
    )


@pytest.mark.parametrize("model", ["saved", "ct2"])
def test_a_document_row_comes_back_as_one_text_laid_out_as_it_came(
    client, served, translate_directly, model
):
    """Its sentences translated as each alone, in their places; one longer than the model
    reads (48 tokens) cut first; the other rows as ever."""
    long = ", ".join(["Ein Hund rennt"] * 12) + "."
    text = f"{SENTENCES[0]}  {SENTENCES[1]}\n\n  {long}\n"
    rows = [{"text": text, "document": True, "source_lang": "de"}, SENTENCES[3]]
    answer = client.post(f"/v1/models/{model}:predict", json={"instances": rows})
    assert answer.status_code == 200, answer.text
    document, plain = answer.json()["predictions"]
    limit = served[model].max_source_length - 1
    split = split_document(
        text, "de", lambda texts: [n > limit for n in served[model].source_lengths(texts, "")]
    )
    assert len(split.sentences) > 3  # the long one was cut
    assert document == split.joined(translate_directly(served[model], split.sentences))
    assert plain == translate_directly(served[model], [SENTENCES[3]])[0]
    # HTML: its tags placed by the model's alignment signature, as translate.py places them.
    page = f"<p>{SENTENCES[0]}</p>\n<p>Eine <b>Frau</b> liest ein <i>Buch</i>.<br>Ende</p>"
    row = {"text": page, "document": True, "source_lang": "de", "html": True}
    answer = client.post(f"/v1/models/{model}:predict", json={"instances": [row]})
    assert answer.status_code == 200, answer.text
    runtime = served[model].loaded
    translator = SavedModelTranslator(served[model].path) if model == "saved" else runtime
    expected = translate_document(translator, page, language="de", markup=True)
    assert answer.json()["predictions"] == [expected] and expected.count("<") == page.count("<")
