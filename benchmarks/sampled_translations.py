"""Sampled translations of a split, as back-translation makes them: how good, how diverse, how
fast, beside the beam search's.

    .venv/bin/python benchmarks/sampled_translations.py --workdir=runs/multi30k_de_en
        [--checkpoint=averaged] [--ctranslate2=DIR] [--split=test2016] [--top_k=10]
        [--top_p=1.0] [--temperature=1.0] [--seeds=1,2,3]

Translates the split's sources with the work directory's model (and a CTranslate2 export of it,
if given): once with its beam search, then once per seed with random sampling. Prints for each
runtime: sacreBLEU of the beam translations and of each seed's samples against the references;
diversity, as the share of sentences whose sample differs from the beam translation and, across
seeds, the mean pairwise BLEU of the seeds' samples (self-BLEU: lower is more diverse) and the
mean number of distinct translations a sentence gets; sentences/s of each pass (batches of
--batch_size). The same seed twice must give the same samples (checked, printed). Run it alone
on the machine.
"""

from __future__ import annotations

import itertools
import statistics
import time

import harness  # noqa: I001  (first: sets up the path and TensorFlow's logging)
from absl import flags

from cli.errors import run_main
from common.metrics import bleu
from common.translation import Sampling, TranslationRequest, Translator
from inference.loading import load_translator

_WORKDIR = flags.DEFINE_string("workdir", None, "A trained work directory.", required=True)
_CHECKPOINT = flags.DEFINE_string("checkpoint", "averaged", "Its checkpoint.")
_CTRANSLATE2 = flags.DEFINE_string("ctranslate2", None, "Also this CTranslate2 export of it.")
_SPLIT = flags.DEFINE_string("split", "test2016", "The split translated.")
_MAX_SENTENCES = flags.DEFINE_integer("max_sentences", 0, "Only the first sentences (0: all).")
_TOP_K = flags.DEFINE_integer("top_k", 10, "Sampling among the K most likely (0: all).")
_TOP_P = flags.DEFINE_float("top_p", 1.0, "Nucleus sampling's mass.")
_TEMPERATURE = flags.DEFINE_float("temperature", 1.0, "Sampling temperature.")
_SEEDS = flags.DEFINE_list("seeds", ["1", "2", "3"], "One sampled pass per seed.")
_BATCH_SIZE = flags.DEFINE_integer("batch_size", 64, "Sentences per batch.")


def sampled(seed: str) -> TranslationRequest:
    """The request of a sampled pass with ``seed``."""
    return TranslationRequest(
        sampling=Sampling(_TOP_K.value, _TOP_P.value, _TEMPERATURE.value, int(seed))
    )


def timed(translator: Translator, sources: list[str], request: TranslationRequest):
    """``(translations, sentences/s)`` of one pass."""
    started = time.perf_counter()
    translations = translator.translate(sources, request, _BATCH_SIZE.value, progress=False)
    return translations, len(sources) / (time.perf_counter() - started)


def report(name: str, translator: Translator, sources: list[str], references: list[str]) -> None:
    """The runtime's table rows and diversity figures."""
    timed(translator, sources[:64], TranslationRequest())  # warm-up: the shapes traced
    beam, beam_rate = timed(translator, sources, TranslationRequest())
    print(f"\n{name}")
    print("| pass | sacreBLEU | differs from beam | sentences/s |")
    print("| --- | --- | --- | --- |")
    beam_bleu = bleu(beam, references)[0].score
    print(f"| beam {translator.beam_size} | {beam_bleu:.2f} | | {beam_rate:.1f} |")
    samples = {}
    for seed in _SEEDS.value:
        samples[seed], rate = timed(translator, sources, sampled(seed))
        differs = sum(a != b for a, b in zip(samples[seed], beam, strict=True)) / len(beam)
        score = bleu(samples[seed], references)[0].score
        print(f"| sampled, seed {seed} | {score:.2f} | {differs:.1%} | {rate:.1f} |")
    first = _SEEDS.value[0]
    again, _ = timed(translator, sources, sampled(first))
    print(f"seed {first} again gives the same samples: {again == samples[first]}")
    if len(samples) > 1:
        self_bleu = statistics.mean(
            bleu(samples[a], samples[b])[0].score for a, b in itertools.permutations(samples, 2)
        )
        distinct = statistics.mean(len(set(row)) for row in zip(*samples.values(), strict=True))
        print(
            f"self-BLEU across the {len(samples)} seeds: {self_bleu:.2f}; distinct translations "
            f"a sentence: {distinct:.2f} of {len(samples)}"
        )


def main(argv: list[str]) -> None:
    del argv
    harness.start(__doc__)
    sources, references = harness.workdir_split(_WORKDIR.value, _SPLIT.value, _MAX_SENTENCES.value)
    harness.print_config(
        "sampling",
        {
            "split": f"{_SPLIT.value} ({len(sources)} sentences)",
            "top_k": _TOP_K.value,
            "top_p": _TOP_P.value,
            "temperature": _TEMPERATURE.value,
            "seeds": ",".join(_SEEDS.value),
        },
    )
    report(
        "work directory", load_translator(_WORKDIR.value, _CHECKPOINT.value)[0], sources, references
    )
    if _CTRANSLATE2.value:
        from exports.ctranslate2 import CTranslate2Translator

        report("CTranslate2", CTranslate2Translator(_CTRANSLATE2.value), sources, references)


if __name__ == "__main__":
    run_main(main)
