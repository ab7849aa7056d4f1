"""The vocabulary shortlist end to end: built from a run's training data, read with its work
directory, and carried by the SavedModel and CTranslate2 exports (the copy model with the copy
task's shortlist: a batch's candidates are its own pieces)."""

import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

from common.special_tokens import UNK_ID
from common.translation import Terms, TranslationRequest
from decoding.shortlist import Shortlist
from decoding.translator import ModelTranslator
from exports.contract import CTRANSLATE2_VMAP_FILE, PRECISION_VARIABLE, SHORTLIST_VARIABLES
from exports.ctranslate2 import CTranslate2Translator
from exports.saved_model import SavedModelTranslator
from inference.ctranslate2_export import export_ctranslate2
from inference.export import export_saved_model
from inference.loading import load_translator
from inference.shortlist import build_shortlist, read_shortlist
from rundir.layout import RunDirectory
from tests.script_runner import run_in_process


@pytest.fixture(scope="module")
def copy_shortlist(tokenizer) -> Shortlist:
    """The copy task's: each piece's one target piece is itself, and no frequent pieces."""
    table = np.arange(tokenizer.vocab_size, dtype=np.int32)[:, np.newaxis]
    return Shortlist(table, np.zeros([0], np.int32))


def _copied(sentences: list[str], translations: list[str], count: int) -> tuple[list, list]:
    """The first ``count`` sentences the copy model copies exactly (others have pieces the
    source lacks: no candidates), and their translations."""
    pairs = zip(sentences, translations, strict=True)
    copied = [sentence for sentence, copy in pairs if copy == sentence]
    assert len(copied) >= count
    return copied[:count], copied[:count]


def _shortlisted(translator: ModelTranslator, shortlist, **overrides) -> ModelTranslator:
    settings = dict(max_source_length=translator.max_source_length, shortlist=shortlist)
    return ModelTranslator(
        translator.model, translator.tokenizer, translator.options, **settings | overrides
    )


@pytest.mark.parametrize("beam_size", [1, 4])
def test_the_copy_model_translates_the_same_over_its_shortlist_in_the_graph_and_under_xla(
    copy_translators, copy_shortlist, validation_sentences, beam_size
):
    translator, plain = copy_translators[beam_size]
    sentences, expected = _copied(validation_sentences, plain, 24)
    for jit_compile in (False, True):
        shortlisted = _shortlisted(translator, copy_shortlist, jit_compile=jit_compile)
        assert shortlisted.translate(sentences, batch_size=8, progress=False) == expected
    source_ids = translator._source_ids(*[tf.constant(sentences[:8]), tf.fill([8], "")])
    candidates = shortlisted._candidates(source_ids)
    assert int(candidates.count) < translator.tokenizer.vocab_size / 5  # 8 sentences' pieces


def test_the_xla_search_compiles_once_for_sentences_of_one_length_whatever_their_candidates(
    copy_translators, tokenizer, validation_sentences
):
    """A served request must not wait seconds for a compilation because its pieces have more
    candidates than the warm-up's: the compiled search's candidates take their size from the
    shapes alone."""
    translator, _ = copy_translators[1]
    vocab = tokenizer.vocab_size
    # Each piece's 25 target pieces: a sentence's candidates grow with its distinct pieces.
    table = (np.arange(vocab)[:, np.newaxis] + 11 * np.arange(25)) % vocab
    shortlist = Shortlist(table.astype(np.int32), np.zeros([0], np.int32))
    shortlisted = _shortlisted(translator, shortlist, jit_compile=True)
    lengths = shortlisted.source_lengths(validation_sentences)
    one_bucket = [s for s, n in zip(validation_sentences, lengths, strict=True) if 6 <= n <= 14]
    sources = [translator._source_ids(tf.constant([s]), tf.constant([""])) for s in one_bucket]
    sizes = [int(shortlisted._candidates(source_ids).ids.shape[0]) for source_ids in sources]
    few, most = sources[np.argmin(sizes)], sources[np.argmax(sizes)]
    assert min(sizes) < max(sizes)  # two sizes of candidates for the graph search
    for source_ids in (few, most):  # eagerly: the compiled search traces once per shape
        shortlisted._output_ids(source_ids)
    assert shortlisted._compiled_search.experimental_get_tracing_count() == 1


def test_prefixes_terms_and_n_best_lists_search_over_the_shortlist_too(
    copy_translators, copy_shortlist, validation_sentences
):
    """Their pieces join the candidates: a term from another sentence is still placed."""
    translator, plain = copy_translators[4]
    shortlisted = _shortlisted(translator, copy_shortlist)
    sentences = validation_sentences[:4]
    prefix = " ".join(plain[0].split()[:2])
    term = max(validation_sentences[10].rstrip(".").split(), key=len)
    requests = {
        "prefix": TranslationRequest(target_prefix=[prefix, "", "", ""]),
        "terms": TranslationRequest(n_best=2, terms=[None, Terms([term]), None, None]),
    }
    for name, request in requests.items():
        rows = shortlisted.hypotheses(sentences, request, progress=False)
        full = translator.hypotheses(sentences, request, progress=False)
        assert [row[0].text for row in rows] == [row[0].text for row in full], name
    assert rows[0][0].text == plain[0] and term in rows[1][0].text


def test_the_exports_carry_the_shortlist_and_the_precision(
    copy_translators, copy_shortlist, bfloat16_copy_model, validation_sentences, tmp_path
):
    """One SavedModel for both (an export is slow): the copy model in bfloat16, shortlisted. The
    shortlist leaves out one piece of the first sentence, which the full search copies: an export
    that ignored its shortlist would write it."""
    translator, plain = copy_translators[1]
    sentences, expected = _copied(validation_sentences, plain, 16)
    pieces = translator.tokenizer.tokenize(tf.constant(sentences)).to_list()
    omitted = next(i for i in pieces[0] if sum(i in row for row in pieces) == 1)  # its alone
    table = copy_shortlist.table.copy()
    table[omitted] = UNK_ID  # its row: nothing to write
    omitting = Shortlist(table, copy_shortlist.frequent)
    bfloat16 = ModelTranslator(
        bfloat16_copy_model,
        translator.tokenizer,
        translator.options,
        translator.max_source_length,
        shortlist=omitting,
    )
    saved_model = export_saved_model(bfloat16, str(tmp_path / "saved_model"))
    loaded = tf.saved_model.load(saved_model)
    exported_table, _ = getattr(loaded, SHORTLIST_VARIABLES)
    np.testing.assert_array_equal(exported_table.numpy(), table)
    assert getattr(loaded, PRECISION_VARIABLE).numpy().decode() == "bfloat16"
    in_bfloat16 = bfloat16.translate(sentences, progress=False)
    assert in_bfloat16[0] != expected[0]  # the omitted piece is not written
    assert SavedModelTranslator(saved_model).translate(sentences, progress=False) == in_bfloat16
    shortlisted = _shortlisted(translator, omitting)

    ct2 = export_ctranslate2(shortlisted, str(tmp_path / "ct2"))
    with open(os.path.join(ct2, CTRANSLATE2_VMAP_FILE), encoding="utf-8") as file:
        lines = file.read().splitlines()
    piece = translator.tokenizer.id_to_piece(tf.constant(table[100, 0]))
    assert f"{piece.numpy().decode()}\t{piece.numpy().decode()}" in lines[1:]
    exported = CTranslate2Translator(ct2)
    assert exported._use_vmap
    translations = exported.translate(sentences, progress=False)
    assert translations[1:] == expected[1:]
    written = translator.tokenizer.tokenize(tf.constant(translations[:1])).to_list()[0]
    assert translations[0] != expected[0] and omitted not in written


def test_a_work_directory_translates_over_its_built_shortlist_unless_told_not_to(
    tiny_run, tmp_path
):
    workdir = str(tmp_path / "run")
    shutil.copytree(tiny_run[0], workdir, ignore=shutil.ignore_patterns("eval", "saved_model*"))
    assert load_translator(workdir, "latest")[0].shortlist is None
    built = build_shortlist(workdir, k=3, frequent=20)
    assert built.table.shape[1] == 3 and len(built.frequent) == 20
    written = read_shortlist(RunDirectory(workdir).shortlist)
    np.testing.assert_array_equal(written.table, built.table)
    translator, _ = load_translator(workdir, "latest")
    np.testing.assert_array_equal(translator.shortlist.frequent.numpy(), built.frequent)
    assert load_translator(workdir, "latest", shortlist=False)[0].shortlist is None
    assert translator.translate(["Ein Hund rennt."], progress=False)[0]


def test_shortlist_py_writes_the_shortlist_and_refuses_what_is_no_work_directory(
    tiny_run, tmp_path
):
    workdir = str(tmp_path / "run")
    shutil.copytree(tiny_run[0], workdir, ignore=shutil.ignore_patterns("eval", "saved_model*"))
    done = run_in_process("shortlist.py", f"--workdir={workdir}", "--k=4", "--frequent=30")
    assert done.returncode == 0, done.stderr
    assert "4 target pieces each, 30 frequent ones" in done.stdout
    assert read_shortlist(RunDirectory(workdir).shortlist).table.shape[1] == 4
    missing = run_in_process("shortlist.py", f"--workdir={tmp_path / 'nowhere'}")
    assert missing.returncode == 1
    assert missing.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'nowhere'} is not a training work directory (no config.json); "
        f"train first with `python train.py --config=configs/multi30k_de_en.py "
        f"--workdir={tmp_path / 'nowhere'}`."
    ]
