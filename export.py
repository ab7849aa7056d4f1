"""Exports a trained model: ``python export.py --workdir=DIR --output=DIR/saved_model``.

The SavedModel's ``serving_default`` signature maps ``text`` (tf.string [None]) to
``translation`` (tf.string [None]); see inference/export.py.
"""

from absl import flags

from cli import define_translator_flags, run_main
from inference.export import export_saved_model

_TRANSLATOR = define_translator_flags()
_OUTPUT = flags.DEFINE_string("output", None, "SavedModel directory to write.", required=True)


def main(argv: list[str]) -> None:
    del argv
    translator, checkpoint = _TRANSLATOR.load()
    path = export_saved_model(translator, _OUTPUT.value)
    print(
        f"Exported {checkpoint} (beam {translator.beam_size}) to {path}.\n"
        f"Translate with it:  python translate.py --saved_model={path}\n"
        f"Inspect it:         saved_model_cli show --dir {path} --all"
    )


if __name__ == "__main__":
    run_main(main)
