"""Translates text with a trained work directory or an exported SavedModel.

python translate.py --workdir=DIR                       # interactive: a sentence a line
python translate.py --workdir=DIR --input=in.txt --output=out.txt
python translate.py --saved_model=DIR --input=-         # standard input to standard output
python translate.py --workdir=DIR --plot_attention=attention.png   # then type a sentence
"""

from __future__ import annotations

import sys

from absl import flags

from cli import define_translator_flags, run_main
from inference.loading import SavedModelTranslator

_WORKDIR, load_translator = define_translator_flags(workdir_required=False)
_SAVED_MODEL = flags.DEFINE_string("saved_model", None, "Exported SavedModel directory.")
_INPUT = flags.DEFINE_string("input", None, "File of sentences, one a line ('-': stdin).")
_OUTPUT = flags.DEFINE_string("output", None, "File for the translations (default: stdout).")
_BATCH_SIZE = flags.DEFINE_integer("batch_size", 64, "Sentences per batch.")
_PLOT_ATTENTION = flags.DEFINE_string(
    "plot_attention",
    None,
    "Save the last decoder layer's cross-attention heat maps of the "
    "(first) sentence to this PNG file.",
)


def read_lines(path: str) -> list[str]:
    """Lines of a file or stdin; undecodable bytes become U+FFFD instead of an error."""
    data = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()  # noqa: SIM115
    return data.decode("utf-8", errors="replace").splitlines()


def warn_truncated(translator, sentences: list[str]) -> None:
    limit = translator.max_source_length - 1
    for number, length in enumerate(translator.source_lengths(sentences), 1):
        if length > limit:
            print(
                f"warning: sentence {number} has {length} tokens; only the first {limit} are "
                "translated.",
                file=sys.stderr,
            )


def interactive(translator) -> None:
    """Reads sentences until Ctrl-D, or Ctrl-C at any moment (also mid-translation): exit 0."""
    try:
        print("Type a sentence and press Enter (Ctrl-D or Ctrl-C to quit).", file=sys.stderr)
        while True:
            try:
                line = input("> ")
            except EOFError:
                break
            if hasattr(translator, "source_lengths"):
                warn_truncated(translator, [line])
            if _PLOT_ATTENTION.value:
                from inference.attention_plot import plot_cross_attention

                print(plot_cross_attention(translator, line, _PLOT_ATTENTION.value), flush=True)
                print(f"(attention heat maps saved to {_PLOT_ATTENTION.value})", file=sys.stderr)
            else:
                print(translator.translate([line], progress=False)[0], flush=True)
    except KeyboardInterrupt:
        pass
    print(file=sys.stderr)


def main(argv: list[str]) -> None:
    del argv
    if bool(_WORKDIR.value) == bool(_SAVED_MODEL.value):
        sys.exit(
            "error: give exactly one of --workdir (a training work directory) or "
            "--saved_model (an exported SavedModel)."
        )
    if _SAVED_MODEL.value:
        if (
            flags.FLAGS.beam_size
            or flags.FLAGS.length_penalty is not None
            or flags.FLAGS.ensemble
            or _PLOT_ATTENTION.value
        ):
            sys.exit(
                "error: --beam_size, --length_penalty, --ensemble and --plot_attention need "
                "--workdir; a SavedModel's models and decoding options are fixed when it is "
                "exported."
            )
        translator = SavedModelTranslator(_SAVED_MODEL.value)
    elif flags.FLAGS.ensemble and _PLOT_ATTENTION.value:
        sys.exit("error: --plot_attention shows one model's attention; drop --ensemble.")
    else:
        translator, _ = load_translator()
    if _INPUT.value is None:
        interactive(translator)
        return
    sentences = read_lines(_INPUT.value)
    if hasattr(translator, "source_lengths"):
        warn_truncated(translator, sentences)
    if _PLOT_ATTENTION.value and sentences:
        from inference.attention_plot import plot_cross_attention

        plot_cross_attention(translator, sentences[0], _PLOT_ATTENTION.value)
    translations = translator.translate(
        sentences, batch_size=_BATCH_SIZE.value, progress=_INPUT.value != "-"
    )
    text = "".join(line + "\n" for line in translations)
    if _OUTPUT.value:
        with open(_OUTPUT.value, "w", encoding="utf-8") as file:
            file.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    run_main(main)
