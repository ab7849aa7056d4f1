"""A tiny multilingual model (four directions into de, en and fr): trained, then translating
into a chosen language through the Python API, a SavedModel, CTranslate2 and the scripts."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import ctranslate2
import numpy as np
import pytest
import tensorflow as tf

from common.language_tags import UnknownLanguageError, tagged
from common.translation import TranslationRequest, truncation_warnings
from data_pipeline import Tokenizer
from decoding.options import SearchOptions
from decoding.search import decode
from decoding.translator import encode_sources
from exports.ctranslate2 import CTranslate2Translator
from exports.saved_model import SavedModelTranslator
from inference.ctranslate2_export import export_with_length_penalty
from inference.loading import load_translator
from rundir.checkpoints import restore_model
from rundir.model import build_workdir_model
from tests.conftest import MULTILINGUAL_DIRECTIONS
from tests.script_runner import run_in_process
from tests.workdirs import at_its_first_checkpoint

SENTENCES = ["Ein Hund rennt über die Wiese.", "Zwei Männer spielen Fußball.", "Ein Kind."]
LANGUAGES = ("de", "en", "fr")


@pytest.fixture(scope="module")
def workdir(tiny_multilingual_run) -> str:
    return tiny_multilingual_run[0]


@pytest.fixture(scope="module")
def translator(workdir):
    return load_translator(workdir, "latest", jit_compile=False)[0]


def test_training_scores_each_direction_and_picks_the_best_by_their_mean(tiny_multilingual_run):
    workdir, result = tiny_multilingual_run
    tokenizer = Tokenizer.from_file(f"{workdir}/spm.model")
    assert tokenizer.languages == LANGUAGES
    pieces = tokenizer.id_to_piece(tf.constant(tokenizer.tag_ids)).numpy().tolist()
    assert pieces == [b"<2de>", b"<2en>", b"<2fr>"]
    summary = tf.io.gfile.GFile(f"{workdir}/best/best.json").read()
    for direction in MULTILINGUAL_DIRECTIONS:
        assert f'"validation_bleu/{direction}"' in summary
    assert result.best_score is not None


def test_the_tag_is_one_piece_in_front_and_the_first_word_reads_as_without_it(workdir):
    tokenizer = Tokenizer.from_file(f"{workdir}/spm.model")
    plain = tokenizer.tokenize(tf.constant(["Ein Hund."]))[0].numpy().tolist()
    with_tag = tokenizer.tokenize(tf.constant(["<2fr> Ein Hund."]))[0].numpy().tolist()
    tag_id = tokenizer.tag_ids[LANGUAGES.index("fr")]
    assert tag_id in with_tag and with_tag[with_tag.index(tag_id) + 1 :] == plain
    # A tag the user wrote in the text is read as characters: the model sees one tag.
    written = tokenizer.tokenize(tf.constant([tagged("Ein <2de> Hund.", "fr")]))
    assert [i for i in written[0].numpy() if i in tokenizer.tag_ids] == [tag_id]


def test_the_target_language_is_chosen_and_checked(translator):
    assert translator.languages == LANGUAGES
    outputs = {
        lang: translator.translate(SENTENCES, TranslationRequest(lang), progress=False)
        for lang in LANGUAGES
    }
    tagged_ids = encode_sources(
        translator.tokenizer, tf.constant([f"<2fr> {s}" for s in SENTENCES]), 64
    )
    searched = decode(translator.model, tagged_ids, translator.options, dynamic_shapes=True)
    expected = [t.decode() for t in translator.tokenizer.detokenize(searched).numpy()]
    assert outputs["fr"] == expected
    assert outputs["fr"] != outputs["de"]
    with pytest.raises(UnknownLanguageError, match="'cs'.*de, en, fr"):
        translator.translate(SENTENCES, TranslationRequest("cs"))
    with pytest.raises(UnknownLanguageError, match="choose one"):
        translator.translate(SENTENCES)


def test_an_ensemble_takes_the_target_language_as_its_one_model_does(workdir, translator, tmp_path):
    """Two members (the run at its latest and at its first checkpoint): the ensemble answers
    each language with its own translations and scores (the mean of both members', not one
    member's: the tiny members may agree on a text), and checks the language."""
    earlier = at_its_first_checkpoint(workdir, tmp_path / "earlier")
    ensemble, _ = load_translator(workdir, "latest", jit_compile=False, ensemble=[earlier])
    swapped, _ = load_translator(earlier, "latest", jit_compile=False, ensemble=[workdir])
    first, _ = load_translator(earlier, "latest", jit_compile=False)
    assert ensemble.languages == LANGUAGES
    answers = {}
    for lang in ("fr", "de"):
        answers[lang] = ensemble.translate(SENTENCES, TranslationRequest(lang), progress=False)
        assert (
            swapped.translate(SENTENCES, TranslationRequest(lang), progress=False) == answers[lang]
        )
        request = TranslationRequest(lang)
        ours = [
            h.log_prob for h in ensemble.score(SENTENCES, answers[lang], request, progress=False)
        ]
        for member in (translator, first):
            theirs = member.score(SENTENCES, answers[lang], request, progress=False)
            assert all(
                abs(our - their.log_prob) > 1e-3 for our, their in zip(ours, theirs, strict=True)
            )
    assert answers["fr"] != answers["de"]
    with pytest.raises(UnknownLanguageError, match="'cs'.*de, en, fr"):
        ensemble.translate(SENTENCES, TranslationRequest("cs"))


def test_tags_never_leak_into_the_output(workdir, translator, monkeypatch):
    """A model made to prefer its tags above every other piece still never writes one."""
    model, tokenizer = build_workdir_model(workdir)
    restore_model(model, workdir, "latest")
    tag_ids = list(tokenizer.tag_ids)
    boost = tf.scatter_nd([[i] for i in tag_ids], [1e3] * len(tag_ids), [tokenizer.vocab_size])
    decode_step = model.decode_step

    def preferring_tags(*args, **kwargs):
        logits, cache = decode_step(*args, **kwargs)  # logits: (vocab, rows)
        return logits + tf.cast(boost[:, None], logits.dtype), cache

    monkeypatch.setattr(model, "decode_step", preferring_tags)
    source_ids = encode_sources(tokenizer, tf.constant([f"<2fr> {SENTENCES[0]}"]), 48)
    unforbidden = decode(model, source_ids, SearchOptions(beam_size=1, max_length=5))
    assert set(unforbidden.numpy()[0]) <= set(tag_ids)  # the search would write tags
    for beam_size in (1, 3):
        options = dataclasses.replace(translator.options, beam_size=beam_size)
        biased = type(translator)(model, tokenizer, options, max_source_length=48)
        for lang in LANGUAGES:
            for output in biased.translate(SENTENCES, TranslationRequest(lang), progress=False):
                assert "<2" not in output


def test_the_saved_model_takes_text_and_target_language(translator, tiny_multilingual_saved_model):
    exported = SavedModelTranslator(tiny_multilingual_saved_model)
    assert exported.languages == LANGUAGES
    signature = exported.loaded.signatures["serving_default"]
    assert sorted(signature.structured_input_signature[1]) == ["target_lang", "text"]
    for lang in LANGUAGES:
        assert exported.translate(SENTENCES, TranslationRequest(lang), progress=False) == (
            translator.translate(SENTENCES, TranslationRequest(lang), progress=False)
        )
    mixed = signature(text=tf.constant(SENTENCES[:2]), target_lang=tf.constant(["fr", "de"]))
    assert [t.decode() for t in mixed["translation"].numpy()] == [
        translator.translate(SENTENCES[:1], TranslationRequest("fr"), progress=False)[0],
        translator.translate(SENTENCES[1:2], TranslationRequest("de"), progress=False)[0],
    ]
    # TensorFlow escapes the quotes of an assertion's message (Python callers and the server
    # check the language before the graph runs, with the message unescaped).
    unknown = r"Unknown target language \\'cs\\': this model translates into de, en, fr\."
    with pytest.raises(tf.errors.InvalidArgumentError, match=unknown):
        signature(text=tf.constant(["x"]), target_lang=tf.constant(["cs"]))
    with pytest.raises(UnknownLanguageError, match="'cs'"):
        exported.translate(SENTENCES, TranslationRequest("cs"))
    attention = exported.loaded.signatures["cross_attention"](
        text=tf.constant(SENTENCES[:1]), target_lang=tf.constant(["fr"])
    )
    assert attention["source_pieces"].numpy()[0][:2].tolist() == [b"\xe2\x96\x81", b"<2fr>"]


def test_ctranslate2_reads_the_tagged_source_as_our_model_does(
    workdir, translator, tiny_multilingual_ctranslate2
):
    exported = CTranslate2Translator(tiny_multilingual_ctranslate2)
    assert exported.languages == LANGUAGES
    ours = translator.translate(SENTENCES, TranslationRequest("fr"), progress=False)
    theirs = exported.translate(SENTENCES, TranslationRequest("fr"), progress=False)
    assert not any("<2" in t for t in theirs)
    # Scores of our translations given the tagged source: the same under both runtimes.
    model, tokenizer = build_workdir_model(workdir)
    restore_model(model, workdir, "latest")
    sources = [exported.tokenizer.encode(f"<2fr> {s}", out_type=str) for s in SENTENCES]
    targets = [exported.tokenizer.encode(t, out_type=str) for t in ours]
    scored = ctranslate2.Translator(tiny_multilingual_ctranslate2).score_batch(sources, targets)
    for source, target, result in zip(sources, targets, scored, strict=True):
        source_ids = tf.constant([[tokenizer_id(tokenizer, p) for p in source] + [3]])
        target_ids = [tokenizer_id(tokenizer, p) for p in target] + [3]
        logits = model((source_ids, tf.constant([[2, *target_ids[:-1]]])))
        expected = tf.gather(tf.nn.log_softmax(logits[0]), target_ids, batch_dims=1).numpy()
        np.testing.assert_allclose(result.log_probs, expected, atol=1e-4)
    # Greedy search in both: the same translations, but where a near-tie of this tiny model
    # tips the other way.
    assert sum(a == b for a, b in zip(ours, theirs, strict=True)) >= 2
    with pytest.raises(UnknownLanguageError, match="'cs'"):
        exported.translate(SENTENCES, TranslationRequest("cs"))


def test_a_model_fine_tuned_on_one_direction_exports_to_ctranslate2(
    workdir, small_corpus, tmp_path
):
    """A multilingual model fine-tuned on one direction (configs/multi30k_finetuned.py: its
    config names one direction, its vocabulary has the tags): CTranslate2's length penalty is
    chosen on that direction's validation pairs, each translated into its target language."""
    finetuned = tmp_path / "finetuned"
    shutil.copytree(workdir, finetuned, ignore=shutil.ignore_patterns("eval", "tensorboard"))
    config = json.loads((finetuned / "config.json").read_text())
    config["data"]["name"] = f"text:{small_corpus}:de-en"
    (finetuned / "config.json").write_text(json.dumps(config))
    translator = load_translator(str(finetuned), "latest", beam_size=2, jit_compile=False)[0]
    export = export_with_length_penalty(
        translator, str(finetuned), str(tmp_path / "ct2"), progress=False
    )
    assert len(export.scores) == 7 and export.length_penalty in export.scores
    assert CTranslate2Translator(export.path).languages == LANGUAGES


def tokenizer_id(tokenizer: Tokenizer, piece: str) -> int:
    pieces = tokenizer.id_to_piece(tf.range(tokenizer.vocab_size)).numpy().tolist()
    return pieces.index(piece.encode())


def test_translate_script_takes_a_target_language_and_switches_it_interactively(
    workdir, translator
):
    expected = {
        lang: translator.translate(SENTENCES[:1], TranslationRequest(lang), progress=False)[0]
        for lang in LANGUAGES
    }
    completed = run_in_process(
        "translate.py",
        f"--workdir={workdir}",
        "--input=-",
        "--target_lang=fr",
        stdin=SENTENCES[0] + "\n",
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == expected["fr"] + "\n"
    completed = run_in_process(
        "translate.py",
        f"--workdir={workdir}",
        "--target_lang=de",
        stdin=f"{SENTENCES[0]}\n:lang fr\n{SENTENCES[0]}\n:lang cs\n{SENTENCES[0]}\n",
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines() == [
        f"> {expected['de']}",
        f"> > {expected['fr']}",
        f"> > {expected['fr']}",
        "> ",
    ]
    assert "Translating into fr." in completed.stderr
    assert "error: Unknown target language 'cs': this model translates into de, en, fr." in (
        completed.stderr
    )


def test_a_sentence_its_tag_makes_too_long_is_warned_about(workdir, translator):
    fits_untagged = [
        sentence
        for sentence in ("Hund " * count for count in range(1, 100))
        if len(translator.tokenizer.tokenize(tf.constant([sentence]))[0])
        < translator.max_source_length
        and truncation_warnings(translator, [sentence], TranslationRequest("de"))
    ]
    assert fits_untagged
    completed = run_in_process(
        "translate.py",
        f"--workdir={workdir}",
        "--target_lang=de",
        "--input=-",
        stdin=fits_untagged[0] + "\n",
    )
    assert completed.returncode == 0, completed.stderr
    assert "warning: sentence 1 has" in completed.stderr


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            (),
            "this model translates into de, en, fr: choose one with --target_lang.",
        ),
        (
            ("--target_lang=cs",),
            "Unknown target language 'cs': this model translates into de, en, fr.",
        ),
    ],
)
def test_translate_script_without_a_known_target_language_is_one_line(workdir, flags, message):
    completed = run_in_process(
        "translate.py", f"--workdir={workdir}", "--input=-", *flags, stdin="Ein Hund.\n"
    )
    assert completed.returncode == 1
    assert completed.stderr.strip().splitlines()[-1] == f"error: {message}"


def test_evaluate_scores_each_length_penalty_and_names_the_best(workdir):
    flags = ("--split=validation", "--checkpoint=latest", "--direction=de-en", "--beam_size=4")
    penalties = ("0.0", "3.0")  # beam 4: a penalty of 3 prefers longer translations
    completed = run_in_process(
        "evaluate.py", f"--workdir={workdir}", *flags, f"--length_penalties={','.join(penalties)}"
    )
    assert completed.returncode == 0, completed.stderr
    table = completed.stdout.split("validation, beam 4:\n")[1].splitlines()
    assert table[0] == "| length penalty | BLEU | lower-cased BLEU | chrF2 | tokenized BLEU |"
    rows = [row.strip("| ").split(" | ") for row in table[2:4]]
    assert [row[0].strip("*") for row in rows] == list(penalties)
    bleus = [float(row[1].strip("*")) for row in rows]
    best = penalties[bleus.index(max(bleus))]
    assert [row[0] for row in rows].count(f"**{best}**") == 1
    assert completed.stdout.splitlines()[-1].startswith(f"best: length penalty {best} ")
    written = Path(workdir, "eval", "validation.length_penalties.md").read_text()
    assert written.splitlines() == table[:4]

    # Each penalty's translations in files of its own, scored as one run with that penalty.
    def de_en_hypotheses(directory: Path) -> str:
        (path,) = directory.glob("*de-en.validation.beam4.hyp")
        return path.read_text()

    hypotheses = {
        p: de_en_hypotheses(Path(workdir, "eval", f"length_penalty-{p}")) for p in penalties
    }
    one_run = run_in_process("evaluate.py", f"--workdir={workdir}", *flags, "--length_penalty=0.0")
    assert one_run.stdout.strip().splitlines()[-1].split(" | ")[1:] == [
        cell.strip("*") for cell in table[2].split(" | ")[1:]
    ]
    assert de_en_hypotheses(Path(workdir, "eval")) == hypotheses["0.0"]
    words = {penalty: len(text.split()) for penalty, text in hypotheses.items()}
    assert words["3.0"] > words["0.0"]
    for refused_flags, message in (
        (("--length_penalties=1,x",), "is not a list of numbers"),
        (("--length_penalties=1,2", "--length_penalty=1"), "give it without --length_penalty"),
    ):
        refused = run_in_process("evaluate.py", f"--workdir={workdir}", *refused_flags)
        assert refused.returncode == 1 and "Traceback" not in refused.stderr
        assert message in refused.stderr.strip().splitlines()[-1]


def test_evaluate_scores_every_direction_in_a_table(workdir, translator, small_corpus):
    completed = run_in_process(
        "evaluate.py", f"--workdir={workdir}", "--split=validation", "--checkpoint=latest"
    )
    assert completed.returncode == 0, completed.stderr
    table = completed.stdout.split("validation, beam 1:\n")[1].splitlines()
    assert table[0] == "| direction | BLEU | lower-cased BLEU | chrF2 | tokenized BLEU |"
    assert [row.split(" | ")[0] for row in table[2:7]] == [
        f"| {d}" for d in MULTILINGUAL_DIRECTIONS
    ] + ["| mean"]
    assert tf.io.gfile.exists(f"{workdir}/eval/validation.directions.md")
    one = run_in_process(
        "evaluate.py",
        f"--workdir={workdir}",
        "--split=validation",
        "--checkpoint=latest",
        "--direction=de-fr",
    )
    assert one.returncode == 0, one.stderr
    de_fr = [row for row in table if row.startswith("| de-fr |")][0]
    assert one.stdout.splitlines()[-1] == de_fr
    bad = run_in_process("evaluate.py", f"--workdir={workdir}", "--direction=fr-de")
    assert bad.returncode == 1
    assert "'fr-de' is not a direction of" in bad.stderr
    missing = run_in_process("evaluate.py", f"--workdir={workdir}", "--split=test2016")
    assert missing.returncode == 1
    assert missing.stderr.strip().splitlines()[-1].startswith("error: No direction of")

    # A data set of one language pair: into its target language.
    pair = run_in_process(
        "evaluate.py",
        f"--workdir={workdir}",
        "--split=validation",
        "--checkpoint=latest",
        f"--data=text:{small_corpus}:de-fr",
    )
    assert pair.returncode == 0, pair.stderr
    assert de_fr.split(" | ")[1] in pair.stdout  # the same BLEU as de-fr in the table


def test_scores_and_forced_scores_take_the_target_language_in_every_runtime(
    translator, tiny_multilingual_saved_model, tiny_multilingual_ctranslate2
):
    """Each runtime adds the request's tag before scoring: the same translations and scores as
    the model's own, and different scores for another language."""
    runtimes = (
        (SavedModelTranslator(tiny_multilingual_saved_model), 1e-5),
        (CTranslate2Translator(tiny_multilingual_ctranslate2), 1e-4),
    )
    targets = ["A dog runs.", "Zwei Männer.", "Un enfant."]
    forced = {}
    for lang in ("fr", "en"):
        request = TranslationRequest(lang)
        ours = translator.hypotheses(SENTENCES, request, progress=False)
        assert [row[0].text for row in ours] == translator.translate(
            SENTENCES, request, progress=False
        )
        forced[lang] = translator.score(SENTENCES, targets, request, progress=False)
        exported, _ = runtimes[0]
        theirs = exported.hypotheses(SENTENCES, request, progress=False)
        assert [row[0].text for row in theirs] == [row[0].text for row in ours]
        for runtime, tolerance in runtimes:
            scored = runtime.score(SENTENCES, targets, request, progress=False)
            assert [s.score for s in scored] == pytest.approx(
                [s.score for s in forced[lang]], abs=tolerance
            )
    assert [s.score for s in forced["fr"]] != pytest.approx([s.score for s in forced["en"]])
    with pytest.raises(UnknownLanguageError, match="'cs'"):
        translator.score(SENTENCES, targets, TranslationRequest("cs"))


def test_prefixes_and_alignments_take_the_target_language_in_every_runtime(
    translator, tiny_multilingual_saved_model, tiny_multilingual_ctranslate2
):
    runtimes = (
        translator,
        SavedModelTranslator(tiny_multilingual_saved_model),
        CTranslate2Translator(tiny_multilingual_ctranslate2),
    )
    request = TranslationRequest("fr", target_prefix=["Un chien", "", "Une"])
    continued = [runtime.translate(SENTENCES, request, progress=False) for runtime in runtimes]
    assert continued[0] == continued[1] == continued[2]
    assert continued[0][0].startswith("Un chien") and continued[0][2].startswith("Une")
    plain = translator.translate(SENTENCES[1:2], TranslationRequest("fr"), progress=False)
    assert continued[0][1] == plain[0]
    aligned = [
        runtime.align(SENTENCES, continued[0], TranslationRequest("fr"), progress=False)
        for runtime in runtimes
    ]
    for sentence, ours, saved, exported in zip(SENTENCES, *aligned, strict=True):
        assert "<2fr>" in ours.source_pieces[:2]  # read, and no word: words count from the text's
        assert all(source < len(sentence.split()) for source, _ in ours.links())
        assert ours.pharaoh() == saved.pharaoh() == exported.pharaoh()
