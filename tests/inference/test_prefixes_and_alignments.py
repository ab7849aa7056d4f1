"""Target prefixes and word alignments: a work directory, its SavedModel, its CTranslate2
export and translate.py agree on the tiny run (greedy search, the same weights)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
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


@pytest.fixture(scope="module")
def runtimes(tiny_run, tiny_saved_model, tiny_ctranslate2):
    """The tiny run's latest checkpoint (greedy, graph search) and its two exports."""
    translator, _ = load_translator(tiny_run[0], "latest", jit_compile=False)
    return {
        "workdir": translator,
        "saved_model": SavedModelTranslator(tiny_saved_model),
        "ctranslate2": CTranslate2Translator(tiny_ctranslate2, threads=1),
    }


def test_every_runtime_continues_each_rows_prefix_and_its_own_start_gives_it_back(runtimes):
    plain = runtimes["workdir"].translate(SENTENCES, progress=False)
    own_starts = TranslationRequest(target_prefix=[" ".join(t.split()[:2]) for t in plain])
    # Rows of one request differ: a foreign start, none, the model's own.
    foreign = ["Ein Mann", "", plain[2].split()[0], "The cat sat"]
    mixed = TranslationRequest(target_prefix=foreign)
    continued = runtimes["workdir"].translate(SENTENCES, mixed, progress=False)
    assert continued[0].startswith("Ein Mann") and continued[3].startswith("The cat sat")
    assert continued[1] == plain[1] and continued[2] == plain[2]
    for name, translator in runtimes.items():
        assert translator.translate(SENTENCES, own_starts, progress=False) == plain, name
        assert translator.translate(SENTENCES, mixed, batch_size=2, progress=False) == continued, (
            name
        )


def test_scored_continuations_agree_and_an_export_says_what_scores_them(runtimes):
    request = TranslationRequest(target_prefix=["Ein Mann", "", "Eine", "The cat sat"])
    continued = runtimes["workdir"].translate(SENTENCES, request, progress=False)
    ours = runtimes["workdir"].hypotheses(SENTENCES, request, progress=False)
    theirs = runtimes["ctranslate2"].hypotheses(SENTENCES, request, progress=False)
    assert [row[0].text for row in ours] == [row[0].text for row in theirs] == continued
    for (our,), (their,) in zip(ours, theirs, strict=True):
        assert their.token_log_probs == pytest.approx(our.token_log_probs, abs=1e-4)
    with pytest.raises(RequestError, match="continues target prefixes without scores"):
        runtimes["saved_model"].hypotheses(SENTENCES, request, progress=False)
    for translator in runtimes.values():
        with pytest.raises(RequestError, match="one target prefix for each sentence: got 1 for 4"):
            translator.translate(SENTENCES, TranslationRequest(target_prefix=["A"]))
    with pytest.raises(RequestError, match="a list of strings, one for each sentence"):
        TranslationRequest(target_prefix="A dog")


def test_alternatives_differ_right_after_the_prefix_and_ctranslate2_finds_the_same(runtimes):
    request = TranslationRequest(
        n_best=3, target_prefix=["Ein Mann", "", "Eine", "The cat sat"], return_alternatives=True
    )
    ours = runtimes["workdir"].hypotheses(SENTENCES, request, progress=False)
    theirs = runtimes["ctranslate2"].hypotheses(SENTENCES, request, progress=False)
    for prefix, our_row, their_row in zip(request.target_prefix, ours, theirs, strict=True):
        assert len(our_row) == 3 and len({h.text for h in our_row}) == 3  # beyond the beam of 1
        assert all(h.text.startswith(prefix) for h in our_row)
        assert [h.score for h in our_row] == sorted((h.score for h in our_row), reverse=True)
        by_text = {h.text: h for h in their_row}
        assert set(by_text) == {h.text for h in our_row}
        for our in our_row:
            assert by_text[our.text].log_prob == pytest.approx(our.log_prob, abs=1e-4)
    with pytest.raises(RequestError, match="has no alternatives"):
        runtimes["saved_model"].hypotheses(SENTENCES, request, progress=False)


def test_translate_py_reads_a_prefix_a_line_and_names_a_file_that_does_not_pair_up(
    tiny_run, runtimes, tmp_path
):
    source, starts, short = tmp_path / "in.txt", tmp_path / "starts.txt", tmp_path / "short.txt"
    source.write_text("".join(f"{s}\n" for s in SENTENCES), encoding="utf-8")
    starts.write_text("Ein Mann\n\nEine\nThe cat sat\n", encoding="utf-8")
    short.write_text("Ein Mann\n", encoding="utf-8")
    request = TranslationRequest(target_prefix=["Ein Mann", "", "Eine", "The cat sat"])
    expected = runtimes["workdir"].translate(SENTENCES, request, progress=False)
    workdir = [f"--workdir={tiny_run[0]}", "--checkpoint=latest"]
    for window in ("--window=3", "--window=100"):  # a prefix stays with its line
        run = run_in_process(
            "translate.py", *workdir, f"--input={source}", f"--target_prefix={starts}", window
        )
        assert run.returncode == 0, run.stderr
        assert run.stdout.splitlines() == expected
    alternatives = runtimes["workdir"].hypotheses(
        SENTENCES, dataclasses.replace(request, n_best=2, return_alternatives=True), progress=False
    )
    run = run_in_process(
        "translate.py",
        *workdir,
        f"--input={source}",
        f"--target_prefix={starts}",
        "--n_best=2",
        "--return_alternatives",
    )
    assert run.stdout.splitlines() == [h.text for row in alternatives for h in row], run.stderr
    for flags, message in {
        (f"--input={source}", f"--target_prefix={short}"): (
            f"error: {source} has more lines than {short} (1): they must be aligned line by line."
        ),
        (f"--target_prefix={starts}",): "error: --target_prefix gives a line for each line",
        (f"--input={source}", f"--target_prefix={tmp_path / 'none.txt'}"): (
            f"error: Cannot read {tmp_path / 'none.txt'}: it does not exist."
        ),
    }.items():
        run = run_in_process("translate.py", *workdir, *flags)
        assert run.returncode == 1 and run.stderr.strip().startswith(message), run.stderr
        assert len(run.stderr.strip().splitlines()) == 1


def test_every_runtime_aligns_a_translation_as_the_work_directory_does(runtimes):
    translations = runtimes["workdir"].translate(SENTENCES, progress=False)
    given = [*translations[:3], "A dog runs."]  # the model's own, and one it did not write
    ours = runtimes["workdir"].align(SENTENCES, given, progress=False)
    for our, sentence, target in zip(ours, SENTENCES, given, strict=True):
        assert "".join(our.target_pieces).replace("▁", " ").strip() == target
        assert "".join(our.source_pieces).replace("▁", " ").strip() == sentence
        assert len(our.attention) == len(our.target_pieces)
        assert all(0.0 < sum(row) <= 1.0 + 1e-5 for row in our.attention)
        source_words, target_words = len(sentence.split()), len(target.split())
        links = our.links()
        assert {j for _, j in links} == set(range(target_words))  # each target word linked
        assert all(0 <= i < source_words for i, _ in links)
    for name in ("saved_model", "ctranslate2"):
        theirs = runtimes[name].align(SENTENCES, given, batch_size=2, progress=False)
        for our, their in zip(ours, theirs, strict=True):
            assert (their.source_pieces, their.target_pieces) == (
                our.source_pieces,
                our.target_pieces,
            ), name
            np.testing.assert_allclose(their.attention, our.attention, atol=1e-4, err_msg=name)
            assert their.pharaoh() == our.pharaoh(), name
    with pytest.raises(RequestError, match="one target for each source"):
        runtimes["workdir"].align(SENTENCES, given[:1])


def test_translate_py_writes_hard_and_soft_alignments_in_every_runtime(
    tiny_run, tiny_saved_model, tiny_ctranslate2, runtimes, tmp_path
):
    source = tmp_path / "in.txt"
    source.write_text("".join(f"{s}\n" for s in SENTENCES), encoding="utf-8")
    translations = runtimes["workdir"].translate(SENTENCES, progress=False)
    aligned = runtimes["workdir"].align(SENTENCES, translations, progress=False)
    expected = [f"{t} ||| {a.pharaoh()}" for t, a in zip(translations, aligned, strict=True)]
    for model_flag in (
        f"--workdir={tiny_run[0]}",
        f"--saved_model={tiny_saved_model}",
        f"--ctranslate2={tiny_ctranslate2}",
    ):
        run = run_in_process("translate.py", model_flag, f"--input={source}", "--alignments=hard")
        assert run.returncode == 0, run.stderr
        assert run.stdout.splitlines() == expected, model_flag
    run = run_in_process(
        "translate.py",
        f"--workdir={tiny_run[0]}",
        f"--input={source}",
        "--alignments=soft",
        "--output_format=jsonl",
    )
    assert run.returncode == 0, run.stderr
    for line, alignment in zip(run.stdout.splitlines(), aligned, strict=True):
        (hypothesis,) = json.loads(line)["hypotheses"]
        assert hypothesis["alignment"]["target_pieces"] == list(alignment.target_pieces)
        np.testing.assert_allclose(hypothesis["alignment"]["attention"], alignment.attention)
    run = run_in_process(
        "translate.py", f"--workdir={tiny_run[0]}", f"--input={source}", "--alignments=soft"
    )
    rows = [line.split(" ||| ")[1].split() for line in run.stdout.splitlines()]
    assert [len(row) for row in rows] == [len(a.target_pieces) for a in aligned]
