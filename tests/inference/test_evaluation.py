"""evaluate_split and evaluate_directions with a translator that knows the references: the
scores, lines and files."""

from __future__ import annotations

import gzip
import math
from collections.abc import Sequence
from pathlib import Path

import pytest

import data_pipeline as dp
from common.translation import Hypothesis, TranslationRequest
from inference.evaluation import evaluate_directions, evaluate_split
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


def test_multi30k_gets_the_papers_bleu_in_the_data_sets_order(tfds_dir, multi30k_dir, tmp_path):
    ds = dp.load_translation_splits(
        dp.spec.parse("multi30k/de-en", data_dir=tfds_dir), ["test2017"]
    )["test2017"]
    pairs = [(s.decode(), t.decode()) for s, t in ds.as_numpy_iterator()]
    corpus = dp.spec.parse("multi30k/de-en").corpus
    result = evaluate_split(
        Oracle(pairs), corpus, "test2017", str(tmp_path), tfds_dir, progress=False
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


PAIRS = [("Ein Hund rennt.", "A dog runs."), ("Zwei Katzen.", "Two cats.")]


@pytest.fixture
def corpus(tmp_path) -> Path:
    """A text corpus directory with a split ``test`` of PAIRS in German and English."""
    directory = tmp_path / "corpus"
    directory.mkdir()
    for side, lang in enumerate(("de", "en")):
        (directory / f"test.{lang}").write_text("".join(p[side] + "\n" for p in PAIRS))
    return directory


def test_other_data_sets_get_no_tokenized_bleu(corpus, tmp_path):
    pairs = PAIRS
    one_pair = dp.spec.parse(f"text:{corpus}:de-en").corpus
    result = evaluate_split(Oracle(pairs), one_pair, "test", str(tmp_path / "eval"), progress=False)
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


class MultilingualOracle(Oracle):
    """An Oracle of target languages de and en that records each request's."""

    languages = ("de", "en")

    def __init__(self, pairs: Sequence[tuple[str, str]]):
        super().__init__(pairs)
        self.requested = []

    def hypotheses(self, sentences, request=TranslationRequest(), batch_size=64, progress=True):
        self.requested.append(request.target_lang)
        return super().hypotheses(sentences, TranslationRequest(), batch_size, progress)


def test_one_direction_or_several_are_scored_by_one_function(corpus, tmp_path):
    pairs = PAIRS + [(target, source) for source, target in PAIRS]
    data = dp.spec.parse(f"text:{corpus}:de-en,en-de")
    model = MultilingualOracle(pairs)
    output_dir = str(tmp_path / "eval")
    results = dict(evaluate_directions(model, data, data.corpora, "test", output_dir, False))
    assert list(results) == ["de-en", "en-de"] and model.requested == ["en", "de"]
    assert [r.bleu.score for r in results.values()] == pytest.approx([100.0, 100.0])
    assert Path(results["en-de"].hypotheses_file).read_text() == "Ein Hund rennt.\nZwei Katzen.\n"
    # A multilingual model on data of one pair translates into that pair's target language; a
    # model of one target language takes none.
    one_pair = dp.spec.parse(f"text:{corpus}:en-de")
    model.requested.clear()
    ((label, _),) = evaluate_directions(
        model, one_pair, one_pair.corpora, "test", output_dir, False
    )
    assert (label, model.requested) == ("en-de", ["de"])
    ((label, result),) = evaluate_directions(
        Oracle(pairs), one_pair, one_pair.corpora, "test", output_dir, False
    )
    assert result.bleu.score == pytest.approx(100.0)
