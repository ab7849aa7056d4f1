"""Shared test set-up: quiet TensorFlow logs, repository root on sys.path, fixed seeds."""

import contextlib
import dataclasses
import fcntl
import gzip
import json
import os
import random
import shutil
import sys
from pathlib import Path
from unittest import mock

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# pytest-xdist's processes (scripts/test.sh runs two) share the cores: each TensorFlow (and each
# script a test starts) computes an op on its share of them, so that the processes' thread pools
# do not spin against each other (docs/PERFORMANCE.md). Read when TensorFlow makes its pools.
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _WORKERS > 1:
    _SHARE = max(1, len(os.sched_getaffinity(0)) // _WORKERS)
    os.environ.setdefault("TF_NUM_INTRAOP_THREADS", str(_SHARE))
REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import keras  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402

# Two logical CPU devices, so tf.distribute.MirroredStrategy can be tested in-process. This must
# happen before TensorFlow initialises its devices, i.e. before any test runs an op.
tf.config.set_logical_device_configuration(
    tf.config.list_physical_devices("CPU")[0],
    [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()],
)

_LOADED_SAVED_MODELS = {}
_load_saved_model = tf.saved_model.load


def _saved_model_files(export_dir) -> tuple:
    """``(path, mtime, size)`` of the graph and of every variables and assets file."""
    directory = Path(export_dir).resolve()
    files = [directory / "saved_model.pb"]
    for folder in ("variables", "assets"):
        files += sorted((directory / folder).glob("*"))
    return tuple((str(f), f.stat().st_mtime_ns, f.stat().st_size) for f in files)


def _load_saved_model_once(export_dir, tags=None, options=None):
    """``tf.saved_model.load`` that loads an unchanged export once per test process (~2 s each
    for the tiny exports' eight signatures; the suite loaded its ~15 exports 49 times): a
    script run in-process a second time, or the next test over the same export, gets the same
    read-only object. An export rewritten on disk, or a load with tags or options, loads anew."""
    if tags is not None or options is not None or not tf.io.gfile.isdir(str(export_dir)):
        return _load_saved_model(export_dir, tags, options)
    try:
        key = _saved_model_files(export_dir)
    except OSError:  # not a SavedModel's layout: the real load says what is wrong
        return _load_saved_model(export_dir)
    if key not in _LOADED_SAVED_MODELS:
        _LOADED_SAVED_MODELS[key] = _load_saved_model(export_dir)
    return _LOADED_SAVED_MODELS[key]


tf.saved_model.load = _load_saved_model_once

# Fixtures whose set-up trains, exports or prepares a data set: every test that needs one (even
# through another fixture) is marked ``slow``.
SLOW_FIXTURES = ("tfds_dir", "tiny_multilingual_run", "tiny_classifier_run")


def pytest_collection_modifyitems(items):
    """Marks ``slow`` every test that needs one of :data:`SLOW_FIXTURES` (Multi30k prepared,
    ``tiny_run`` trained on it, the multilingual run: tens of seconds), so that ``-m "not slow"``
    leaves them out without a mark on each; then orders the modules for two pytest-xdist
    processes (see ``_two_queue_order``). A test that is not marked ``slow`` and still trains,
    exports or prepares data fails (:func:`pytest_runtest_protocol`).
    """
    for item in items:
        if set(SLOW_FIXTURES) & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    items[:] = _two_queue_order(items)


def _slow_work():
    """``(what, object, attribute)``: the entry points of the work that makes a test slow; each
    is looked up when called, so patching it here catches every caller."""
    import ctranslate2
    import sentencepiece
    import tensorflow_datasets as tfds

    from inference import ctranslate2_export, export
    from training import trainer

    return [
        ("trains a model", trainer, "build_model"),  # the trainer's, once its data is read
        ("trains a tokenizer", sentencepiece.SentencePieceTrainer, "train"),
        ("prepares a TFDS data set", tfds.core.DatasetBuilder, "download_and_prepare"),
        ("exports a SavedModel", export, "atomic_directory"),
        ("exports a CTranslate2 model", ctranslate2_export, "atomic_directory"),
        ("converts a CTranslate2 model", ctranslate2.converters.Converter, "convert"),
    ]


@contextlib.contextmanager
def _refusing_slow_work(item):
    """Within the block (a test's set-up, call and teardown), each entry point of
    :func:`_slow_work` fails the test, unless it is marked ``slow``: markers that mean what
    they say."""
    if item.get_closest_marker("slow"):
        yield
        return
    with contextlib.ExitStack() as stack:
        for what, owner, name in _slow_work():

            def refuse(*args, what=what, **kwargs):
                pytest.fail(
                    f"{item.nodeid} {what} but is not marked slow: mark it "
                    "(@pytest.mark.slow), or add its fixture to tests/conftest.py's SLOW_FIXTURES.",
                    pytrace=False,
                )

            stack.enter_context(mock.patch.object(owner, name, refuse))
        yield


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """The guard of :func:`_refusing_slow_work` around a test's set-up, call and teardown (so
    that a test's own monkeypatch of a guarded function is undone before the guard is)."""
    with _refusing_slow_work(item):
        return (yield)


def _two_queue_order(items):
    """The modules that need ``tiny_run`` first and those that need ``tiny_multilingual_run``
    from the middle: pytest-xdist's worksteal gives each of two processes one half of the list
    to start with, so the two runs train at once instead of one process waiting on the other's
    lock. A module's tests stay together (its fixtures are set up once)."""
    modules = {}
    for item in items:
        modules.setdefault(item.nodeid.partition("::")[0], []).append(item)

    def needs(module_items, fixture):
        return any(fixture in getattr(item, "fixturenames", ()) for item in module_items)

    first = [m for m in modules.values() if needs(m, "tiny_run")]
    middle = [m for m in modules.values() if m not in first and needs(m, "tiny_multilingual_run")]
    rest = [m for m in modules.values() if m not in first and m not in middle]
    ordered = [item for module in first for item in module]
    while rest and len(ordered) + len(rest[0]) <= len(items) // 2:
        ordered += rest.pop(0)
    return ordered + [item for module in middle + rest for item in module]


@pytest.fixture(autouse=True)
def _fixed_seed_and_float32_policy():
    """Every test starts from seed 0 and the float32 policy, whatever the previous test did."""
    keras.utils.set_random_seed(0)
    keras.mixed_precision.set_global_policy("float32")
    yield
    keras.mixed_precision.set_global_policy("float32")


@pytest.fixture(scope="session")
def multi30k_dir() -> str:
    """$MULTI30K_DIR, else <repo>/../shared/data/multi30k (the raw Multi30k .gz files)."""
    directory = os.environ.get("MULTI30K_DIR") or str(REPO_ROOT.parent / "shared/data/multi30k")
    if not Path(directory, "train.de.gz").is_file():
        pytest.fail(f"The raw Multi30k files are not in {directory}; set MULTI30K_DIR.")
    return directory


@pytest.fixture(scope="session")
def tfds_dir(tmp_path_factory, multi30k_dir) -> str:
    """One TFDS data directory for the whole session: Multi30k is prepared into it once."""
    os.environ["MULTI30K_DIR"] = multi30k_dir
    return str(tmp_path_factory.mktemp("tfds"))


SMALL_CORPUS_PAIRS = {"train": ("train", 2000), "validation": ("val", 20)}


@pytest.fixture(scope="session")
def small_corpus(multi30k_dir, tmp_path_factory) -> str:
    """A ``text:DIR`` corpus directory: the first 2,000 training and 20 validation sentences of
    Multi30k in de, en, fr and cs (``train.de``, ``validation.fr``, ...). The trainer's data
    where Multi30k itself is not under test: ``f"text:{small_corpus}:de-en"``."""
    directory = tmp_path_factory.mktemp("small-corpus")
    for split, (raw_split, count) in SMALL_CORPUS_PAIRS.items():
        for lang in ("de", "en", "fr", "cs"):
            raw = gzip.decompress(Path(multi30k_dir, f"{raw_split}.{lang}.gz").read_bytes())
            lines = raw.decode("utf-8").split("\n")[:count]
            Path(directory, f"{split}.{lang}").write_text("".join(f"{line}\n" for line in lines))
    return str(directory)


def built_once(tmp_path_factory, name: str, build) -> Path:
    """``build(directory)`` run once per test run; this process's own copy of the directory.

    The first test process (of pytest-xdist's) to need it builds it into the directory they all
    share, under a lock; the others wait for it and copy it. Each process gets its own copy to
    work in."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    built, done = shared / f"{name}-built", shared / f"{name}.done"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(built, ignore_errors=True)
            build(built)
            done.touch()
    own = tmp_path_factory.mktemp(name)
    shutil.copytree(built, own, dirs_exist_ok=True)
    return own


def _trained_once(tmp_path_factory, name: str, config):
    """``config`` trained once per test run (in-process): ``(workdir, TrainResult)``."""
    from training import trainer

    def build(directory: Path) -> None:
        result = trainer.train(config, str(directory / "workdir"))
        (directory / "result.json").write_text(json.dumps(dataclasses.asdict(result)))

    own = built_once(tmp_path_factory, name, build)
    result = trainer.TrainResult(**json.loads((own / "result.json").read_text()))
    return str(own / "workdir"), result


def _exported_once(tmp_path_factory, name: str, workdir: str, export, version: str) -> str:
    """``export(translator, path)`` of ``workdir``'s latest checkpoint (graph search, no XLA)
    once per test run, into a version directory: ``.../<name>/<version>``."""

    def build(directory: Path) -> None:
        from inference.loading import load_translator

        translator, _ = load_translator(workdir, "latest", jit_compile=False)
        export(translator, str(directory / name / version))

    return str(built_once(tmp_path_factory, name, build) / name / version)


@pytest.fixture(scope="session")
def tiny_run(tfds_dir, tmp_path_factory):
    """configs/tiny.py trained once per test run: ``(workdir, TrainResult)``."""
    from configs import tiny

    config = tiny.get_config()
    config.data.data_dir = tfds_dir
    return _trained_once(tmp_path_factory, "tiny-run", config)


MULTILINGUAL_DIRECTIONS = ("de-en", "en-de", "de-fr", "en-fr")


@pytest.fixture(scope="session")
def tiny_multilingual_run(small_corpus, tmp_path_factory):
    """configs/tiny.py trained once per test run on four directions of ``small_corpus`` (target
    languages de, en and fr, each source tagged): ``(workdir, TrainResult)``."""
    from configs import tiny

    config = tiny.get_config()
    config.data.name = f"text:{small_corpus}:{','.join(MULTILINGUAL_DIRECTIONS)}"
    config.data.data_dir = str(tmp_path_factory.getbasetemp() / "multilingual-data")
    config.train.eval_max_sentences = 5
    return _trained_once(tmp_path_factory, "tiny-multilingual-run", config)


@pytest.fixture(scope="session")
def tiny_multilingual_saved_model(tiny_multilingual_run, tmp_path_factory) -> str:
    """The tiny multilingual run exported (graph search) into ``.../multi/1``."""
    from inference.export import export_saved_model

    return _exported_once(
        tmp_path_factory, "multi", tiny_multilingual_run[0], export_saved_model, "1"
    )


@pytest.fixture(scope="session")
def tiny_multilingual_ctranslate2(tiny_multilingual_run, tmp_path_factory) -> str:
    """The tiny multilingual run's CTranslate2 export (float32, length penalty 0)."""
    from inference.ctranslate2_export import export_ctranslate2

    return _exported_once(
        tmp_path_factory, "multi-ct2", tiny_multilingual_run[0], export_ctranslate2, "1"
    )


@pytest.fixture
def full_disk():
    """``full_disk(path, partial=True)``: a stand-in for a TensorFlow save to ``path`` on a full
    disk. It leaves a partial file where TensorFlow does (``path_temp/part-...``; not with
    ``partial=False``) and raises what TensorFlow raises, both as seen on a full tmpfs."""

    def make(path: str, partial: bool = True):
        def save(*args, **kwargs):
            file = Path(f"{path}_temp", "part-00000-of-00001.data-00000-of-00001.tempstate1")
            if partial:
                file.parent.mkdir(parents=True)
                file.write_bytes(b"\0" * 1000)
            message = f"{file}; No space left on device"
            raise tf.errors.ResourceExhaustedError(None, None, message)

        return save

    return make


@pytest.fixture(scope="session")
def tiny_saved_model(tiny_run, tmp_path_factory) -> str:
    """The tiny run exported with the graph search (no XLA: no compilation for each new batch
    shape, which keeps the tests fast) into a version directory: ``.../de-en/7``."""
    from inference.export import export_saved_model

    return _exported_once(tmp_path_factory, "de-en", tiny_run[0], export_saved_model, "7")


@pytest.fixture(scope="session")
def tiny_beam4_exports(tiny_run, tmp_path_factory) -> tuple[str, str]:
    """``(SavedModel path, CTranslate2 export path)``: the tiny run decoded with a beam of 4
    (graph search; CTranslate2's length penalty 0), exported once per test run: n-best lists."""
    from inference.ctranslate2_export import export_ctranslate2
    from inference.export import export_saved_model
    from inference.loading import load_translator

    def build(directory: Path) -> None:
        translator, _ = load_translator(tiny_run[0], "latest", beam_size=4, jit_compile=False)
        export_saved_model(translator, str(directory / "saved_model"))
        export_ctranslate2(translator, str(directory / "ct2"))

    built = built_once(tmp_path_factory, "beam4", build)
    return str(built / "saved_model"), str(built / "ct2")


@pytest.fixture(scope="session")
def tiny_ctranslate2(tiny_run, tmp_path_factory) -> str:
    """The tiny run's CTranslate2 export (float32, CTranslate2's length penalty 0), in a version
    directory: ``.../ct2/7`` (the version of ``tiny_saved_model``)."""
    from inference.ctranslate2_export import export_ctranslate2

    return _exported_once(tmp_path_factory, "ct2", tiny_run[0], export_ctranslate2, "7")


TOY_WORDS = {
    "spam": ["prize", "free", "winner", "cash", "offer", "click", "urgent", "bonus"],
    "ham": ["meeting", "lunch", "report", "project", "family", "weekend", "garden", "notes"],
}
TOY_COMMON = ["the", "a", "you", "we", "today", "please", "and", "for", "with", "this"]


def write_toy_labelled_file(path: Path, count: int = 300, seed: int = 0) -> str:
    """A ``label,text`` CSV of ``count`` toy messages, a third spam: common words around two of
    their label's own words (a task a tiny classifier learns in a hundred steps)."""
    rng = random.Random(seed)
    rows = ["label,text"]
    for i in range(count):
        label = "spam" if i % 3 == 0 else "ham"
        words = rng.choices(TOY_COMMON, k=rng.randint(3, 12)) + rng.choices(TOY_WORDS[label], k=2)
        rng.shuffle(words)
        rows.append(f"{label},{' '.join(words)}")
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def tiny_classifier_config(labelled_file: str, **train_overrides):
    """configs/spam_assassin.py with a tiny model on the labelled file ``labelled_file``."""
    from configs import spam_assassin

    config = spam_assassin.get_config()
    config.data.name = f"text:{labelled_file}"
    config.data.max_length = 32
    config.data.tokens_per_batch = 512
    config.tokenizer.vocab_size = 300
    config.model.num_layers = 1
    config.model.d_model = 32
    config.model.num_heads = 2
    config.model.d_ff = 64
    config.model.norm_first = True
    config.train.steps = 120
    config.train.warmup_steps = 10
    config.train.peak_learning_rate = 3e-3
    config.train.log_every = 20
    config.train.checkpoint_every = 60
    config.train.eval_every = 60
    for key, value in train_overrides.items():
        config.train[key] = value
    return config


@pytest.fixture(scope="session")
def toy_labelled_file(tmp_path_factory) -> str:
    return write_toy_labelled_file(tmp_path_factory.mktemp("labelled") / "toy.csv")


@pytest.fixture(scope="session")
def tiny_classifier_run(toy_labelled_file, tmp_path_factory):
    """A tiny classifier trained once per test run on ``toy_labelled_file``:
    ``(workdir, TrainResult)``."""
    return _trained_once(
        tmp_path_factory, "tiny-classifier-run", tiny_classifier_config(toy_labelled_file)
    )


@pytest.fixture(scope="session")
def tiny_classifier_saved_model(tiny_classifier_run, tmp_path_factory) -> str:
    """The tiny classifier exported as a SavedModel into ``.../classifier/1``."""

    def build(directory: Path) -> None:
        from inference.classifier import load_classifier
        from inference.export import export_classifier

        export_classifier(load_classifier(tiny_classifier_run[0])[0], str(directory / "1"))

    return str(built_once(tmp_path_factory, "classifier-saved-model", build) / "1")
