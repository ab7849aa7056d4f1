"""Terms through the request interface: a work directory's translator places each sentence's
terms, leaves sentences without terms as they were, and translate.py reads glossaries and
per-line terms (the copy model: confident, so ties do not decide)."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from common.glossary import Glossary
from common.translation import RequestError, Sampling, Terms, TranslationRequest
from decoding.translator import ModelTranslator
from exports.ctranslate2 import CTranslate2Translator
from exports.saved_model import SavedModelTranslator
from inference.loading import load_translator
from tests.script_runner import run_in_process

SENTENCES = [
    "Ein Hund rennt über die Wiese.",
    "Zwei Männer stehen auf einer Straße.",
    "Eine Frau liest ein Buch.",
]


@pytest.fixture(scope="module")
def copy_run(copy_translators, validation_sentences):
    """The copy model's beam-4 translator, 24 sentences and their plain translations."""
    translator, translations = copy_translators[4]
    return translator, validation_sentences[:24], translations[:24]


def _terms_of_other_sentences(sentences: list[str]) -> list[Terms | None]:
    """Even rows: the longest word of the next sentence (a word the copy model would not
    write), required; odd rows: no terms."""
    terms = []
    for row, _ in enumerate(sentences):
        other = sentences[(row + 1) % len(sentences)].rstrip(".").split()
        terms.append(Terms([max(other, key=len)]) if row % 2 == 0 else None)
    return terms


def test_each_term_is_placed_and_sentences_without_terms_are_unchanged(copy_run):
    translator, sentences, plain = copy_run
    terms = _terms_of_other_sentences(sentences)
    avoided_word = max(plain[1].rstrip(".").split(), key=len)
    terms[1] = Terms(avoided=[avoided_word])
    constrained = translator.translate(sentences, TranslationRequest(terms=terms), progress=False)
    for row, (given, translation) in enumerate(zip(terms, constrained, strict=True)):
        if row == 1:
            assert avoided_word not in translation.rstrip(".").split(), translation
        elif given is None:
            assert translation == plain[row]
        else:
            assert given.required[0] in translation, (given, translation)
    for row in (0, 1, 4):  # the same translation alone as in the batch
        alone = TranslationRequest(terms=[terms[row]])
        assert translator.translate([sentences[row]], alone, progress=False) == [constrained[row]]


def test_the_best_of_n_with_terms_is_the_translation_scored_as_forced_decoding_does(copy_run):
    translator, sentences, _ = copy_run
    terms = _terms_of_other_sentences(sentences[:6])
    request = TranslationRequest(n_best=2, terms=terms)
    rows = translator.hypotheses(sentences[:6], request, progress=False)
    best = translator.translate(sentences[:6], TranslationRequest(terms=terms), progress=False)
    assert [row[0].text for row in rows] == best
    assert all(given is None or given.required[0] in best[row] for row, given in enumerate(terms))
    # Forced decoding reads the text's own pieces; a term's pieces placed by the search may
    # spell the same text otherwise (seen once in CI on an Intel Xeon: 30 pieces against its
    # 32): the scores are compared where the pieces are as many.
    forced = translator.score(sentences[:6], best, progress=False)
    compared = 0
    for row, given, scored in zip(rows, terms, forced, strict=True):
        assert row[1:] == [] or row[1].score <= row[0].score
        if row[0].length == scored.length:
            assert row[0].score == pytest.approx(scored.score, abs=1e-4), row[0].text
            compared += given is not None
    assert compared >= 2  # of the 3 sentences with a term


def test_a_glossary_requires_its_term_where_its_source_phrase_occurs(copy_run):
    translator, _, _ = copy_run
    sentences = ["Ein Hund rennt.", "Eine Katze schläft.", "Der HUND bellt."]
    glossary = Glossary((("hund", "Schäferhund"),))
    translations = translator.translate(
        sentences, TranslationRequest(glossary=glossary), progress=False
    )
    assert "Schäferhund" in translations[0] and "Schäferhund" in translations[2]
    assert translations[1] == translator.translate(sentences[1:2], progress=False)[0]


@pytest.mark.parametrize(
    "request_fields, message",
    [
        ({"terms": [Terms(["a"])], "sampling": Sampling(top_k=5)}, "not both"),
        ({"terms": [Terms(["a"])] * 2}, "Give terms (or None) for each sentence: got 2 for 1"),
        ({"terms": ["a dog"]}, "terms must be a list of Terms"),
    ],
)
def test_terms_a_request_cannot_honour_are_one_line_errors(copy_run, request_fields, message):
    translator, _, _ = copy_run
    with pytest.raises(RequestError, match=message.replace("(", r"\(").replace(")", r"\)")):
        translator.translate(["Ein Hund."], TranslationRequest(**request_fields), progress=False)


def test_translate_py_reads_a_glossary_and_terms_a_line(tiny_run, tmp_path):
    translator, _ = load_translator(tiny_run[0], "latest")
    source = tmp_path / "in.txt"
    source.write_text("".join(f"{s}\n" for s in SENTENCES), encoding="utf-8")
    glossary = tmp_path / "glossary.tsv"
    glossary.write_text("# de\ten\nHund\tdog\nBuch\tnovel\n", encoding="utf-8")
    per_line = tmp_path / "terms.jsonl"
    lines = [{"terms": ["street"]}, None, {"terms": ["a woman"], "avoid": ["book"]}]
    per_line.write_text(
        "".join(("" if line is None else json.dumps(line)) + "\n" for line in lines),
        encoding="utf-8-sig",  # a byte-order mark first, as Windows editors write
    )
    requests = {
        glossary: TranslationRequest(glossary=Glossary.read(str(glossary))),
        per_line: TranslationRequest(
            terms=[None if line is None else Terms.from_fields(line) for line in lines]
        ),
    }
    workdir = [f"--workdir={tiny_run[0]}", "--checkpoint=latest", f"--input={source}"]
    for terms_file, request in requests.items():
        expected = translator.translate(SENTENCES, request, progress=False)
        run = run_in_process("translate.py", *workdir, f"--terms={terms_file}", "--window=2")
        assert run.returncode == 0, run.stderr
        assert run.stdout.splitlines() == expected
    bad_glossary, bad_lines = tmp_path / "bad.tsv", tmp_path / "bad.jsonl"
    bad_glossary.write_text("Hund\tdog\nKatze cat\n", encoding="utf-8")
    bad_lines.write_text('{"terms": ["a"]}\n{"terms": "a"}\n\n', encoding="utf-8")
    for flags, message in {
        (f"--terms={bad_glossary}",): f"error: {bad_glossary} line 2: expected 'source phrase",
        (f"--terms={bad_lines}",): f'error: {bad_lines} line 2: "terms" must be a list',
        (f"--terms={per_line}", "--sampling_topk=5"): "error: --terms are placed by the search",
    }.items():
        run = run_in_process("translate.py", *workdir, *flags)
        assert run.returncode == 1 and run.stderr.strip().startswith(message), run.stderr
        assert len(run.stderr.strip().splitlines()) == 1


def test_a_saved_model_places_terms_as_the_work_directory_and_ctranslate2_says_it_cannot(
    tiny_run, tiny_beam4_exports
):
    saved_model, ctranslate2 = tiny_beam4_exports
    translator, _ = load_translator(tiny_run[0], "latest", beam_size=4, jit_compile=False)
    exported = SavedModelTranslator(saved_model)
    request = TranslationRequest(
        terms=[Terms(["a dog"]), None, Terms(["book", "reading"], avoided=["woman"])],
        target_prefix=["", "Two", ""],
    )
    expected = translator.hypotheses(SENTENCES, request, progress=False)
    found = exported.hypotheses(SENTENCES, request, progress=False)
    assert [row[0].text for row in found] == [row[0].text for row in expected]
    for row, expected_row in zip(found, expected, strict=True):
        assert row[0].score == pytest.approx(expected_row[0].score, abs=1e-5)
    assert exported.translate(SENTENCES, request, progress=False) == [
        row[0].text for row in expected
    ]
    with pytest.raises(RequestError, match="A SavedModel gives one translation with terms"):
        exported.hypotheses(SENTENCES, dataclasses.replace(request, n_best=2), progress=False)
    with pytest.raises(RequestError, match="CTranslate2 has no constrained search"):
        CTranslate2Translator(ctranslate2, threads=1).translate(SENTENCES, request)


def test_batches_under_xla_place_the_terms_as_the_graph_search(copy_run, copy_model, tokenizer):
    translator, sentences, _ = copy_run
    compiled = ModelTranslator(
        copy_model, tokenizer, translator.options, max_source_length=48, jit_compile=True
    )
    terms = _terms_of_other_sentences(sentences[:10])
    terms[3] = Terms(["Baum"], avoided=["ein"])
    request = TranslationRequest(terms=terms, target_prefix=[""] * 9 + ["Ein"])
    expected = translator.hypotheses(sentences[:10], request, progress=False)
    for batch_size in (4, 10):  # under XLA (padded to 4 rows), and in the graph
        found = compiled.hypotheses(sentences[:10], request, batch_size, progress=False)
        assert [row[0].text for row in found] == [row[0].text for row in expected]
        for row, expected_row in zip(found, expected, strict=True):
            assert row[0].score == pytest.approx(expected_row[0].score, abs=1e-4)


def test_ctranslate2_avoids_phrases_a_set_at_a_time(tiny_beam4_exports, tmp_path):
    translator = CTranslate2Translator(tiny_beam4_exports[1], threads=1)
    plain = translator.translate(SENTENCES, progress=False)
    words = [translation.rstrip(".").split()[-1] for translation in plain]
    terms = [Terms(avoided=[words[0]]), None, Terms(avoided=[words[2]])]
    avoided = translator.translate(SENTENCES, TranslationRequest(terms=terms), progress=False)
    assert words[0] not in re.findall(r"\w+", avoided[0])
    assert words[2] not in re.findall(r"\w+", avoided[2])
    assert avoided[1] == plain[1]
    assert avoided[0] == translator.avoiding([words[0]]).translate(SENTENCES[:1])[0]
    source, lines = tmp_path / "in.txt", tmp_path / "avoid.jsonl"
    source.write_text("".join(f"{s}\n" for s in SENTENCES), encoding="utf-8")
    lines.write_text(f'{{"avoid": ["{words[0]}"]}}\n\n{{"avoid": ["{words[2]}"]}}\n')
    ctranslate2 = [f"--ctranslate2={tiny_beam4_exports[1]}", f"--input={source}"]
    run = run_in_process("translate.py", *ctranslate2, f"--terms={lines}")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == avoided
    lines.write_text('{"avoid": ["a"]}\n{"terms": ["a"]}\n')
    run = run_in_process("translate.py", *ctranslate2, f"--terms={lines}")
    assert run.returncode == 1 and run.stderr.strip().splitlines()[-1] == (
        f'error: {lines} line 2: CTranslate2 has no constrained search to place "terms" (it '
        "avoids phrases only)."
    )
