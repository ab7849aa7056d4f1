"""Multi30k's tokenized BLEU: the Moses steps reproduce the data set's own files, and
hypotheses are put back in the files' line order."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

import data_pipeline as dp
from common.metrics import bleu
from data_pipeline import multi30k
from inference.multi30k_bleu import (
    TokenizedReferences,
    file_order,
    load_tokenized_references,
    moses_preprocess,
)

TOK_SPLITS = ["validation", "test2016", "test2017", "mscoco2017"]


def read_gz_lines(path: Path) -> list[str]:
    text = gzip.decompress(path.read_bytes()).decode("utf-8")
    assert text.endswith("\n")
    return text[:-1].split("\n")


def test_every_tokenized_reference_file_of_the_data_set_is_known(multi30k_dir):
    present = {p.name for p in Path(multi30k_dir, "tok").glob("*.gz")}
    assert present == {name + ".gz" for name in multi30k.TOK_SHA256}


@pytest.mark.parametrize("name", sorted(multi30k.TOK_SHA256))
def test_moses_preprocess_turns_each_raw_file_into_its_tokenized_file(name, multi30k_dir):
    prefix, language = name.split(".lc.norm.tok.")
    raw = read_gz_lines(Path(multi30k_dir, f"{prefix}.{language}.gz"))
    tokenized = read_gz_lines(Path(multi30k_dir, "tok", name + ".gz"))
    processed = moses_preprocess(raw, language)
    differences = [
        (number, want, got)
        for number, (want, got) in enumerate(zip(tokenized, processed, strict=True), 1)
        if want != got
    ]
    assert not differences, differences[:5]
    score, signature = bleu(processed, tokenized, tokenize="none")
    assert score.score == pytest.approx(100.0) and "tok:none" in signature


def test_the_lines_that_need_perl_parity_and_the_final_newline():
    # The lines that need perl_parity=True and the final "\n" (val.fr line 861, val.de 656).
    assert moses_preprocess(["Une femme jette un coup d’œil."], "fr") == [
        "une femme jette un coup d &quot; œil ."
    ]
    assert moses_preprocess(['Il s\'appelle "32 De Neude."'], "fr") == [
        "il s&apos; appelle &quot; 32 de neude &quot; ."
    ]
    assert moses_preprocess(['He said "Tea."'], "en") == ["he said &quot; tea . &quot;"]
    assert moses_preprocess(["Ein T-Shirt & <Hut> | [x]", ""], "de") == [
        "ein t-shirt &amp; &lt; hut &gt; &#124; &#91; x &#93;",
        "",
    ]


def test_file_order_maps_each_example_to_its_line():
    file_pairs = [("a", "A"), ("b", "B"), ("a", "A"), ("c", "C")]
    pairs = [("c", "C"), ("a", "A"), ("b", "B"), ("a", "A")]
    order = file_order(pairs, file_pairs)
    assert sorted(order) == [0, 1, 2, 3]
    assert [file_pairs[line] for line in order] == pairs
    with pytest.raises(dp.DataError, match=r"Example 4 .* is not \(or not that often\) in the raw"):
        file_order(pairs[:3] + [("c", "C")], file_pairs)
    with pytest.raises(dp.DataError, match="has 3 examples but the raw files have 4 lines"):
        file_order(pairs[:3], file_pairs)


def test_hypotheses_go_to_the_line_of_their_example():
    references = TokenizedReferences("de", ["ein hund .", "zwei katzen ."], file_lines=[1, 0])
    assert references.hypotheses_in_file_order(["Zwei Katzen.", "Ein Hund."]) == [
        "ein hund .",
        "zwei katzen .",
    ]


@pytest.fixture(scope="module")
def de_en_tfds_order(tfds_dir) -> dict[str, list[tuple[str, str]]]:
    """multi30k/de-en's validation and test splits as prepared (TFDS's order)."""
    splits = dp.load_translation_splits(
        dp.spec.parse("multi30k/de-en", data_dir=tfds_dir), TOK_SPLITS
    )
    return {
        split: [(s.decode(), t.decode()) for s, t in ds.as_numpy_iterator()]
        for split, ds in splits.items()
    }


@pytest.mark.parametrize("split", TOK_SPLITS)
def test_tfds_order_is_mapped_back_to_the_files_order(
    split, de_en_tfds_order, tfds_dir, multi30k_dir
):
    pairs = de_en_tfds_order[split]
    prefix = multi30k.SPLIT_PREFIXES[split]
    file_pairs = list(
        zip(
            read_gz_lines(Path(multi30k_dir, f"{prefix}.de.gz")),
            read_gz_lines(Path(multi30k_dir, f"{prefix}.en.gz")),
            strict=True,
        )
    )
    assert sum(p == f for p, f in zip(pairs, file_pairs, strict=True)) <= 1  # TFDS shuffled.
    references = load_tokenized_references(
        dp.spec.parse("multi30k/de-en").corpus, split, pairs, tfds_dir
    )
    assert references.language == "en"
    assert references.lines == read_gz_lines(
        Path(multi30k_dir, "tok", f"{prefix}.lc.norm.tok.en.gz")
    )
    assert [file_pairs[line] for line in references.file_lines] == pairs
    # The raw English sentences as hypotheses, in TFDS's order: the reference file, exactly.
    english = [target for _, target in pairs]
    assert references.hypotheses_in_file_order(english) == references.lines


def test_no_tokenized_references_elsewhere(tmp_path):
    assert (
        load_tokenized_references(
            dp.spec.parse("multi30k/de-en").corpus, "train", [], str(tmp_path)
        )
        is None
    )
    assert load_tokenized_references(dp.spec.parse("text:/data:de-en").corpus, "test", []) is None
    assert (
        load_tokenized_references(dp.spec.parse("wmt14_translate/de-en").corpus, "test", []) is None
    )
    assert not any(tmp_path.iterdir())  # Nothing read or downloaded.
