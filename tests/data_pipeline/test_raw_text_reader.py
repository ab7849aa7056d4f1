"""The strict line reader shared by the Multi30k builder and user corpora."""

from __future__ import annotations

import gzip

import pytest

import data_pipeline as dp
from data_pipeline import raw_text


def test_lines_are_kept_as_written(tmp_path):
    text = "  Ein  Hund \nZwei\u00a0Katzen\t.\n\nEnde"  # No final newline.
    (tmp_path / "a.txt").write_text(text, encoding="utf-8")
    assert dp.read_lines(tmp_path / "a.txt") == ["  Ein  Hund ", "Zwei\u00a0Katzen\t.", "", "Ende"]


def test_gzip_is_detected_by_content_crlf_and_bom(tmp_path):
    data = "\ufeffEins\r\nZwei\u2028drei\r\n".encode()
    (tmp_path / "no_suffix").write_bytes(gzip.compress(data))
    # U+2028 is not a line break here: only "\n" (or "\r\n") ends a line.
    assert dp.read_lines(tmp_path / "no_suffix") == ["Eins", "Zwei\u2028drei"]
    (tmp_path / "empty").write_bytes(b"")
    assert dp.read_lines(tmp_path / "empty") == []


def test_errors(tmp_path):
    (tmp_path / "bad.gz").write_bytes(gzip.compress(b"ok\nok\n")[:-6])
    with pytest.raises(dp.DataError, match=r"bad\.gz: not a readable gzip file"):
        dp.read_lines(tmp_path / "bad.gz")
    (tmp_path / "latin1.de").write_bytes("Straße\nGrüße\n".encode("latin-1"))
    with pytest.raises(dp.DataError, match=r"latin1\.de, line 1: not valid UTF-8"):
        dp.read_lines(tmp_path / "latin1.de")
    with pytest.raises(dp.DataError, match="File not found"):
        dp.read_lines(tmp_path / "missing.de")
    with pytest.raises(dp.DataError, match=r"expected 00ab, got [0-9a-f]{64}"):
        raw_text.verify_sha256(b"x", "00ab", "x.gz")


def test_read_parallel_counts(tmp_path):
    (tmp_path / "a.de").write_text("a\nb\nc\n", encoding="utf-8")
    (tmp_path / "a.en").write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(dp.DataError, match=r"a\.de has 3 lines but .*a\.en has 2 lines"):
        dp.read_parallel(tmp_path / "a.de", tmp_path / "a.en")


@pytest.mark.parametrize(
    "source, target",
    [
        (b"a\nb\nc\n", b"A\nB\nC"),
        ("\ufeffEins\r\nZwei\u2028drei\r\n\n".encode(), gzip.compress(b"One\nTwo\n\n", mtime=0)),
        (b"", b""),
    ],
    ids=["the last line without its newline", "BOM, CRLF, U+2028 and gzip", "empty"],
)
def test_streamed_pairs_are_the_pairs_read_whole(tmp_path, source, target):
    (tmp_path / "a.de").write_bytes(source)
    (tmp_path / "a.en").write_bytes(target)
    whole = dp.read_parallel(tmp_path / "a.de", tmp_path / "a.en")
    assert list(raw_text.iter_parallel(tmp_path / "a.de", tmp_path / "a.en")) == list(
        zip(*whole, strict=True)
    )


def test_streamed_pairs_name_the_file_and_line_or_both_counts(tmp_path):
    (tmp_path / "a.de").write_text("a\nb\nc\n", encoding="utf-8")
    (tmp_path / "a.en").write_text("a\nb\n", encoding="utf-8")
    (tmp_path / "bad.en").write_bytes("ok\nStraße\nok\n".encode("latin-1"))
    (tmp_path / "cut.en.gz").write_bytes(gzip.compress(b"ok\nok\nok\n")[:-6])
    cases = [
        ("a.de", "a.en", r"a\.de has 3 lines but .*a\.en has 2 lines"),
        ("a.en", "a.de", r"a\.en has 2 lines but .*a\.de has 3 lines"),
        ("a.de", "bad.en", r"bad\.en, line 2: not valid UTF-8"),
        ("a.de", "cut.en.gz", r"cut\.en\.gz: not a readable gzip file"),
        ("a.de", "missing.en", r"File not found: .*missing\.en"),
    ]
    for source, target, message in cases:
        with pytest.raises(dp.DataError, match=message):
            list(raw_text.iter_parallel(tmp_path / source, tmp_path / target))
