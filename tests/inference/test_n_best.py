"""N-best lists and scores through every runtime (a work directory, its SavedModel, its
CTranslate2 export) and translate.py, on the tiny run decoded with a beam of 4."""

from __future__ import annotations

import json

import pytest

from common.translation import RequestError, TranslationRequest
from exports.ctranslate2 import CTranslate2Translator
from exports.saved_model import SavedModelTranslator
from inference.loading import load_translator
from tests.script_runner import run_in_process

SENTENCES = [
    "Ein Hund rennt über die Wiese.",
    "Zwei Männer stehen auf einer Straße.",
    "Eine Frau liest ein Buch.",
    "Ja",
]
FOUR = TranslationRequest(n_best=4)


@pytest.fixture(scope="module")
def beam_of_4(tiny_run, tiny_beam4_exports):
    """``(translator, SavedModel path, CTranslate2 export path)``: the tiny run's latest
    checkpoint with beam 4, and its two exports (CTranslate2's length penalty 0)."""
    translator, _ = load_translator(tiny_run[0], "latest", beam_size=4, jit_compile=False)
    return (translator, *tiny_beam4_exports)


def test_the_best_of_four_is_the_translation_and_every_score_is_the_same_one_everywhere(
    beam_of_4,
):
    translator, saved_model, _ = beam_of_4
    plain = translator.translate(SENTENCES, progress=False)
    four = translator.hypotheses(SENTENCES, FOUR, progress=False)
    one = translator.hypotheses(SENTENCES, progress=False)
    assert [row[0].text for row in four] == [row[0].text for row in one] == plain
    for row, (best,) in zip(four, one, strict=True):
        assert len(row) == 4 and len({h.text for h in row}) > 1
        assert [h.score for h in row] == sorted((h.score for h in row), reverse=True)
        assert best.score == pytest.approx(row[0].score, abs=1e-4)
        assert best.log_prob == pytest.approx(row[0].log_prob, abs=1e-4)
        assert all(0 < h.confidence <= 1 and h.length >= 1 for h in row)
        for hypothesis in (*row, best):  # each token's log-probability, EOS included
            assert len(hypothesis.token_log_probs) == hypothesis.length
            assert sum(hypothesis.token_log_probs) == pytest.approx(hypothesis.log_prob, abs=1e-4)
    exported = SavedModelTranslator(saved_model)
    for request, ours in ((FOUR, four), (TranslationRequest(), one)):
        theirs = exported.hypotheses(SENTENCES, request, progress=False)
        assert [[h.text for h in row] for row in theirs] == [[h.text for h in row] for row in ours]
        for their_row, our_row in zip(theirs, ours, strict=True):
            for their, our in zip(their_row, our_row, strict=True):
                assert their.score == pytest.approx(our.score, abs=1e-5)
                assert their.length == our.length
                assert their.token_log_probs == pytest.approx(our.token_log_probs, abs=1e-5)


def test_ctranslate2_scores_its_hypotheses_as_our_runtimes_do(beam_of_4):
    translator, _, ctranslate2 = beam_of_4
    exported = CTranslate2Translator(ctranslate2)
    theirs = exported.hypotheses(SENTENCES, FOUR, progress=False)
    assert [row[0].text for row in theirs] == exported.translate(SENTENCES, progress=False)
    ours = translator.hypotheses(SENTENCES, FOUR, progress=False)
    compared = 0
    for their_row, our_row in zip(theirs, ours, strict=True):
        assert len(their_row) == 4
        our_scores = {h.text: h for h in our_row}
        for their in their_row:
            if their.text in our_scores:  # the same hypothesis: the same score and length
                assert their.score == pytest.approx(our_scores[their.text].score, abs=1e-4)
                assert their.log_prob == pytest.approx(our_scores[their.text].log_prob, abs=1e-4)
                assert their.length == our_scores[their.text].length
                assert their.token_log_probs == pytest.approx(
                    our_scores[their.text].token_log_probs, abs=1e-4
                )
                compared += 1
    assert compared >= len(SENTENCES)


def test_more_hypotheses_than_the_beam_is_refused_in_every_runtime(beam_of_4):
    translator, saved_model, ctranslate2 = beam_of_4
    five = TranslationRequest(n_best=5)
    for runtime in (
        translator,
        SavedModelTranslator(saved_model),
        CTranslate2Translator(ctranslate2),
    ):
        with pytest.raises(RequestError, match=r"n_best \(5\) must not exceed the beam size \(4\)"):
            runtime.hypotheses(SENTENCES, five, progress=False)
    with pytest.raises(RequestError, match="positive integer"):
        TranslationRequest(n_best=0)


def test_translate_py_writes_n_best_lists_with_scores_as_text_or_json_lines(
    beam_of_4, tiny_run, tmp_path
):
    _, saved_model, ctranslate2 = beam_of_4
    source = tmp_path / "in.txt"
    source.write_text("".join(f"{s}\n" for s in SENTENCES), encoding="utf-8")
    runtimes = {
        "workdir": [f"--workdir={tiny_run[0]}", "--checkpoint=latest", "--beam_size=4"],
        "saved_model": [f"--saved_model={saved_model}"],
        "ctranslate2": [f"--ctranslate2={ctranslate2}"],
    }
    for name, model_flags in runtimes.items():
        plain = run_in_process("translate.py", *model_flags, f"--input={source}")
        assert plain.returncode == 0, plain.stderr
        text = run_in_process(
            "translate.py", *model_flags, f"--input={source}", "--n_best=4", "--with_scores"
        )
        assert text.returncode == 0, (name, text.stderr)
        lines = [line.split(" ||| ") for line in text.stdout.splitlines()]
        assert len(lines) == 4 * len(SENTENCES), name
        assert [text for _, text in lines[::4]] == plain.stdout.splitlines(), name
        assert all(float(score) < 0 for score, _ in lines)
        jsonl = run_in_process(
            "translate.py", *model_flags, f"--input={source}", "--output_format=jsonl"
        )
        rows = [json.loads(line) for line in jsonl.stdout.splitlines()]
        assert [row["hypotheses"][0]["translation"] for row in rows] == plain.stdout.splitlines()
        assert set(rows[0]["hypotheses"][0]) == {
            "translation",
            "score",
            "log_prob",
            "length",
            "confidence",
            "token_log_probs",
        }
        too_many = run_in_process("translate.py", *model_flags, "--input=-", "--n_best=5")
        assert too_many.returncode == 1
        assert too_many.stderr.strip().startswith("error: --n_best: n_best (5) must not exceed")
        assert len(too_many.stderr.strip().splitlines()) == 1


def test_forced_scores_are_the_searchs_and_the_same_in_every_runtime(beam_of_4, tmp_path):
    translator, saved_model, ctranslate2 = beam_of_4
    four = translator.hypotheses(SENTENCES, FOUR, progress=False)
    sources = [source for source, row in zip(SENTENCES, four, strict=True) for _ in row]
    targets = [h.text for row in four for h in row]
    ours = translator.score(sources, targets, progress=False)
    searched = [h for row in four for h in row]
    # The same pieces again once detokenized and read (and with EOS: forced scoring adds it to
    # a hypothesis that reached its length limit without one).
    same_pieces = [(s, h) for s, h in zip(ours, searched, strict=True) if s.length == h.length]
    assert len(same_pieces) >= len(SENTENCES)
    for scored, hypothesis in same_pieces:
        assert scored.score == pytest.approx(hypothesis.score, abs=1e-4)
    for scored in ours:
        assert len(scored.token_log_probs) == scored.length
        assert sum(scored.token_log_probs) == pytest.approx(scored.log_prob, abs=1e-4)
    references = ["A dog runs across the meadow.", "Two men.", "A woman reads.", "Yes"]
    for runtime, tolerance in (
        (SavedModelTranslator(saved_model), 1e-5),
        (CTranslate2Translator(ctranslate2), 1e-4),  # score_batch
    ):
        for request_targets in (targets, references * 4):
            expected = translator.score(sources, request_targets, progress=False)
            theirs = runtime.score(sources, request_targets, progress=False)
            for their, our in zip(theirs, expected, strict=True):
                assert their.text == our.text and their.length == our.length
                assert their.score == pytest.approx(our.score, abs=tolerance)
                assert their.token_log_probs == pytest.approx(our.token_log_probs, abs=tolerance)
        with pytest.raises(RequestError, match="one target for each source"):
            runtime.score(SENTENCES, references[:2], progress=False)


def test_score_py_writes_a_score_a_pair_from_files_or_tab_separated_lines(
    beam_of_4, tiny_run, tmp_path
):
    translator, saved_model, ctranslate2 = beam_of_4
    references = ["A dog runs across the meadow.", "Two men.", "A woman reads.", "Yes"]
    expected = translator.score(SENTENCES, references, progress=False)
    (tmp_path / "src.de").write_text("".join(f"{s}\n" for s in SENTENCES), encoding="utf-8")
    (tmp_path / "tgt.en").write_text("".join(f"{t}\n" for t in references), encoding="utf-8")
    (tmp_path / "short.en").write_text("Yes\n", encoding="utf-8")
    tsv = "".join(f"{s}\t{t}\n" for s, t in zip(SENTENCES, references, strict=True))
    files = [f"--source={tmp_path / 'src.de'}", f"--target={tmp_path / 'tgt.en'}"]
    runtimes = {
        "workdir": [f"--workdir={tiny_run[0]}", "--checkpoint=latest", "--beam_size=4"],
        "saved_model": [f"--saved_model={saved_model}"],
        "ctranslate2": [f"--ctranslate2={ctranslate2}"],
    }
    for name, model_flags in runtimes.items():
        output = tmp_path / f"{name}.txt"
        text = run_in_process("score.py", *model_flags, *files, f"--output={output}")
        assert text.returncode == 0, (name, text.stderr)
        scores = [float(line) for line in output.read_text().splitlines()]
        assert scores == pytest.approx([s.score for s in expected], abs=1e-4), name
        jsonl = run_in_process(
            "score.py", *model_flags, "--input=-", "--output_format=jsonl", stdin=tsv
        )
        rows = [json.loads(line) for line in jsonl.stdout.splitlines()]
        assert [row["score"] for row in rows] == pytest.approx(scores, abs=1e-5)
        assert [len(row["token_log_probs"]) for row in rows] == [row["length"] for row in rows]
    short = [f"--source={tmp_path / 'src.de'}", f"--target={tmp_path / 'short.en'}"]
    for arguments, message in (
        (short, "src.de has more lines than"),
        (["--input=-"], "line 1: no tab"),
        ([f"--source={tmp_path / 'src.de'}"], "give --source and --target"),
    ):
        failed = run_in_process("score.py", *runtimes["ctranslate2"], *arguments, stdin="Ja\n")
        assert failed.returncode == 1 and message in failed.stderr, failed.stderr
        assert len(failed.stderr.strip().splitlines()) == 1
