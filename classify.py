"""Labels texts with a trained classifier (``configs/spam_assassin.py``): translate.py's sibling.

python classify.py --workdir=DIR                          # interactive: a text a line
python classify.py --workdir=DIR --input=texts.txt --output=labels.tsv   # "label<TAB>score"
python classify.py --workdir=DIR --message=mail.eml --plot_attention=mail.svg   # a raw message
python classify.py --workdir=DIR --plot_attention=text.svg                # then type a text

Each output line is the label and its probability, tab-separated (``--with_probabilities``: each
label's probability after them, in the order of the labels). A file is classified --window lines
at a time into OUTPUT.partial and resumed after an interruption, as translate.py's files are
(cli/streaming.py). ``--message`` reads one raw mail message (headers, MIME parts, HTML) as the
SpamAssassin corpus is read for training: its subject and body. ``--plot_attention`` draws what
each head of the last layer attended to in the text (the first line of --input, the message, or
each typed text) as an SVG heat map.

A sibling, not a ``--classify`` mode of translate.py: none of translate.py's options (beam,
prefixes, terms, documents, exports) applies to a classifier, and its output (a label and a score)
is not a translation's.
"""

from __future__ import annotations

import sys

from absl import flags

from cli.errors import run_main
from cli.streaming import STDIO, WINDOW, script_options, stream_lines
from common.files import atomic_write_text
from data_pipeline.labelled_text import message_text
from inference.attention_plot import text_attention_svg
from inference.classifier import Classified, Classifier, load_classifier
from rundir.checkpoints import CHECKPOINT_CHOICES

_WORKDIR = flags.DEFINE_string("workdir", None, "A classifier's work directory.", required=True)
_CHECKPOINT = flags.DEFINE_enum(
    "checkpoint", "best", CHECKPOINT_CHOICES, "Which checkpoint of the work directory to use."
)
_INPUT = flags.DEFINE_string("input", None, "File of texts, one a line ('-': stdin).")
_OUTPUT = flags.DEFINE_string("output", None, "File for the labels (default: stdout).")
_MESSAGE = flags.DEFINE_string(
    "message", None, "A raw mail message file to classify (its subject and body)."
)
_PLOT_ATTENTION = flags.DEFINE_string(
    "plot_attention", None, "Write the attention heat map of a text to this SVG file."
)
_WITH_PROBABILITIES = flags.DEFINE_boolean(
    "with_probabilities", False, "After the label and its score, every label's probability."
)
_WINDOW = flags.DEFINE_integer("window", WINDOW, "Lines of --input read and labelled at a time.")
_RESUME = flags.DEFINE_boolean(
    "resume", True, "Continue an interrupted --output file (--noresume: start over)."
)


def output_line(result: Classified) -> str:
    """``"spam\\t0.9981"`` (with every label's probability under --with_probabilities)."""
    fields = [result.label, f"{result.score:.4f}"]
    if _WITH_PROBABILITIES.value:
        fields += [f"{probability:.4f}" for probability in result.probabilities.values()]
    return "\t".join(fields)


def plot(classifier: Classifier, text: str, result: Classified) -> None:
    attention = classifier.attention(text)
    title = (
        f"{result.label} ({result.score:.4f}): what each head of the last layer attended to "
        f"({len(attention.pieces)} pieces read)"
    )
    svg = text_attention_svg(attention.pieces, attention.weights, title)
    atomic_write_text(_PLOT_ATTENTION.value, svg)
    print(f"(attention heat map saved to {_PLOT_ATTENTION.value})", file=sys.stderr)


def interactive(classifier: Classifier) -> None:
    """Reads texts until Ctrl-D, or Ctrl-C at any moment: exit 0."""
    print(
        f"Type a text and press Enter (labels: {', '.join(classifier.labels)}; Ctrl-D or Ctrl-C "
        "to quit).",
        file=sys.stderr,
    )
    try:
        while True:
            try:
                line = input("> ")
            except EOFError:
                break
            (result,) = classifier.classify([line])
            print(output_line(result), flush=True)
            if _PLOT_ATTENTION.value:
                plot(classifier, line, result)
    except KeyboardInterrupt:
        pass
    print(file=sys.stderr)


def classify_file(classifier: Classifier) -> None:
    def classify_window(first_line: int, columns: list[list[str]]) -> str:
        results = classifier.classify(columns[0])
        if _PLOT_ATTENTION.value and first_line == 1 and columns[0]:
            plot(classifier, columns[0][0], results[0])
        return "".join(output_line(result) + "\n" for result in results)

    stream_lines(
        [_INPUT.value],
        _OUTPUT.value,
        classify_window,
        script_options("input", "output", "resume", "plot_attention"),
        _WINDOW.value,
        _RESUME.value,
        progress=_INPUT.value != STDIO,
        unit="text",
    )


def main(argv: list[str]) -> None:
    del argv
    if _PLOT_ATTENTION.value and not _PLOT_ATTENTION.value.lower().endswith(".svg"):
        sys.exit("error: --plot_attention writes an SVG image: give a file name ending in .svg.")
    if _MESSAGE.value and _INPUT.value:
        sys.exit("error: give --message (one mail message) or --input (a text a line), not both.")
    classifier, checkpoint = load_classifier(_WORKDIR.value, _CHECKPOINT.value)
    print(f"Classifying with {checkpoint}.", file=sys.stderr)
    if _MESSAGE.value:
        with open(_MESSAGE.value, "rb") as file:
            text = message_text(file.read())
        (result,) = classifier.classify([text])
        print(output_line(result))
        if _PLOT_ATTENTION.value:
            plot(classifier, text, result)
    elif _INPUT.value is None:
        interactive(classifier)
    else:
        classify_file(classifier)


if __name__ == "__main__":
    run_main(main)
