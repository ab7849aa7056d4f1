"""Scripts start quietly on a CPU-only machine: TensorFlow's start-up lines are filtered from
stderr, errors still shown."""

import subprocess
import sys

import pytest

from cli.quiet import is_noise
from tests.script_runner import REPO_ROOT


@pytest.mark.parametrize(
    "line",
    [
        b"WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
        b"I0000 00:00:1795737656.179784   15546 port.cc:153] oneDNN custom operations are on.",
        b"W0000 00:00:1795737656.2   15546 cpu_feature_guard.cc:227] This TensorFlow binary",
        b"W1206 18:12:02.734034 140479725071232 deprecation.py:50] From a TensorFlow module",
        b"I1206 18:12:02.734135 140479725071232 batching.py:237] make_batches: filtered 0 of",
        b"E0000 00:00:1795737658.6 15546 cuda_platform.cc:52] failed call to cuInit: INTERNAL: "
        b"CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)",
        b"E0000 00:00:1795.1 15 util.cc:131] oneDNN supports DT_INT64 only on platforms with "
        b"AVX-512. Falling back to the default Eigen-based implementation if present.",
        b"2025-09-17 14:44:05.157831: I external/local_xla/xla/tsl/cuda/cudart_stub.cc:32] Could",
        b"To enable the following instructions: AVX2 FMA, in other operations, rebuild TensorFlow "
        b"with the appropriate compiler flags.",
        b"normalizer.cc(51) LOG(INFO) precompiled_charsmap is empty. use identity normalization.",
        b"INFO:tensorflow:Assets written to: /tmp/run/.saved_model.tmp-4_3qtdal/assets",
        b"\t [[{{function_node __inference__translate_to_16526}}{{node Assert/Assert}}]]",
        b"INFO: Created TensorFlow Lite XNNPACK delegate for CPU.",
        b"Custom ops: TFText>FastSentencepieceDetokenize, TFText>FastSentencepieceTokenize",
        b"Details:",
        b"\ttf.TFText>FastSentencepieceTokenize(tensor<14356xui8>, tensor<1x!tf_type.string>)",
        b"See instructions: https://www.tensorflow.org/lite/guide/ops_custom",
    ],
)
def test_tensorflow_start_up_lines_are_noise(line):
    assert is_noise(line)


@pytest.mark.parametrize(
    "line",
    [
        b"error: No space left on the device while writing /tmp/run/spm.model",
        b"E0000 00:00:1795737658.6 15546 op_kernel.cc:1830] OP_REQUIRES failed: out of memory",
        b"F0000 00:00:1795737658.6 15546 logging.cc:52] Check failed: ok",
        b"Traceback (most recent call last):",
        b"warning: sentence 2 has 70 tokens; only the first 63 are translated.",
        # A warning of one of our modules, as absl's Python logging writes it in a script:
        b"W1206 18:12:02.734034 140479725071232 checkpointing.py:179] The data settings changed",
        b"Custom ops: RaggedGather, TFText>FastSentencepieceTokenize",  # one that is refused
    ],
)
def test_errors_and_our_lines_are_shown(line):
    assert not is_noise(line)


def translate(saved_model) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "translate.py", f"--saved_model={saved_model}", "--input=-"],
        input="Ein Hund rennt.\n",
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )


def test_a_script_prints_its_translations_and_errors_without_tensorflow_chatter(
    tiny_saved_model, tmp_path
):
    completed = translate(tiny_saved_model)
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == "" and len(completed.stdout.splitlines()) == 1
    failed = translate(tmp_path)  # no SavedModel there
    assert failed.returncode == 1
    assert failed.stderr.startswith("error: ") and failed.stderr.count("\n") == 1, failed.stderr
