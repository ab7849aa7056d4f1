"""Translates text with a trained work directory or an export (SavedModel, CTranslate2, LiteRT).

python translate.py --workdir=DIR                       # interactive: a sentence a line
python translate.py --workdir=DIR --input=in.txt --output=out.txt
python translate.py --saved_model=DIR --input=-         # standard input to standard output
python translate.py --ctranslate2=DIR --input=in.txt    # a CTranslate2 export (export.py)
python translate.py --litert=DIR --input=in.txt         # a LiteRT export (export.py)
python translate.py --workdir=DIR --plot_attention=attention.svg   # then type a sentence
python translate.py --workdir=DIR --target_lang=fr     # a multilingual model, into French
python translate.py --workdir=DIR --n_best=4 --with_scores --input=in.txt   # 4 lines a sentence
python translate.py --workdir=DIR --output_format=jsonl --input=in.txt      # scores as JSON
python translate.py --workdir=DIR --sampling_topk=10 --seed=1 --input=in.txt  # sampled
python translate.py --workdir=DIR --input=in.txt --target_prefix=starts.txt  # continued
python translate.py --workdir=DIR --input=in.txt --target_prefix=starts.txt --n_best=3 \
    --return_alternatives                                # 3 next words, each continued
python translate.py --workdir=DIR --input=in.txt --alignments=hard  # "TEXT ||| 0-0 1-1 ..."
python translate.py --workdir=DIR --document --source_lang=de --input=doc.txt --output=doc.en.txt
python translate.py --workdir=DIR --document --html --source_lang=de --input=doc.html  # tags kept
python translate.py --workdir=DIR --terms=glossary.tsv --input=in.txt   # "Hund<TAB>hound" lines
python translate.py --workdir=DIR --terms=terms.jsonl --input=in.txt    # {"terms": ["hound"]}

A file is translated --window lines at a time into OUTPUT.partial (renamed OUTPUT when done);
the same command after an interruption continues it (cli/streaming.py).

Interactively, a multilingual model's target language changes with a line ":lang CODE".

--terms makes the search place terms (common/glossary.py, decoding/constraints.py): a glossary
requires its target term in every sentence holding its source phrase (interactively and with
--document too); a .jsonl file gives each --input line its own "terms" and "avoid" phrases.

With --document the input is running text, not a sentence a line: it is split into sentences
(common/documents.py), translated, and put back together with its spaces, line breaks and blank
lines; interactively each line typed is such a text.
"""

from __future__ import annotations

import dataclasses
import json
import sys

from absl import flags
from tqdm import tqdm

from cli.errors import run_main
from cli.runtime_flags import define_runtime_flags
from cli.sampling_flags import define_sampling_flags
from cli.streaming import STDIO, WINDOW, script_options, stream_lines
from cli.translation_output import (
    ALIGNMENT_KINDS,
    OUTPUT_FORMATS,
    alignment_output,
    format_hypotheses,
    one_line,
)
from common.files import atomic_write_text
from common.glossary import Glossary
from common.language_tags import UnknownLanguageError, check_language
from common.translation import (
    RequestError,
    Terms,
    TranslationRequest,
    Translator,
    truncation_warnings,
)

_RUNTIME = define_runtime_flags()
_SAMPLING = define_sampling_flags()
_INPUT = flags.DEFINE_string("input", None, "File of sentences, one a line ('-': stdin).")
_OUTPUT = flags.DEFINE_string("output", None, "File for the translations (default: stdout).")
_TARGET_PREFIX = flags.DEFINE_string(
    "target_prefix",
    None,
    "File of each --input line's start of its translation, a line each (an empty line: none); "
    "the search goes on from it.",
)
_TERMS = flags.DEFINE_string(
    "terms",
    None,
    "Terms the translations hold (--workdir, --saved_model): a glossary file of 'source "
    "phrase<TAB>target term' lines (the term is required where its source phrase occurs, as "
    "whole words in any case), "
    'or FILE.jsonl: a JSON object a --input line, {"terms": [...], "avoid": [...]} (an empty '
    "line: none).",
)
PER_LINE_TERMS = ".jsonl"
_BATCH_SIZE = flags.DEFINE_integer("batch_size", 64, "Sentences per batch.")
_WINDOW = flags.DEFINE_integer(
    "window",
    WINDOW,
    "Lines of --input read, sorted by length, translated and written at a time (memory grows "
    "with it, not with the file).",
    lower_bound=1,
)
_RESUME = flags.DEFINE_boolean(
    "resume",
    True,
    "Continue --output's partial file (OUTPUT.partial) where an interrupted run of the same "
    "input and flags stopped; --noresume starts over.",
)
_TARGET_LANG = flags.DEFINE_string(
    "target_lang", None, "A multilingual model's target language (e.g. fr); needed for one."
)
_N_BEST = flags.DEFINE_integer(
    "n_best", 1, "Hypotheses written for each sentence, best first (at most the beam size)."
)
_RETURN_ALTERNATIVES = flags.DEFINE_boolean(
    "return_alternatives",
    False,
    "The --n_best hypotheses are the most likely words at the first position after each "
    "--target_prefix (the start without one), each continued by the search.",
)
_WITH_SCORES = flags.DEFINE_boolean(
    "with_scores", False, "Write each hypothesis as 'SCORE ||| TRANSLATION' (text output)."
)
_OUTPUT_FORMAT = flags.DEFINE_enum(
    "output_format",
    "text",
    list(OUTPUT_FORMATS),
    "text: a line per hypothesis; jsonl: a JSON object per sentence with every hypothesis' "
    "translation, score, log_prob, length and confidence.",
)
_ALIGNMENTS = flags.DEFINE_enum(
    "alignments",
    None,
    list(ALIGNMENT_KINDS),
    "Write each translation's word alignment with its source: hard (Pharaoh links 'i-j', "
    "source word - target word) or soft (per subword, the attention weights).",
)
_DOCUMENT = flags.DEFINE_boolean(
    "document",
    False,
    "The input is running text (paragraphs, documents): split into sentences, each translated, "
    "the output laid out as the input (spaces, line breaks, blank lines kept).",
)
_HTML = flags.DEFINE_boolean(
    "html",
    False,
    "--document: the input is HTML; its tags are kept, each placed in the translation by the "
    "word alignment (common/markup.py).",
)
_SOURCE_LANG = flags.DEFINE_string(
    "source_lang", "en", "--document: the source's language (ISO 639), for sentence splitting."
)
SWITCH_LANGUAGE = ":lang"
_PLOT_ATTENTION = flags.DEFINE_string(
    "plot_attention",
    None,
    "Save the last decoder layer's cross-attention heat maps of the (first) sentence to this "
    "SVG file (a browser shows it).",
)


def interactive(translator: Translator, request: TranslationRequest) -> None:
    """Reads sentences until Ctrl-D, or Ctrl-C at any moment (also mid-translation): exit 0. A
    line ":lang CODE" switches a multilingual model's target language."""
    try:
        print("Type a sentence and press Enter (Ctrl-D or Ctrl-C to quit).", file=sys.stderr)
        if translator.languages:
            print(
                f"Translating into {request.target_lang}; type '{SWITCH_LANGUAGE} CODE' to switch "
                f"({', '.join(translator.languages)}).",
                file=sys.stderr,
            )
        while True:
            try:
                line = input("> ")
            except EOFError:
                break
            if translator.languages and line.strip().startswith(SWITCH_LANGUAGE):
                request = switch_language(line, request, translator.languages)
                continue
            for warning in truncation_warnings(translator, [line], request):
                print(warning, file=sys.stderr)
            if _DOCUMENT.value:
                print(document_translation(translator, line, request), flush=True)
            elif _PLOT_ATTENTION.value:
                from inference.attention_plot import plot_cross_attention

                translation = plot_cross_attention(translator, line, _PLOT_ATTENTION.value, request)
                print(translation, flush=True)
                print(f"(attention heat maps saved to {_PLOT_ATTENTION.value})", file=sys.stderr)
            else:
                print(translations(translator, [line], request, progress=False), end="", flush=True)
    except KeyboardInterrupt:
        pass
    print(file=sys.stderr)


def plain(request: TranslationRequest) -> bool:
    """Whether the output is today's one translation a line (no n-best list, no scores)."""
    return (
        request.n_best == 1
        and not request.return_alternatives
        and not _WITH_SCORES.value
        and _OUTPUT_FORMAT.value == "text"
    )


def translations(
    translator: Translator,
    sentences: list[str],
    request: TranslationRequest,
    progress: bool,
) -> str:
    """The text ``translate.py`` writes for ``sentences``: a translation a line, or each
    sentence's hypotheses as --with_scores and --output_format ask, each with its alignment
    with --alignments."""
    kind, output_format = _ALIGNMENTS.value, _OUTPUT_FORMAT.value
    if plain(request):
        texts = translator.translate(sentences, request, _BATCH_SIZE.value, progress)
        lines = [one_line(text) for text in texts]
        if kind is not None:
            aligned = translator.align(sentences, texts, request, _BATCH_SIZE.value, progress)
            lines = [
                f"{line} ||| {alignment_output(alignment, kind, output_format)}"
                for line, alignment in zip(lines, aligned, strict=True)
            ]
        return "".join(line + "\n" for line in lines)
    rows = translator.hypotheses(sentences, request, _BATCH_SIZE.value, progress)
    alignments = [None] * len(rows)
    if kind is not None:
        sources = [sentence for sentence, row in zip(sentences, rows, strict=True) for _ in row]
        targets = [hypothesis.text for row in rows for hypothesis in row]
        aligned = iter(translator.align(sources, targets, request, _BATCH_SIZE.value, progress))
        alignments = [
            [alignment_output(next(aligned), kind, output_format) for _ in row] for row in rows
        ]
    return "".join(
        format_hypotheses(row, output_format, _WITH_SCORES.value, row_alignments)
        for row, row_alignments in zip(rows, alignments, strict=True)
    )


def switch_language(
    line: str, current: TranslationRequest, languages: tuple[str, ...]
) -> TranslationRequest:
    """``current`` into the target language a ":lang CODE" line asks for, or ``current`` (with
    a message on stderr) when CODE is not one of ``languages``."""
    requested = line.strip()[len(SWITCH_LANGUAGE) :].strip()
    try:
        language = check_language(requested or None, languages)
    except UnknownLanguageError as error:
        print(f"error: {error}", file=sys.stderr)
        return current
    print(f"Translating into {language}.", file=sys.stderr)
    return dataclasses.replace(current, target_lang=language)


def load_translator() -> Translator:
    """The translator of --workdir or an export (--saved_model, ...), checking the other flags."""
    _RUNTIME.check()
    if _RUNTIME.exported and _PLOT_ATTENTION.value:
        sys.exit("error: --plot_attention needs --workdir (the model's attention).")
    if _PLOT_ATTENTION.value and not _PLOT_ATTENTION.value.lower().endswith(".svg"):
        sys.exit(
            "error: --plot_attention writes an SVG image: give it a file name ending in .svg "
            f"(not {_PLOT_ATTENTION.value})."
        )
    if _RUNTIME.workdir.ensemble.value and _PLOT_ATTENTION.value:
        sys.exit("error: --plot_attention shows one model's attention; drop --ensemble.")
    return _RUNTIME.load()


def main(argv: list[str]) -> None:
    del argv
    translator = load_translator()
    if translator.languages and _TARGET_LANG.value is None:
        sys.exit(
            f"error: this model translates into {', '.join(translator.languages)}: choose one "
            "with --target_lang."
        )
    try:
        request = TranslationRequest(
            target_lang=_TARGET_LANG.value,
            n_best=_N_BEST.value,
            return_alternatives=_RETURN_ALTERNATIVES.value,
        )
        request.hypotheses_count(translator.beam_size)
    except RequestError as error:
        sys.exit(f"error: --n_best: {error}")
    try:
        request = dataclasses.replace(request, sampling=_SAMPLING.sampling())
        if request.sampling is not None and not plain(request):
            request.hypotheses_count(translator.beam_size)  # refused: sampling has no scores
    except RequestError as error:
        sys.exit(f"error: {error}")
    request.language(translator.languages)  # checked before reading the input
    if _TERMS.value is not None:
        request = with_glossary(request)
    if _DOCUMENT.value:
        check_document_flags(request)
    elif _HTML.value:
        sys.exit("error: --html reads a document's markup: give --document too.")
    if _INPUT.value is None:
        if _TARGET_PREFIX.value is not None:
            sys.exit("error: --target_prefix gives a line for each line of --input: give both.")
        if per_line_terms():
            sys.exit(
                f"error: --terms={_TERMS.value} gives a line for each line of --input: give both."
            )
        interactive(translator, request)
        return
    if _DOCUMENT.value:
        translate_document_file(translator, request)
        return
    translate_file(translator, request)


def per_line_terms() -> bool:
    """Whether --terms names a file of terms for each --input line (not a glossary)."""
    return _TERMS.value is not None and _TERMS.value.endswith(PER_LINE_TERMS)


def with_glossary(request: TranslationRequest) -> TranslationRequest:
    """``request`` with --terms' glossary (a per-line file is read with --input), after the
    checks --terms needs: a work directory or SavedModel (a CTranslate2 export: avoided
    phrases only), and the search (no sampling or alternatives)."""
    avoid_only = bool(_RUNTIME.ctranslate2.directory.value)
    if _RUNTIME.litert.value or (avoid_only and not per_line_terms()):
        sys.exit(
            "error: --terms needs --workdir or --saved_model (a CTranslate2 export avoids the "
            '"avoid" phrases of a --terms=FILE.jsonl only): LiteRT and CTranslate2 have no '
            "constrained search."
        )
    if request.sampling is not None or request.return_alternatives:
        sys.exit(
            "error: --terms are placed by the search: drop the sampling flags or "
            "--return_alternatives."
        )
    if per_line_terms():  # every line checked before the first is translated
        try:
            with open(_TERMS.value, encoding="utf-8-sig") as file:
                for number, line in enumerate(file, start=1):
                    (terms,) = terms_of_lines([line], number)
                    if avoid_only and terms.required:
                        sys.exit(
                            f"error: {_TERMS.value} line {number}: CTranslate2 has no "
                            'constrained search to place "terms" (it avoids phrases only).'
                        )
        except FileNotFoundError:
            sys.exit(f"error: no such file: {_TERMS.value}")
        except UnicodeDecodeError as error:
            sys.exit(f"error: {_TERMS.value} is not UTF-8 text ({error.reason}).")
        return request
    return dataclasses.replace(request, glossary=Glossary.read(_TERMS.value))


def terms_of_lines(lines: list[str], first_line: int) -> list[Terms]:
    """A --terms .jsonl file's lines (numbered from ``first_line``) as each line's Terms; an
    empty line: none. Exits with the file and line of one that is not such JSON."""
    terms = []
    for number, line in enumerate(lines, start=first_line):
        try:
            terms.append(Terms.from_fields(json.loads(line)) if line.strip() else Terms())
        except (ValueError, RequestError) as error:
            sys.exit(f"error: {_TERMS.value} line {number}: {error}")
    return terms


def check_document_flags(request: TranslationRequest) -> None:
    """Exits with a one-line error for a flag --document cannot take: a document is written
    back as text, a translation in each sentence's place."""
    given = [
        name
        for name, wrong in (
            ("--n_best", request.n_best > 1 or request.return_alternatives),
            ("--with_scores", _WITH_SCORES.value),
            ("--output_format=jsonl", _OUTPUT_FORMAT.value != "text"),
            ("--alignments", _ALIGNMENTS.value is not None),
            ("--target_prefix", _TARGET_PREFIX.value is not None),
            ("--terms=FILE.jsonl (a glossary it can take)", per_line_terms()),
            ("--plot_attention", _PLOT_ATTENTION.value is not None),
        )
        if wrong
    ]
    if given:
        sys.exit(
            f"error: --document writes the text back with a translation in each sentence's "
            f"place; it cannot take {' or '.join(given)}."
        )


def document_translation(translator: Translator, text: str, request: TranslationRequest) -> str:
    """``text`` translated as a document (:func:`common.documents.translate_document`)."""
    from common.documents import translate_document

    return translate_document(
        translator,
        text,
        request,
        _SOURCE_LANG.value,
        _BATCH_SIZE.value,
        progress=False,
        markup=_HTML.value,
    )


def translate_document_file(translator: Translator, request: TranslationRequest) -> None:
    """--input (a file, or '-': standard input) translated as one document into --output
    (written atomically) or standard output."""
    if _INPUT.value == STDIO:
        text = sys.stdin.read().removeprefix("\ufeff")  # a byte-order mark is no text
    else:
        try:
            with open(_INPUT.value, encoding="utf-8-sig") as file:
                text = file.read()
        except FileNotFoundError:
            sys.exit(f"error: no such file: {_INPUT.value}")
        except UnicodeDecodeError as error:
            sys.exit(
                f"error: {_INPUT.value} is not UTF-8 text ({error.reason} at byte {error.start})."
            )
    translation = document_translation(translator, text, request)
    if _OUTPUT.value is None or _OUTPUT.value == STDIO:
        sys.stdout.write(translation)
    else:
        atomic_write_text(_OUTPUT.value, translation)


def translate_file(translator: Translator, request: TranslationRequest) -> None:
    """Translates --input (with --target_prefix's lines) into --output a window of lines at a
    time: resumed where an interrupted run of the same command stopped
    (:mod:`cli.streaming`)."""
    inputs = [_INPUT.value] + ([_TARGET_PREFIX.value] if _TARGET_PREFIX.value else [])
    inputs += [_TERMS.value] if per_line_terms() else []

    def translate_window(first_line: int, columns: list[list[str]]) -> str:
        sentences, request_of_window = columns[0], request
        if _TARGET_PREFIX.value is not None:
            request_of_window = dataclasses.replace(request, target_prefix=columns[1])
        if per_line_terms():
            terms = terms_of_lines(columns[-1], first_line)
            request_of_window = dataclasses.replace(request_of_window, terms=terms)
        for warning in truncation_warnings(translator, sentences, request_of_window, first_line):
            tqdm.write(warning, file=sys.stderr)
        if _PLOT_ATTENTION.value and first_line == 1:
            from inference.attention_plot import plot_cross_attention

            plot_cross_attention(translator, sentences[0], _PLOT_ATTENTION.value, request_of_window)
        return translations(translator, sentences, request_of_window, progress=False)

    stream_lines(
        inputs,
        _OUTPUT.value,
        translate_window,
        script_options("input", "output", "resume", "plot_attention"),
        _WINDOW.value,
        _RESUME.value,
        progress=_INPUT.value != STDIO,
    )


if __name__ == "__main__":
    run_main(main)
