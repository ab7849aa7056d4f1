"""Random sampling through the translation request: a work directory, a CTranslate2 export and
translate.py, on the tiny run; a SavedModel refuses it."""

from __future__ import annotations

import pytest

from common.translation import RequestError, Sampling, TranslationRequest
from exports.ctranslate2 import CTranslate2Translator
from exports.saved_model import SavedModelTranslator
from inference.loading import load_translator
from tests.script_runner import run_in_process

SENTENCES = [
    "Ein Hund rennt über die Wiese.",
    "Zwei Männer stehen auf einer Straße.",
    "Eine Frau liest ein Buch.",
    "Ein Kind spielt im Sand.",
    "Ja",
]
# Flat enough for the tiny model's draws to vary.
WILD = Sampling(temperature=1.5, seed=1)


def _request(**sampling) -> TranslationRequest:
    return TranslationRequest(sampling=Sampling(**sampling))


@pytest.fixture(scope="module")
def greedy(tiny_run):
    translator, _ = load_translator(tiny_run[0], "latest", beam_size=1, jit_compile=False)
    return translator


def test_a_seed_repeats_its_translations_in_any_batch_and_top_k_1_is_greedy(greedy):
    first = greedy.translate(SENTENCES, TranslationRequest(sampling=WILD), progress=False)
    in_pairs = greedy.translate(
        SENTENCES, TranslationRequest(sampling=WILD), batch_size=2, progress=False
    )
    assert in_pairs == first  # batches of 2, sorted by length: other neighbours, same draws
    reseeded = greedy.translate(SENTENCES, _request(temperature=1.5, seed=2), progress=False)
    assert reseeded != first
    plain = greedy.translate(SENTENCES, progress=False)
    assert first != plain
    assert greedy.translate(SENTENCES, _request(top_k=1, seed=5), progress=False) == plain
    with pytest.raises(RequestError, match="Sampled translations come without n-best lists"):
        greedy.hypotheses(SENTENCES, TranslationRequest(sampling=WILD), progress=False)


def test_ctranslate2_samples_reproducibly_with_its_own_sampler(tiny_ctranslate2):
    exported = CTranslate2Translator(tiny_ctranslate2, beam_size=1, threads=1)
    first = exported.translate(SENTENCES, TranslationRequest(sampling=WILD), progress=False)
    again = exported.translate(SENTENCES, TranslationRequest(sampling=WILD), progress=False)
    assert again == first
    reseeded = exported.translate(SENTENCES, _request(temperature=1.5, seed=2), progress=False)
    assert reseeded != first
    top_1 = exported.translate(SENTENCES, _request(top_k=1), progress=False)
    assert top_1 == exported.translate(SENTENCES, progress=False)  # greedy, beam 1


def test_a_saved_model_refuses_sampling_and_says_what_can(tiny_saved_model):
    with pytest.raises(RequestError, match="sample with the work directory .* or a CTranslate2"):
        SavedModelTranslator(tiny_saved_model).translate(
            SENTENCES, TranslationRequest(sampling=WILD), progress=False
        )


def test_translate_py_samples_with_a_seed_and_names_a_bad_flag(
    tiny_run, tiny_ctranslate2, tmp_path
):
    source = tmp_path / "in.txt"
    source.write_text("".join(f"{s}\n" for s in SENTENCES), encoding="utf-8")
    for model_flags in (
        [f"--workdir={tiny_run[0]}", "--checkpoint=latest", "--beam_size=1"],
        [f"--ctranslate2={tiny_ctranslate2}"],
    ):
        sampled = [
            run_in_process(
                "translate.py",
                *model_flags,
                f"--input={source}",
                "--sampling_topk=0",
                "--sampling_temperature=1.5",
                f"--seed={seed}",
            )
            for seed in (1, 1, 2)
        ]
        for run in sampled:
            assert run.returncode == 0, run.stderr
            assert len(run.stdout.splitlines()) == len(SENTENCES)  # a line a sentence, always
        assert sampled[0].stdout == sampled[1].stdout != sampled[2].stdout
    bad = {
        "--sampling_topp=1.5": r"error: --sampling_topp: top_p must be in (0, 1], got 1.5",
        "--sampling_topk=-1": "error: --sampling_topk: top_k must be 0",
        "--sampling_temperature=0": "error: --sampling_temperature: temperature must be positive",
        "--sampling_topk=5 --with_scores": "error: Sampled translations come without n-best",
    }
    for flags, message in bad.items():
        run = run_in_process(
            "translate.py", f"--workdir={tiny_run[0]}", "--input=-", *flags.split()
        )
        assert run.returncode == 1, (flags, run.stderr)
        assert run.stderr.strip().startswith(message), (flags, run.stderr)
        assert len(run.stderr.strip().splitlines()) == 1
