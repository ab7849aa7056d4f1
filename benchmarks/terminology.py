"""Terms in the output: how often translations hold required terms, their BLEU, and the speed of
the constrained search, without and with the terms.

    .venv/bin/python benchmarks/terminology.py --workdir=runs/multi30k_de_en
        [--checkpoint=averaged] [--splits=test2016,test2017] [--terms_per_sentence=2]
        [--rare_count=5] [--seed=0] [--max_sentences=0] [--output_dir=DIR]

Builds terminology test sets from each split, deterministically (``--seed``):

* reference: for each sentence, up to ``--terms_per_sentence`` words of its reference (letters
  only, 3 or more, not a function word) that the unconstrained translation lacks, as whole
  words in any case (a sentence whose translation holds them all gets none);
* rare: the reference set's terms seen at most ``--rare_count`` times in the training targets;
* made-up: each sentence with its first capitalised source word after the first word (a German
  noun) replaced by a made-up product name ("Velorix"), the term being that name (sentences
  without such a word are left out).

For each set: the term usage rate (the terms found as whole words, in any case) without and
with the terms given to the search; sacreBLEU against the references without and with them
(not for made-up names, which the references lack); and the sentences/s of one pass over the
split's sources with the terms (sentences without terms included) against one without, in
batches of ``--batch_size``, each timed on its second run (the first traces and compiles).
``--output_dir`` writes each set as the sources and a ``translate.py --terms`` file of JSON
lines. Run it alone on the machine.
"""

from __future__ import annotations

import collections
import json
import os
import re
import time

import harness  # noqa: I001  (first: sets up the path and TensorFlow's logging)
import numpy as np
from absl import flags

from cli.errors import run_main
from common.metrics import bleu
from common.translation import Terms, TranslationRequest, Translator
from inference.loading import load_translator

_WORKDIR = flags.DEFINE_string("workdir", None, "A trained work directory.", required=True)
_CHECKPOINT = flags.DEFINE_string("checkpoint", "averaged", "Its checkpoint.")
_SPLITS = flags.DEFINE_list("splits", ["test2016", "test2017"], "The splits measured.")
_MAX_SENTENCES = flags.DEFINE_integer("max_sentences", 0, "Only the first sentences (0: all).")
_TERMS_PER_SENTENCE = flags.DEFINE_integer(
    "terms_per_sentence", 2, "Reference words required a sentence, at most."
)
_RARE_COUNT = flags.DEFINE_integer(
    "rare_count", 5, "A term seen at most this many times in the training targets is rare."
)
_SEED = flags.DEFINE_integer("seed", 0, "Seed of the terms' choice and of the made-up names.")
_BATCH_SIZE = flags.DEFINE_integer("batch_size", 64, "Sentences per batch.")
_OUTPUT_DIR = flags.DEFINE_string(
    "output_dir", None, "Write each set's sources and terms (JSON lines) here."
)

# English function words: never chosen as terms.
FUNCTION_WORDS = frozenset(
    re.findall(
        r"\w+",
        "the and are for with its his her their from into onto over under near while who which "
        "that this these those there has have had was were been being not but one two some",
    )
)
WORD = re.compile(r"[^\W\d_]+")
SYLLABLES = ("ka", "lo", "vex", "ri", "zan", "tor", "mi", "bel", "quo", "dra", "sen", "pul")


def words(text: str) -> list[str]:
    """The words of ``text``: runs of letters."""
    return WORD.findall(text)


def holds(text: str, term: str) -> bool:
    """Whether ``term`` stands in ``text`` as whole words, in any case."""
    return re.search(rf"(?<!\w){re.escape(term)}(?!\w)", text, re.IGNORECASE) is not None


def reference_terms(
    references: list[str], translations: list[str], rng: np.random.Generator
) -> list[Terms | None]:
    """Each sentence's reference words its translation lacks (up to --terms_per_sentence)."""
    terms = []
    for reference, translation in zip(references, translations, strict=True):
        missing = [
            word
            for word in dict.fromkeys(words(reference))
            if len(word) >= 3
            and word.lower() not in FUNCTION_WORDS
            and not holds(translation, word)
        ]
        count = min(len(missing), _TERMS_PER_SENTENCE.value)
        chosen = sorted(rng.choice(len(missing), size=count, replace=False)) if count else []
        terms.append(Terms([missing[index] for index in chosen]) if chosen else None)
    return terms


def rare_terms(terms: list[Terms | None], counts: collections.Counter) -> list[Terms | None]:
    """The terms seen at most --rare_count times in the training targets."""
    rare = []
    for given in terms:
        kept = [
            t for t in (given.required if given else ()) if counts[t.lower()] <= _RARE_COUNT.value
        ]
        rare.append(Terms(kept) if kept else None)
    return rare


def made_up_names(sources: list[str], rng: np.random.Generator) -> tuple[list[str], list[Terms]]:
    """Sources with a noun replaced by a made-up name, and that name as each one's term."""
    replaced, terms = [], []
    for source in sources:
        tokens = source.split()
        nouns = [
            index
            for index, token in enumerate(tokens)
            if index > 0 and token[:1].isupper() and token.isalpha() and len(token) >= 3
        ]
        if not nouns:
            continue
        syllables = rng.choice(SYLLABLES, size=rng.integers(2, 4))
        name = "".join(syllables).capitalize() + "x"
        tokens[nouns[0]] = name
        replaced.append(" ".join(tokens))
        terms.append(Terms([name]))
    return replaced, terms


def usage(translations: list[str], terms: list[Terms | None]) -> tuple[float, int]:
    """``(share of the terms held, number of terms)``."""
    pairs = [
        (t, term)
        for t, given in zip(translations, terms, strict=True)
        if given
        for term in given.required
    ]
    return sum(holds(text, term) for text, term in pairs) / max(len(pairs), 1), len(pairs)


def timed(translator: Translator, sources: list[str], request: TranslationRequest):
    """``(translations, sentences/s)`` of a pass after one untimed pass of the same request
    (which traces and compiles for every shape met: the time is the steady state's)."""
    translator.translate(sources, request, _BATCH_SIZE.value, progress=False)
    started = time.perf_counter()
    translations = translator.translate(sources, request, _BATCH_SIZE.value, progress=False)
    return translations, len(sources) / (time.perf_counter() - started)


def measure(
    name: str,
    translator: Translator,
    sources: list[str],
    references: list[str] | None,
    terms: list[Terms | None],
    plain: tuple[list[str], float] | None = None,
) -> str:
    """One table row: usage, BLEU and speed without and with ``terms``."""
    free, free_rate = plain or timed(translator, sources, TranslationRequest())
    constrained, rate = timed(translator, sources, TranslationRequest(terms=terms))
    free_usage, count = usage(free, terms)
    with_usage, _ = usage(constrained, terms)
    with_terms = sum(given is not None for given in terms)
    scores = "— | —"
    if references is not None:
        scores = (
            f"{bleu(free, references)[0].score:.2f} | {bleu(constrained, references)[0].score:.2f}"
        )
    return (
        f"| {name} | {with_terms} of {len(sources)} | {count} | {free_usage:.1%} | "
        f"{with_usage:.1%} | {scores} | {free_rate:.1f} | {rate:.1f} | {free_rate / rate:.2f}x |"
    )


def write_set(name: str, sources: list[str], terms: list[Terms | None]) -> None:
    """``DIR/NAME.de`` and ``DIR/NAME.terms.jsonl`` (--output_dir)."""
    os.makedirs(_OUTPUT_DIR.value, exist_ok=True)
    with open(os.path.join(_OUTPUT_DIR.value, f"{name}.src"), "w", encoding="utf-8") as file:
        file.writelines(f"{source}\n" for source in sources)
    with open(
        os.path.join(_OUTPUT_DIR.value, f"{name}.terms.jsonl"), "w", encoding="utf-8"
    ) as file:
        for given in terms:
            file.write((json.dumps({"terms": list(given.required)}) if given else "") + "\n")


def main(argv: list[str]) -> None:
    del argv
    harness.start(__doc__)
    translator, checkpoint = load_translator(_WORKDIR.value, _CHECKPOINT.value)
    print(f"model: {_WORKDIR.value} ({checkpoint}), beam {translator.beam_size}")
    _, training_targets = harness.workdir_split(_WORKDIR.value, "train")
    counts = collections.Counter(word.lower() for line in training_targets for word in words(line))
    rng = np.random.default_rng(_SEED.value)
    print(
        "\n| split, set | sentences with terms | terms | usage without | usage with | "
        "BLEU without | BLEU with | sentences/s without | with | time with / without |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for split in _SPLITS.value:
        sources, references = harness.workdir_split(_WORKDIR.value, split, _MAX_SENTENCES.value)
        plain = timed(translator, sources, TranslationRequest())
        terms = reference_terms(references, plain[0], rng)
        rare = rare_terms(terms, counts)
        named, name_terms = made_up_names(sources, rng)
        print(
            measure(f"{split}, reference", translator, sources, references, terms, plain),
            flush=True,
        )
        print(measure(f"{split}, rare", translator, sources, references, rare, plain), flush=True)
        print(measure(f"{split}, made-up names", translator, named, None, name_terms), flush=True)
        if _OUTPUT_DIR.value:
            write_set(f"{split}.reference", sources, terms)
            write_set(f"{split}.made_up", named, name_terms)


if __name__ == "__main__":
    run_main(main)
