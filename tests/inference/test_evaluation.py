"""evaluate_split with a translator that knows the references: the scores, lines and files."""

from __future__ import annotations

import gzip
import math
from collections.abc import Sequence
from pathlib import Path

import pytest

import data_pipeline as dp
from common.errors import ConfigError
from common.translation import Hypothesis, TranslationRequest
from inference.evaluation import direction_names, evaluate_split
from inference.multi30k_bleu import LABEL


class Oracle:
    """Translates each source sentence into its reference: every score is 100."""

    beam_size = 1

    def __init__(self, pairs: Sequence[tuple[str, str]]):
        self._translations = dict(pairs)

    languages = ()

    def translate(
        self,
        sentences: Sequence[str],
        request: TranslationRequest = TranslationRequest(),
        batch_size: int = 64,
        progress: bool = True,
    ) -> list[str]:
        assert request.target_lang is None
        return [self._translations[sentence] for sentence in sentences]

    def hypotheses(
        self,
        sentences: Sequence[str],
        request: TranslationRequest = TranslationRequest(),
        batch_size: int = 64,
        progress: bool = True,
    ) -> list[list[Hypothesis]]:
        """Each reference, as sure of its first sentence as 1/2 a token, of the rest 1/4."""
        translations = self.translate(sentences, request, batch_size, progress)
        return [
            [Hypothesis(text, -1.0, 4 * math.log(0.5 if row == 0 else 0.25), 4)]
            for row, text in enumerate(translations)
        ]

    def truncation_warnings(
        self, sentences: Sequence[str], request: TranslationRequest = TranslationRequest()
    ) -> list[str]:
        return []


def test_multi30k_gets_the_papers_bleu_in_the_data_sets_order(tfds_dir, multi30k_dir, tmp_path):
    ds = dp.load_translation_splits("multi30k/de-en", ["test2017"], data_dir=tfds_dir)["test2017"]
    pairs = [(s.decode(), t.decode()) for s, t in ds.as_numpy_iterator()]
    result = evaluate_split(
        Oracle(pairs), "multi30k/de-en", "test2017", str(tmp_path), tfds_dir, progress=False
    )
    data_set_file = gzip.decompress(
        Path(multi30k_dir, "tok", "test_2017_flickr.lc.norm.tok.en.gz").read_bytes()
    )
    assert result.tokenized.references_file == f"{tmp_path}/multi30k_de-en.test2017.lc.norm.tok.ref"
    assert Path(result.tokenized.references_file).read_bytes() == data_set_file
    # The references as translations, processed and put in the files' order: the data set's file.
    assert Path(result.tokenized.hypotheses_file).read_bytes() == data_set_file
    assert result.tokenized.bleu.score == pytest.approx(100.0)
    words = len(data_set_file.split())
    assert result.report().splitlines()[:4] == [
        f"{result.bleu} (signature: {result.bleu_signature})",
        f"{result.chrf} (signature: {result.chrf_signature})",
        f"lower-cased {result.lowercase_bleu} (signature: {result.lowercase_bleu_signature})",
        f"{LABEL}: BLEU = 100.00 100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 1.000 "
        f"hyp_len = {words} ref_len = {words}) "
        "(signature: nrefs:1|case:mixed|eff:no|tok:none|smooth:exp|version:2.6.0)",
    ]
    confidence = (0.5 + 0.25 * (len(pairs) - 1)) / len(pairs)
    assert result.mean_confidence == pytest.approx(confidence)
    assert result.report().splitlines()[4] == (
        f"mean confidence {confidence:.4f} (each translation's exp(log_prob / length): the "
        "geometric mean of its tokens' probabilities)"
    )
    assert result.report().splitlines()[7:] == [
        f"tokenized hypotheses: {tmp_path}/multi30k_de-en.test2017.beam1.lc.norm.tok.hyp",
        f"tokenized references: {tmp_path}/multi30k_de-en.test2017.lc.norm.tok.ref",
    ]


def test_other_data_sets_get_no_tokenized_bleu(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "test.de").write_text("Ein Hund rennt.\nZwei Katzen.\n", encoding="utf-8")
    (corpus / "test.en").write_text("A dog runs.\nTwo cats.\n", encoding="utf-8")
    pairs = [("Ein Hund rennt.", "A dog runs."), ("Zwei Katzen.", "Two cats.")]
    result = evaluate_split(
        Oracle(pairs), f"text:{corpus}:de-en", "test", str(tmp_path / "eval"), progress=False
    )
    assert result.tokenized is None
    report = result.report().splitlines()
    assert len(report) == 6 and not [line for line in report if "tokenized" in line]
    assert report[3] == (
        "mean confidence 0.3750 (each translation's exp(log_prob / length): the geometric mean "
        "of its tokens' probabilities)"
    )
    assert report[0].startswith("BLEU = 100.00 ")
    assert sorted(p.name for p in (tmp_path / "eval").iterdir()) == [
        f"text:{corpus}:de-en.test.beam1.hyp".replace("/", "_"),
        f"text:{corpus}:de-en.test.ref".replace("/", "_"),
    ]


def test_direction_names_reads_a_sliced_split_and_refuses_one_no_direction_has():
    names = direction_names("multi30k/multilingual", "all", "test2017[:10]")
    assert len(names) == 6 and names["de-fr"] == "multi30k/de-fr"  # no Czech in test2017
    assert direction_names("multi30k/de-en", None, "test2016") is None
    czech = "multi30k/en-cs,multi30k/de-cs"
    with pytest.raises(ConfigError, match=f"No direction of '{czech}' has the split 'test2017'"):
        direction_names(czech, "all", "test2017")
