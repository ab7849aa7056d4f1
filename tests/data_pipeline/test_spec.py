"""The data spec (`data_pipeline.spec`): the forms of a name, one direction or several; the
loading of several directions (tagged, each direction's, mixed for training) and the Multi30k
builder's `multilingual` config (every direction aligned: source and target of one sentence)."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest
import tensorflow as tf

import data_pipeline as dp
from common.errors import UserError
from common.language_tags import tagged
from data_pipeline import multi30k, tagging
from data_pipeline.spec import Direction, parse

DIRECTIONS = "de-en,en-de,fr-de"


def test_the_forms_of_a_name():
    everything = parse("multi30k/multilingual")
    assert everything.directions == tuple(multi30k.DIRECTIONS) and everything.tagged
    assert everything.languages == ("cs", "de", "en", "fr")
    assert everything.corpora[0].name == "multi30k/de-en" and everything.corpora[0].is_multi30k
    listed = parse("multi30k/en-de, multi30k/de-en")
    assert listed.directions == (("en", "de"), ("de", "en")) and listed.languages == ("de", "en")
    text = parse("text:/data/c:de-en,fr-en")
    assert text.directions == (("de", "en"), ("fr", "en")) and text.languages == ("en",)
    assert text.corpora[1].name == "text:/data/c:fr-en" and not text.corpora[1].is_multi30k
    for one_pair in ("multi30k/de-en", "text:/data/c:de-en", "ted_hrlr_translate/pt_to_en"):
        data = parse(one_pair)
        assert not data.tagged and data.languages == () and data.corpus.name == one_pair
    # A pair of one's own files needs no language codes; several directions name tags.
    assert parse("text:/data/c:src-tgt").directions == (Direction("src", "tgt"),)


def test_one_form_of_a_direction():
    direction = Direction.parse(" de-fr", "--direction")
    assert direction == ("de", "fr") and direction.target == "fr" and direction.label == "de-fr"
    with pytest.raises(dp.DataError, match="Cannot read the direction 'de_fr' in --direction"):
        Direction.parse("de_fr", "--direction")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("multi30k/de-en,multi30k/de-es", "'multi30k/de-es' .* is not a Multi30k direction"),
        ("multi30k/de-en,wmt14_translate/de-en", "is not a Multi30k direction"),
        ("multi30k/de-en,multi30k/de-en", "names de-en more than once"),
        ("text:/data/c:de-en,deen", "Cannot read the direction 'deen'"),
        ("text:/data/c:de-en,de-de", "Cannot read the direction 'de-de'"),
        ("text:/data/c:de-en,source-en", "'source' is not a language code"),
    ],
)
def test_a_bad_name_of_several_directions_is_one_clear_error(name, message):
    with pytest.raises(UserError, match=message):  # a DataError; a language code's own error
        parse(name)


def test_extra_training_corpora_translate_into_the_one_target_language():
    data = parse("multi30k/en-de", " multi30k/fr-de, multi30k/cs-de")
    assert [c.name for c in data.extra_train] == ["multi30k/fr-de", "multi30k/cs-de"]
    assert data.directions == (("en", "de"),) and not data.tagged
    with pytest.raises(dp.DataError, match="names 'multi30k/de-en', which translates into 'en'"):
        parse("multi30k/en-de", "multi30k/de-en")
    with pytest.raises(dp.DataError, match="is multilingual: list every direction"):
        parse("multi30k/multilingual", "multi30k/fr-de")
    with pytest.raises(dp.DataError, match="of one language pair"):
        parse("multi30k/en-de", "multi30k/multilingual")
    weighted = parse("multi30k/en-de", "multi30k/fr-de@0.2,multi30k/cs-de @ 3")
    assert [(c.name, c.weight) for c in weighted.extra_train] == [
        ("multi30k/fr-de", 0.2),
        ("multi30k/cs-de", 3.0),
    ]
    for bad in ("0", "-1", "x", "", "inf"):
        with pytest.raises(dp.DataError, match=f"weight '{bad}' must be a positive number"):
            parse("multi30k/en-de", f"multi30k/fr-de@{bad}")


def test_which_directions_have_a_split_and_which_one_a_flag_chooses():
    czech = parse("multi30k/en-cs,multi30k/de-en")
    assert [c.name for c in czech.corpora_with("test2017[:10]")] == ["multi30k/de-en"]
    with pytest.raises(dp.DataError, match="No direction of 'multi30k/en-cs,multi30k/de-cs'"):
        parse("multi30k/en-cs,multi30k/de-cs").corpora_with("test2017")
    every = parse("multi30k/multilingual")
    assert len(every.chosen("all", "test2017")) == 6 and len(every.chosen(None, "test2016")) == 12
    assert [c.name for c in every.chosen("de-fr", "test2016")] == ["multi30k/de-fr"]
    with pytest.raises(dp.DataError, match="'de-es' is not a direction of 'multi30k/multil"):
        every.chosen("de-es", "test2016")
    # One direction: the same path, a list of one; its loader names a split it has not.
    one = parse("multi30k/cs-en")
    assert one.chosen(None, "test2017") == one.chosen("cs-en", "test2016") == one.corpora
    with pytest.raises(dp.DataError, match="has 12 directions; this needs data of one"):
        every.corpus  # noqa: B018  (the property raises)


def test_the_model_reads_one_direction_untagged_and_several_tagged():
    pairs = tf.data.Dataset.from_tensors((tf.constant("Say <2de>."), tf.constant("Sag <2de>.")))
    one, several = parse("multi30k/en-de"), parse("multi30k/en-de,multi30k/de-en")
    assert one.tag_language(Direction("en", "de")) == ""
    assert one.model_pairs(Direction("en", "de"), pairs) is pairs
    assert several.tag_language(Direction("en", "de")) == "de"
    ((source, target),) = several.model_pairs(Direction("en", "de"), pairs).as_numpy_iterator()
    assert (source.decode(), target.decode()) == ("<2de> Say < 2de>.", "Sag < 2de>.")


def _lines(corpus: str, split: str, lang: str) -> list[str]:
    return Path(corpus, f"{split}.{lang}").read_text(encoding="utf-8").splitlines()


def test_tagging_in_graph_is_the_same_as_in_python():
    texts = ["Ein Hund.", "", "Say <2de> and <2en>!", "<2fr>", "<<2de>>", "<2deut> <2DE>", "‹2dé>"]
    languages = ["fr", "de", "cs", "en", "de", "fr", "en"]
    in_graph = tagging.tag_in_graph(tf.constant(texts), tf.constant(languages))
    expected = [tagged(text, lang) for text, lang in zip(texts, languages, strict=True)]
    assert [t.decode() for t in in_graph.numpy()] == expected


def test_validation_pairs_are_every_direction_tagged_in_turn(small_corpus):
    name = f"text:{small_corpus}:{DIRECTIONS}"
    pairs = list(dp.load_translation_splits(dp.spec.parse(name), ["validation"])["validation"])
    expected = [
        (f"<2{t}> {s_line}", t_line)
        for s, t in (d.split("-") for d in DIRECTIONS.split(","))
        for s_line, t_line in zip(
            _lines(small_corpus, "validation", s),
            _lines(small_corpus, "validation", t),
            strict=True,
        )
    ]
    assert [(a.numpy().decode(), b.numpy().decode()) for a, b in pairs] == expected


def test_direction_splits_are_untagged_and_each_only_with_the_splits_it_has(small_corpus):
    name = f"text:{small_corpus}:{DIRECTIONS}"
    by_direction = dp.load_direction_splits(dp.spec.parse(name), ["validation"])
    assert list(by_direction) == [("de", "en"), ("en", "de"), ("fr", "de")]
    fr_de = [
        (a.decode(), b.decode())
        for a, b in by_direction["fr", "de"]["validation"].as_numpy_iterator()
    ]
    assert fr_de == list(
        zip(
            _lines(small_corpus, "validation", "fr"),
            _lines(small_corpus, "validation", "de"),
            strict=True,
        )
    )
    with pytest.raises(dp.DataError, match="No direction .* has the split 'test'"):
        dp.load_direction_splits(dp.spec.parse(name), ["test"])


def test_a_multilingual_text_corpus_trains_on_every_direction_mixed_and_aligned(
    small_corpus, tmp_path
):
    name = f"text:{small_corpus}:{DIRECTIONS}"
    pairs, count = dp.load_training_split(dp.spec.parse(name, data_dir=str(tmp_path)), "train")
    pairs = [(a.decode(), b.decode()) for a, b in pairs.as_numpy_iterator()]
    assert count == len(pairs) == 3 * 2000
    aligned = {
        direction: set(
            zip(
                _lines(small_corpus, "train", direction[:2]),
                _lines(small_corpus, "train", direction[3:]),
                strict=True,
            )
        )
        for direction in DIRECTIONS.split(",")
    }
    seen = collections.Counter()
    for source, target in pairs:
        tag, _, text = source.partition(" ")
        # The tag names the target language, and the source and target are one sentence.
        (direction,) = [d for d in aligned if tag == f"<2{d[3:]}>" and (text, target) in aligned[d]]
        seen[direction] += 1
    assert seen == {d: 2000 for d in DIRECTIONS.split(",")}
    first_hundred = collections.Counter(s.partition(" ")[0] for s, _ in pairs[:100])
    assert len(first_hundred) == 2  # the directions are mixed, not one after another


def test_the_multi30k_multilingual_config_yields_every_direction_aligned(
    raw_lines, multi30k_dir, monkeypatch
):
    monkeypatch.setenv("MULTI30K_DIR", multi30k_dir)
    builder = multi30k.Multi30k(config="multilingual", data_dir="/nonexistent")
    assert builder.info.supervised_keys is None
    generators = builder._split_generators(dl_manager=None)
    assert set(generators) == set(multi30k.SPLIT_PREFIXES)
    counts = collections.Counter()
    for key, example in generators["validation"]:
        source, target = example["source_language"], example["target_language"]
        line = int(key.rsplit("-", 1)[1])
        assert key == f"{source}-{target}-{line}"
        assert example["source"] == raw_lines("validation", source)[line]
        assert example["target"] == raw_lines("validation", target)[line]
        counts[source, target] += 1
    assert counts == {d: 1014 for d in multi30k.DIRECTIONS}
    test2017 = collections.Counter(
        (e["source_language"], e["target_language"]) for _, e in generators["test2017"]
    )
    assert set(test2017) == {d for d in multi30k.DIRECTIONS if "cs" not in d}
