"""The demo page in a real browser: Debian's headless Chromium, driven by Playwright.

``SERVE_DEMO_SCREENSHOT=docs/serve_demo.png`` saves a screenshot of the page at the end (the
README's); ``SERVE_DEMO_SAVED_MODEL=DIR`` serves that SavedModel instead of the tiny one.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect, sync_playwright

from common.alignment import alignments_of
from common.documents import split_document, translate_document
from exports.saved_model import SavedModelTranslator
from serving.saved_model import load_saved_model

CHROMIUM = "/usr/bin/chromium"  # Debian's package; scripts/test.sh installs it when missing
# No sign-in, sync, updates or other background traffic: the machine may have no network.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]
SENTENCE = "Ein Mann mit einem roten Hut spielt auf der Straße Gitarre."
pytestmark = [pytest.mark.browser, pytest.mark.slow]  # the tiny model's server, in Chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


MODELS = ["de-en"] if os.environ.get("SERVE_DEMO_SAVED_MODEL") else ["de-en", "de-en-ct2"]
# Models whose beam keeps several hypotheses.
BEAM_MODELS = ["de-en"] if os.environ.get("SERVE_DEMO_SAVED_MODEL") else ["beam4", "beam4-ct2"]


@pytest.fixture(scope="module")
def demo(request, start_server):
    """``(url, {name: served model})``: the page's server and the models it serves."""
    path = os.environ.get("SERVE_DEMO_SAVED_MODEL")
    if not path:
        from serving.ctranslate2_model import load_ctranslate2_model

        beam4, beam4_ctranslate2 = request.getfixturevalue("tiny_beam4_exports")
        served = {
            "de-en": request.getfixturevalue("tiny_served"),
            "de-en-ct2": request.getfixturevalue("ctranslate2_served"),
            "beam4": load_saved_model("beam4", beam4),
            "beam4-ct2": load_ctranslate2_model("beam4-ct2", beam4_ctranslate2, threads=1),
        }
        return request.getfixturevalue("server"), served
    process, url = start_server(f"--saved_model=de-en={path}")
    request.addfinalizer(lambda: (process.terminate(), process.communicate(timeout=60)))
    return url, {"de-en": load_saved_model("de-en", path)}


@pytest.mark.parametrize("model", MODELS)
def test_typing_a_sentence_and_pressing_enter_shows_its_translation_and_heat_maps(
    browser, demo, translate_directly, model
):
    url, models = demo
    served = models[model]
    expected = translate_directly(served, [SENTENCE])[0]
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(f"{url}/")
    expect(page.locator(f"#model option[value='{model}']")).to_have_count(1)
    page.select_option("#model", model)
    page.locator("#source").press_sequentially(SENTENCE)
    page.locator("#source").press("Enter")
    expect(page.locator("#translations .translation")).to_have_text([expected])
    expect(page.locator("#status")).to_have_text(f"1 sentence(s) translated by {model}.")
    outputs = served.signature("cross_attention")([SENTENCE])
    heads = outputs["attention"].shape[1]  # CTranslate2 returns one
    maps = page.locator("#heatmaps figure.heatmap")
    expect(maps).to_have_count(heads)
    expect(maps.locator("figcaption")).to_have_text([f"head {h + 1}" for h in range(heads)])
    if served.runtime == "CTranslate2":
        expect(page.locator("#attention-caption")).to_contain_text("CTranslate2 returns one map")
    sources = [p.decode() for p in outputs["source_pieces"][0] if p]
    targets = [p.decode() for p in outputs["target_pieces"][0] if p]
    expect(maps.first.locator("thead th")).to_have_text(["", *sources])  # source pieces across
    expect(maps.first.locator("tbody th")).to_have_text(targets)  # output pieces down
    expect(maps.first.locator("tbody td")).to_have_count(len(sources) * len(targets))
    # A typed newline (Shift+Enter) does not translate; Enter does, every line.
    page.locator("#source").press("Shift+Enter")
    page.locator("#source").press_sequentially("Ja")
    expect(page.locator("#translations .translation")).to_have_count(1)
    page.locator("#source").press("Enter")
    expect(page.locator("#translations .translation")).to_have_text(
        translate_directly(served, [SENTENCE, "Ja"])
    )
    page.locator("#translations li").nth(1).click()  # the maps of a chosen sentence
    expect(page.locator("#attention-caption")).to_contain_text("“Ja”")
    page.locator("#translations li").first.click()
    expect(page.locator("#attention-caption")).to_contain_text(SENTENCE)
    expect(maps.first.locator("tbody th")).to_have_text(targets)
    # The word alignment of the translation shown: each output piece's most attended source
    # piece outlined.
    aligned = served.signature("alignment")([expected], [SENTENCE])  # inputs: target, text
    names = ("source_pieces", "target_pieces", "attention")
    alignment = alignments_of(*(aligned[name].tolist() for name in names))[0]
    alignment_map = page.locator("#alignment-map figure.heatmap")
    expect(alignment_map.locator("tbody th")).to_have_text(list(alignment.target_pieces))
    expect(alignment_map.locator("thead th")).to_have_text(["", *alignment.source_pieces])
    expect(alignment_map.locator("td.aligned")).to_have_count(len(alignment.target_pieces))
    # A typed start of the translation is continued.
    prefix = "Ein Mann"
    (continued,) = served.signature("prefixed")([prefix], [SENTENCE])["translation"]
    page.locator("#source").fill(SENTENCE)
    page.locator("#prefix").fill(prefix)
    page.locator("#prefix").press("Enter")
    expect(page.locator("#translations .translation")).to_have_text([continued.decode()])
    # Typed terms are placed, from the typed start (a model with the constrained signature;
    # the box is hidden for a CTranslate2 export).
    terms = page.locator("#terms")
    if served.runtime == "CTranslate2":
        expect(terms).to_be_hidden()
    else:
        outputs = served.signature("constrained")([""], [prefix], ["guitar\nstreet"], [SENTENCE])
        terms.fill("guitar, street")
        terms.press("Enter")
        placed = outputs["translation"][0][0].decode()
        expect(page.locator("#translations .translation")).to_have_text([placed])
        assert "guitar" in placed and "street" in placed and placed.startswith(prefix)
    page.close()


def test_a_document_comes_back_as_one_text_laid_out_as_typed(browser, demo, translate_directly):
    """The box ticked, the text box is one document row: the answer is the server's, shown
    with its line breaks."""
    url, models = demo
    model = MODELS[0]
    text = f"{SENTENCE} Ja.\n\nEin Hund rennt."
    split = split_document(text, "de")
    expected = split.joined(translate_directly(models[model], split.sentences))
    page = browser.new_page()
    page.goto(f"{url}/")
    expect(page.locator(f"#model option[value='{model}']")).to_have_count(1)
    page.select_option("#model", model)
    page.locator("#document").check()
    page.locator("#source").fill(text)
    page.locator("#source").press("Enter")
    shown = page.locator("#translations .translation.document")
    expect(shown).to_have_count(1)
    assert shown.evaluate("node => node.textContent") == expected
    assert "\n\n" in shown.inner_text()  # the blank line between the paragraphs, drawn
    expect(page.locator("#status")).to_have_text(f"A document translated by {model}.")
    # HTML ticked too: its tags kept, as the server places them, shown as the HTML's source.
    markup = f"<p>{SENTENCE}</p>\n<p>Ein <b>Hund</b> rennt.</p>"
    translator = SavedModelTranslator(models[model].path)
    tagged = translate_document(translator, markup, language="de", markup=True)
    page.locator("#html").check()
    page.locator("#source").fill(markup)
    page.locator("#source").press("Enter")
    expect(shown).to_have_text(tagged)
    assert tagged.count("<b>") == 1 and tagged.startswith("<p>")
    page.close()


def _scores(score: float, log_prob: float, length: int, with_score: bool = True) -> str:
    """What the page writes of a hypothesis (JavaScript's toFixed(2) and Python's .2f agree)."""
    confidence = f"confidence {math.exp(log_prob / length):.2f}"
    return f"score {score:.2f} · {confidence}" if with_score else confidence


@pytest.mark.parametrize("model", BEAM_MODELS)
def test_each_translation_shows_its_confidence_and_the_chosen_number_of_alternatives(
    browser, demo, model
):
    url, models = demo
    served = models[model]
    scored = served.signature("scored")([SENTENCE])
    n_best = served.signature("n_best")([SENTENCE])
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(f"{url}/")
    expect(page.locator(f"#model option[value='{model}']")).to_have_count(1)
    if model != "de-en":  # first the tiny model: its beam of 1 offers no alternatives
        page.select_option("#model", "de-en")
        expect(page.locator("#alternatives")).to_be_hidden()
    page.select_option("#model", model)
    expect(page.locator("#alternatives option")).to_have_text(
        [str(n) for n in range(1, served.beam_size + 1)]
    )
    page.locator("#source").press_sequentially(SENTENCE)
    page.locator("#source").press("Enter")
    best = scored["translation"][0][0].decode()
    expect(page.locator("#translations .translation")).to_have_text([best])
    expect(page.locator("#translations .confidence")).to_have_text(
        [_scores(scored["score"][0][0], scored["log_prob"][0][0], scored["length"][0][0], False)]
    )
    expect(page.locator("#translations .alternatives")).to_have_count(0)
    page.select_option("#alternatives", "3")  # translates again, with 3 alternatives
    kept = [
        column
        for column in zip(
            *(n_best[name][0] for name in ("translation", "score", "log_prob", "length")),
            strict=True,
        )
        if column[3] > 0
    ][:3]
    alternatives = page.locator("#translations .alternatives li")
    expect(alternatives.locator(".alternative")).to_have_text([text.decode() for text, *_ in kept])
    expect(alternatives.locator(".scores")).to_have_text([_scores(*rest) for _, *rest in kept])
    expect(alternatives.locator(".alternative").first).to_have_text(best)
    if os.environ.get("SERVE_DEMO_SCREENSHOT"):
        expect(page.locator("#heatmaps figure.heatmap").first).to_be_visible()
        page.screenshot(path=os.environ["SERVE_DEMO_SCREENSHOT"], full_page=True)
    page.close()


@pytest.mark.parametrize("model", ["multi", "multi-ct2"])
def test_the_target_language_selector_switches_the_translation(browser, server, request, model):
    served = "multilingual_served" if model == "multi" else "multilingual_ctranslate2_served"
    loaded = request.getfixturevalue(served)
    expected = {
        lang: loaded.signature("serving_default")([lang], [SENTENCE])["translation"][0].decode()
        for lang in ("de", "fr")
    }
    assert expected["de"] != expected["fr"]  # else the switch could not be seen
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(f"{server}/")
    expect(page.locator(f"#model option[value='{model}']")).to_have_count(1)
    page.select_option("#model", "shout")
    expect(page.locator("#target-lang")).to_be_hidden()  # one target language: no selector
    page.select_option("#model", model)
    expect(page.locator("#target-lang option")).to_have_text(["de", "en", "fr"])
    page.select_option("#target-lang", "fr")
    page.locator("#source").press_sequentially(SENTENCE)
    page.locator("#source").press("Enter")
    expect(page.locator("#translations .translation")).to_have_text([expected["fr"]])
    expect(page.locator("#attention-caption")).to_contain_text("<2fr>")
    maps = page.locator("#heatmaps figure.heatmap")
    expect(maps.first.locator("thead th").nth(2)).to_have_text("<2fr>")  # after "", "▁"
    page.select_option("#target-lang", "de")  # translates again, into German
    expect(page.locator("#translations .translation")).to_have_text([expected["de"]])
    expect(maps.first.locator("thead th").nth(2)).to_have_text("<2de>")
    page.close()


def test_a_classifier_labels_each_text_and_shows_what_it_attended_to(
    browser, classifier_server, tiny_classifier_run
):
    from inference.classifier import load_classifier

    classifier, _ = load_classifier(tiny_classifier_run[0])
    texts = ["free prize cash", "lunch meeting notes"]
    expected = classifier.classify(texts)
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(f"{classifier_server}/")
    page.select_option("#model", "spam")
    expect(page.locator("button[type=submit]")).to_have_text("Classify")
    expect(page.locator("#prefix")).to_be_hidden()
    expect(page.locator(".document-options")).to_be_hidden()
    page.locator("#source").fill("\n".join(texts))
    page.locator("#source").press("End")
    page.locator("#source").press("Enter")
    expect(page.locator("#translations .label")).to_have_text([e.label for e in expected])
    expect(page.locator("#translations .confidence")).to_have_text(
        [f"probability {e.score:.4f}" for e in expected]
    )
    pieces = classifier.attention(texts[0]).pieces
    panels = page.locator("#heatmaps figure.text-heatmap")
    expect(panels).to_have_count(3)  # two heads and their mean
    expect(panels.locator("figcaption").first).to_contain_text("head 1")
    expect(panels.first.locator("span")).to_have_count(len(pieces))
    expect(page.locator("#attention-title")).to_contain_text("classifier")
    page.locator("#translations li").nth(1).click()
    expect(page.locator("#attention-caption")).to_contain_text(texts[1])
    page.close()
