"""evaluate.py, export.py and translate.py on the tiny trained work directory.

Each script runs once or twice as a program (a subprocess); the rest of its behaviour is tested
in this process (``tests.script_runner.run_in_process``), which is the same code without a second
TensorFlow start.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from xml.etree import ElementTree

import pytest
import tensorflow as tf

import data_pipeline
from data_pipeline import Tokenizer
from exports.saved_model import SavedModelTranslator
from inference.evaluation import read_split
from inference.loading import load_translator
from inference.multi30k_bleu import LABEL, moses_preprocess
from rundir.config import load_config
from tests.script_runner import REPO_ROOT, default_signal_handling, run_in_process, run_script

PYTHON_BIN = Path(sys.executable).parent
BAD_INPUTS = ["", "   ", "x" * 5000, "\x00\x07 control", "日本語 😀 テスト", "Ein Hund rennt."]

DE_EN = data_pipeline.spec.parse("multi30k/de-en").corpus


@pytest.fixture(scope="module")
def workdir(tiny_run) -> str:
    return tiny_run[0]


@pytest.fixture(scope="module")
def xla_saved_model(workdir, tmp_path_factory) -> str:
    """export.py as a program, with the search compiled by XLA (``tiny_saved_model``, the same
    checkpoint, has the graph search)."""
    output = str(tmp_path_factory.mktemp("xla") / "saved_model")
    completed = run_script(
        "export.py", f"--workdir={workdir}", f"--output={output}", "--jit_compile"
    )
    assert completed.returncode == 0, completed.stderr
    assert f"Translate with it:  python translate.py --saved_model={output}" in completed.stdout
    return output


@pytest.fixture(scope="module")
def evaluated(workdir) -> str:
    """What ``evaluate.py --workdir=W --split=test2016`` prints on the tiny run."""
    completed = run_script("evaluate.py", f"--workdir={workdir}", "--split=test2016")
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


def sacrebleu_command(*args: str):
    """The scores (JSON) the ``sacrebleu`` command prints with ``args``, to 2 decimals."""
    command = subprocess.run(
        [str(PYTHON_BIN / "sacrebleu"), *args, "-w", "2"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(command.stdout)


def bleu_line(score: dict) -> str:
    return f"BLEU = {score['score']:.2f} {score['verbose_score']} (signature: {score['signature']})"


def assert_prints_what_the_sacrebleu_command_prints(printed: str, eval_dir: Path) -> None:
    """``printed`` (evaluate.py's output on test2016) has the BLEU, chrF and lower-cased BLEU
    lines that the ``sacrebleu`` command prints on the files it wrote in ``eval_dir``."""
    assert "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0" in printed
    hypotheses = eval_dir / "multi30k_de-en.test2016.beam1.hyp"
    references = eval_dir / "multi30k_de-en.test2016.ref"
    assert hypotheses.read_text().count("\n") == references.read_text().count("\n") == 1000
    bleu, chrf = sacrebleu_command(str(references), "-i", str(hypotheses), "-m", "bleu", "chrf")
    assert bleu_line(bleu) in printed
    assert f"chrF2 = {chrf['score']:.2f} (signature: {chrf['signature']})" in printed
    lowercase_bleu = sacrebleu_command(str(references), "-i", str(hypotheses), "-lc")
    assert "case:lc" in lowercase_bleu["signature"]
    assert f"lower-cased {bleu_line(lowercase_bleu)}" in printed


def test_evaluate_prints_the_score_the_sacrebleu_command_prints(workdir, evaluated):
    assert_prints_what_the_sacrebleu_command_prints(evaluated, Path(workdir, "eval"))


def lines_of(path: Path) -> list[str]:
    """A (gzipped or plain) UTF-8 file's lines, split on "\\n" only."""
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode().split("\n")[:-1]


def test_evaluate_prints_the_papers_bleu_of_the_data_sets_own_file(
    workdir, evaluated, multi30k_dir, tmp_path
):
    eval_dir = Path(workdir, "eval")
    data_set_file = tmp_path / "test_2016_flickr.lc.norm.tok.en"
    data_set_file.write_bytes(
        gzip.decompress(Path(multi30k_dir, "tok", data_set_file.name + ".gz").read_bytes())
    )
    tokenized = eval_dir / "multi30k_de-en.test2016.beam1.lc.norm.tok.hyp"
    written_references = eval_dir / "multi30k_de-en.test2016.lc.norm.tok.ref"
    assert written_references.read_bytes() == data_set_file.read_bytes()
    # Line N of the tokenized hypotheses translates line N of the raw files.
    translation_of = dict(
        zip(
            lines_of(eval_dir / "multi30k_de-en.test2016.ref"),  # TFDS's order, as the
            lines_of(eval_dir / "multi30k_de-en.test2016.beam1.hyp"),  # hypotheses.
            strict=True,
        )
    )
    assert len(translation_of) == 1000  # test2016's English sentences are all different.
    raw_english = lines_of(Path(multi30k_dir, "test_2016_flickr.en.gz"))
    assert lines_of(tokenized) == moses_preprocess(
        [translation_of[sentence] for sentence in raw_english], "en"
    )
    tokenized_bleu = sacrebleu_command(
        str(data_set_file), "-i", str(tokenized), "--tokenize", "none"
    )
    assert "|tok:none|" in tokenized_bleu["signature"]
    assert f"{LABEL}: {bleu_line(tokenized_bleu)}" in evaluated.splitlines()


# How much longer the 5,000-character line (BAD_INPUTS[2]) may take to translate than the part
# of it that the model reads (data.max_length - 1 pieces), each timed at its fastest of 7 calls,
# in turn, in one process: 0.8 to 2.7 measured (graph and XLA search) with three such processes
# at once on 2 shared cores; 6.6 (graph search) when the model reads all of its 5,001 pieces.
LONG_LINE_MAX_SLOWDOWN = 4


def what_the_model_reads(workdir: str, sentence: str) -> str:
    """The part of ``sentence`` that ``workdir``'s model reads: its first data.max_length - 1
    pieces (then EOS), as text."""
    tokenizer = Tokenizer.from_file(os.path.join(workdir, "spm.model"))
    max_length = load_config(workdir).data.max_length
    pieces = tokenizer.tokenize(tf.constant([sentence]))[:, : max_length - 1]
    return tokenizer.detokenize(pieces).numpy()[0].decode()


def serve_in_a_fresh_process(read_of_the_long_line: str, *saved_models: str) -> list[list[str]]:
    """Translates BAD_INPUTS (and invalid UTF-8) with each SavedModel in a process that imports
    only tensorflow and tensorflow_text; in one batch of 7 and in one of 14 (in an XLA export,
    the XLA and the graph search), the same. The 5,000-character line translates as
    ``read_of_the_long_line`` (the part of it the model reads) does, in at most
    LONG_LINE_MAX_SLOWDOWN times as long."""
    program = textwrap.dedent(f"""
        import json, sys, time, tensorflow as tf, tensorflow_text
        text = tf.constant({BAD_INPUTS!r} + [b"\\xff\\xfe invalid utf-8"])
        lines = [tf.constant([{BAD_INPUTS[2]!r}]), tf.constant([{read_of_the_long_line!r}])]
        translations, seconds = [], []
        for path in {list(saved_models)!r}:
            serve = tf.saved_model.load(path).signatures["serving_default"]
            out = serve(text=text)["translation"]
            assert out.shape == (text.shape[0],), out.shape
            twice = serve(text=tf.concat([text, text], 0))["translation"].numpy().tolist()
            assert twice == out.numpy().tolist() * 2
            translations.append([t.decode("utf-8", "replace") for t in out.numpy()[:-1]])
            long_line, read = [serve(text=line)["translation"].numpy().tolist() for line in lines]
            assert long_line == read, (long_line, read)
            times = [[], []]
            for _ in range(7):
                for line, line_times in zip(lines, times):
                    started = time.perf_counter()
                    serve(text=line)["translation"].numpy()
                    line_times.append(time.perf_counter() - started)
            seconds.append([min(line_times) for line_times in times])
        assert not [m for m in sys.modules if m.split(".")[0] in
                    ("transformer", "data_pipeline", "decoding", "training", "inference")]
        print(json.dumps({{"translations": translations, "seconds": seconds}}))
    """)
    completed = subprocess.run(
        [sys.executable, "-c", program], cwd="/", capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stderr
    output = json.loads(completed.stdout)
    for path, (long_line, read) in zip(saved_models, output["seconds"], strict=True):
        assert long_line < LONG_LINE_MAX_SLOWDOWN * read, (
            f"{path}: the 5,000-character line took {long_line:.4f} s, the part of it that the "
            f"model reads {read:.4f} s"
        )
    return output["translations"]


@pytest.fixture(scope="module")
def served_translations(workdir, tiny_saved_model, xla_saved_model) -> dict[str, list[str]]:
    """BAD_INPUTS translated in a fresh process by the SavedModel with each search."""
    read = what_the_model_reads(workdir, BAD_INPUTS[2])
    graph, xla = serve_in_a_fresh_process(read, tiny_saved_model, xla_saved_model)
    return {"graph": graph, "xla": xla}


def test_saved_models_with_and_without_the_xla_compiled_search_serve_the_same(
    served_translations,
):
    assert served_translations["xla"] == served_translations["graph"]


def test_saved_model_runs_with_only_tensorflow_and_tensorflow_text(
    served_translations, tiny_saved_model, workdir
):
    # translate.py on the same checkpoint, and on the SavedModel: the same translations, and a
    # warning that the 5,000-character line (sentence 3) is truncated.
    stdin = "".join(f"{line}\n" for line in BAD_INPUTS)
    for model_flag in (f"--workdir={workdir}", f"--saved_model={tiny_saved_model}"):
        completed = run_in_process("translate.py", model_flag, "--input=-", stdin=stdin)
        assert completed.returncode == 0, completed.stderr
        assert completed.stdout.splitlines() == served_translations["graph"]
        assert completed.stderr.count("warning: sentence") == 1
        assert "warning: sentence 3 has" in completed.stderr


def test_saved_model_cli_lists_the_signature(tiny_saved_model):
    completed = subprocess.run(
        [
            str(PYTHON_BIN / "saved_model_cli"),
            "show",
            "--dir",
            tiny_saved_model,
            "--tag_set",
            "serve",
            "--signature_def",
            "serving_default",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    assert "inputs['text']" in completed.stdout and "outputs['translation']" in completed.stdout
    assert "DT_STRING" in completed.stdout


def test_translate_files_keep_order_and_saved_model_matches(workdir, tiny_saved_model, tmp_path):
    source = tmp_path / "in.txt"
    source.write_bytes("Ein Hund rennt.\n\nZwei Männer spielen.\n".encode() + b"\xff bad\n")
    outputs = {}
    for name, flag in (
        ("workdir", f"--workdir={workdir}"),
        ("saved_model", f"--saved_model={tiny_saved_model}"),
    ):
        target = tmp_path / f"{name}.txt"
        completed = run_in_process("translate.py", flag, f"--input={source}", f"--output={target}")
        assert completed.returncode == 0, completed.stderr
        outputs[name] = target.read_text().splitlines()
    assert len(outputs["workdir"]) == 4
    assert outputs["workdir"] == outputs["saved_model"]
    alone = run_in_process(
        "translate.py", f"--workdir={workdir}", "--input=-", stdin="Zwei Männer spielen.\n"
    )
    assert alone.stdout.splitlines() == [outputs["workdir"][2]]  # same alone as in a batch


def test_translate_document_keeps_the_layout_in_every_runtime(workdir, tiny_saved_model, tmp_path):
    """--document: each sentence translated as translate.py translates it alone, in its place;
    spaces, line breaks and blank lines as in the input (file and standard input alike)."""
    from common.documents import split_document

    text = "Ein Hund rennt.  Zwei Männer spielen Fußball!\n\n  Eine Frau liest.\nEnde\n"
    source = tmp_path / "doc.de"
    source.write_text(text, encoding="utf-8-sig")  # a byte-order mark first, as Windows writes
    document = split_document(text, "de")
    sentences = run_in_process(
        "translate.py",
        f"--workdir={workdir}",
        "--input=-",
        stdin="\ufeff" + "\n".join(document.sentences),
    ).stdout.splitlines()
    for flag in (f"--workdir={workdir}", f"--saved_model={tiny_saved_model}"):
        target = tmp_path / "doc.en"
        completed = run_in_process(
            "translate.py", flag, "--document", "--source_lang=de", f"--input={source}",
            f"--output={target}",
        )  # fmt: skip
        assert completed.returncode == 0, completed.stderr
        assert target.read_text(encoding="utf-8") == document.joined(sentences)
    piped = run_in_process(
        "translate.py", f"--workdir={workdir}", "--document", "--input=-", stdin="\ufeff" + text
    )
    assert piped.stdout == document.joined(sentences)
    refused = run_in_process(
        "translate.py",
        f"--workdir={workdir}",
        "--document",
        "--n_best=1",
        "--alignments=hard",
        f"--input={source}",
    )
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines()[-1] == (
        "error: --document writes the text back with a translation in each sentence's place; it "
        "cannot take --alignments."
    )
    # HTML: its tags placed by the word alignments, as common.documents places them.
    from common.documents import translate_document
    from inference.loading import load_translator

    page = "<p>Ein <b>Hund</b> rennt.</p>\n<p>Eine Frau <i>liest</i>.<br>Ende</p>\n"
    source.write_text(page, encoding="utf-8")
    translator, _ = load_translator(workdir, "best")
    expected = translate_document(translator, page, language="de", markup=True)
    tagged = run_in_process(
        "translate.py", f"--workdir={workdir}", "--document", "--html", "--source_lang=de",
        f"--input={source}",
    )  # fmt: skip
    assert tagged.returncode == 0, tagged.stderr
    assert tagged.stdout == expected and expected.count("<") == page.count("<")
    refused = run_in_process("translate.py", f"--workdir={workdir}", "--html", f"--input={source}")
    assert refused.stderr.strip().splitlines()[-1] == (
        "error: --html reads a document's markup: give --document too."
    )


def test_translate_continues_an_interrupted_file_to_an_uninterrupted_runs_output(
    workdir, tiny_saved_model, tmp_path, monkeypatch
):
    source = tmp_path / "in.txt"
    source.write_text("".join(f"{s}\n" for s in BAD_INPUTS * 2), encoding="utf-8")
    model = f"--saved_model={tiny_saved_model}"
    whole, output = tmp_path / "whole.txt", tmp_path / "out.txt"
    completed = run_in_process("translate.py", model, f"--input={source}", f"--output={whole}")
    assert completed.returncode == 0, completed.stderr
    translate = SavedModelTranslator.translate
    calls = []

    def stopped_on_the_third_window(self, sentences, *args, **kwargs):
        calls.append(len(sentences))
        if len(calls) == 3:
            raise KeyboardInterrupt  # Ctrl-C; a kill -9 is benchmarks/translate_file.py's
        return translate(self, sentences, *args, **kwargs)

    monkeypatch.setattr(SavedModelTranslator, "translate", stopped_on_the_third_window)
    arguments = [model, f"--input={source}", f"--output={output}", "--window=5"]
    stopped = run_in_process("translate.py", *arguments)
    assert stopped.returncode == 130 and not output.exists()
    assert "holds the first 10 lines; run the same command again to continue" in stopped.stderr
    continued = run_in_process("translate.py", *arguments)
    assert continued.returncode == 0, continued.stderr
    assert "Continuing" in continued.stderr and calls[3:] == [2]
    assert output.read_bytes() == whole.read_bytes()


def test_interactive_translate_plots_and_exits_cleanly_on_eof(workdir, tmp_path):
    plot = tmp_path / "attention.svg"
    completed = run_in_process(
        "translate.py",
        f"--workdir={workdir}",
        f"--plot_attention={plot}",
        stdin="Ein Hund rennt.\n",
    )
    assert completed.returncode == 0 and "Traceback" not in completed.stderr
    assert completed.stdout.startswith("> ")
    svg = ElementTree.parse(plot).getroot()
    heads = json.loads(Path(workdir, "config.json").read_text())["model"]["num_heads"]
    labels = list(svg.iter("{http://www.w3.org/2000/svg}text"))
    assert [t.text for t in labels if t.text.startswith("head ")] == [
        f"head {head + 1}" for head in range(heads)
    ]
    source = "".join(t.text for t in labels if "rotate" in t.get("transform", ""))
    assert source.replace("▁", " ").strip().startswith("Ein Hund rennt.")

    png = run_in_process("translate.py", f"--workdir={workdir}", "--plot_attention=a.png")
    assert png.returncode == 1 and "Traceback" not in png.stderr
    assert "--plot_attention writes an SVG image: give it a file name ending in .svg" in png.stderr


def read_stderr_until(
    process: subprocess.Popen, text: str, timeout: float
) -> tuple[list[str], threading.Thread]:
    """Reads ``process``'s standard error on a thread until a line holds ``text``, then on to
    its end (so that the pipe never fills up); fails the test, showing what it read, when no
    line holds ``text`` within ``timeout`` seconds or the stream ends first. Returns the lines,
    which the thread goes on filling, and the thread, to join once the process has ended."""
    lines, seen = [], threading.Event()

    def read() -> None:
        for line in process.stderr:
            lines.append(line)
            if text in line:
                seen.set()
        seen.set()  # the end of the stream, with or without ``text``

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    ended = seen.wait(timeout) and not any(text in line for line in lines)
    if ended or not seen.is_set():
        process.kill()
        when = "before its standard error ended" if ended else f"within {timeout} s"
        pytest.fail(f"No line holds {text!r} {when}; standard error:\n{''.join(lines)}")
    return lines, reader


def test_interactive_translate_exits_cleanly_on_ctrl_c(workdir):
    process = subprocess.Popen(
        [sys.executable, "translate.py", f"--workdir={workdir}"],
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_signal_handling,
    )
    with process:  # (closes the pipes and waits, whatever happens)
        try:
            lines, reader = read_stderr_until(process, "Type a sentence and press Enter", 120)
            process.send_signal(signal.SIGINT)
            returncode = process.wait(timeout=60)
            reader.join(timeout=60)
        finally:
            process.kill()  # (nothing once it has ended)
    stderr = "".join(lines)
    assert not reader.is_alive(), stderr
    assert returncode == 0 and "Traceback" not in stderr, stderr


def test_bad_workdir_is_a_clear_error(tmp_path):
    completed = run_in_process("translate.py", f"--workdir={tmp_path}", "--input=-", stdin="x\n")
    assert completed.returncode != 0
    assert "is not a training work directory" in completed.stderr
    assert "Traceback" not in completed.stderr
    assert os.listdir(tmp_path) == []


def test_ensemble_errors_are_one_line(workdir, tiny_saved_model, workdir_with_another_tokenizer):
    ensemble = f"--ensemble={workdir}"
    for args, message in [
        ([f"--workdir={workdir}", f"--ensemble={workdir_with_another_tokenizer}"], "differs"),
        ([f"--saved_model={tiny_saved_model}", ensemble], "--ensemble needs --workdir"),
        ([f"--workdir={workdir}", ensemble, "--plot_attention=a.svg"], "drop --ensemble"),
    ]:
        completed = run_in_process("translate.py", *args, "--input=-", stdin="Ein Hund.\n")
        assert completed.returncode != 0 and message in completed.stderr, completed.stderr
        assert "Traceback" not in completed.stderr


def test_translate_with_an_ensemble_writes_the_ensembles_translations(
    workdir, tiny_run_at_its_first_checkpoint
):
    earlier = tiny_run_at_its_first_checkpoint
    sentences = ["Ein Hund rennt.", "Zwei Männer spielen Fußball.", "Eine Frau liest ein Buch."]
    ensemble, _ = load_translator(workdir, ensemble=[earlier])
    expected = ensemble.translate(sentences, progress=False)
    for member in (workdir, earlier):  # (without --ensemble, the first alone)
        assert load_translator(member)[0].translate(sentences, progress=False) != expected
    completed = run_in_process(
        "translate.py",
        f"--workdir={workdir}",
        f"--ensemble={earlier}",
        "--input=-",
        stdin="".join(f"{sentence}\n" for sentence in sentences),
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines() == expected


def test_evaluate_with_an_ensemble_scores_the_ensembles_translations(
    workdir, tiny_run_at_its_first_checkpoint
):
    earlier = tiny_run_at_its_first_checkpoint
    completed = run_in_process("evaluate.py", f"--workdir={earlier}", f"--ensemble={workdir}")
    assert completed.returncode == 0, completed.stderr
    ensemble, _ = load_translator(earlier, ensemble=[workdir])
    checkpoints = [
        tf.train.latest_checkpoint(f"{earlier}/checkpoints"),
        tf.train.latest_checkpoint(f"{workdir}/best"),
    ]
    assert completed.stdout.startswith(
        f"Evaluating {', '.join(checkpoints)} on multi30k/de-en test2016 (beam "
        f"{ensemble.beam_size}, length penalty {ensemble.options.length_penalty}).\n"
    )
    eval_dir = Path(earlier, "eval", "ensemble")
    sources, _ = read_split(DE_EN, "test2016", load_config(workdir).data.data_dir)
    hypotheses = lines_of(eval_dir / f"multi30k_de-en.test2016.beam{ensemble.beam_size}.hyp")
    assert hypotheses == ensemble.translate(sources, progress=False)
    assert_prints_what_the_sacrebleu_command_prints(completed.stdout, eval_dir)
    assert f"\n{LABEL}: BLEU = " in completed.stdout  # (and the papers' BLEU)
