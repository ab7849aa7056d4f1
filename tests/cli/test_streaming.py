import io
import json
import sys
from pathlib import Path

import pytest

from cli.streaming import InputLines, StreamError, count_lines, stream_lines
from common.storage import StorageError

LINES = [f"Satz {number}." for number in range(1, 12)]
OPTIONS = {"beam_size": 4}


class Upper:
    """A process that upper-cases each line, records its calls, and fails on the window that
    starts at ``fail_at``."""

    def __init__(self, fail_at: int | None = None, error: type[BaseException] = RuntimeError):
        self.calls: list[int] = []
        self.fail_at, self.error = fail_at, error

    def __call__(self, first_line: int, columns: list[list[str]]) -> str:
        if first_line == self.fail_at:
            raise self.error("stopped")
        self.calls.append(first_line)
        return "".join(f"{line.upper()} ({first_line})\n" for line in columns[0])


def expected_output(window: int) -> str:
    return "".join(
        f"{line.upper()} ({start + 1})\n"
        for start in range(0, len(LINES), window)
        for line in LINES[start : start + window]
    )


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "in.de"
    path.write_text("".join(line + "\n" for line in LINES), encoding="utf-8")
    return path


def test_lines_are_read_without_their_ends_and_counted(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(b"\xef\xbb\xbfa\r\nb\xff\nc\xe2\x80\xa8d\n\xef\xbb\xbf\nlast")
    lines = InputLines(str(path))
    assert lines.read(2) == ["a", "b\ufffd"]  # the byte-order mark that starts the file goes
    assert lines.read(10) == ["c\u2028d", "\ufeff", "last"]  # U+2028 is no line end
    assert (lines.lines, lines.bytes) == (5, path.stat().st_size)
    assert count_lines(str(path)) == 5
    (tmp_path / "empty").write_bytes(b"")
    assert count_lines(str(tmp_path / "empty")) == 0


def test_windows_are_written_in_order_and_the_partial_file_renamed(source, tmp_path):
    output = tmp_path / "out.en"
    process = Upper()
    stream_lines([str(source)], str(output), process, OPTIONS, window=4, progress=False)
    assert process.calls == [1, 5, 9]
    assert output.read_text(encoding="utf-8") == expected_output(4)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.de", "out.en"]


def test_an_output_under_a_file_is_one_line(source, tmp_path):
    output = tmp_path / "in.de" / "out.en"  # the input file where a directory would be
    with pytest.raises(StorageError) as raised:
        stream_lines([str(source)], str(output), Upper(), OPTIONS, window=4, progress=False)
    assert str(raised.value) == (
        f"A file is in the way while writing {output}.partial; anything written there before "
        "is unchanged. Choose another path, then rerun."
    )


@pytest.mark.parametrize("earlier_run", [False, True])
def test_an_empty_input_gives_an_empty_output(tmp_path, earlier_run):
    empty, output = tmp_path / "empty.de", tmp_path / "out.en"
    empty.write_bytes(b"")
    if earlier_run:  # another input's partial output and record: started over, then replaced
        Path(f"{output}.partial").write_text("OLD\n")
        Path(f"{output}.partial.json").write_text('{"inputs": [], "output_bytes": 4}')
    process = Upper()
    stream_lines([str(empty)], str(output), process, OPTIONS, window=4, progress=False)
    assert process.calls == [] and output.read_bytes() == b""
    assert sorted(path.name for path in tmp_path.iterdir()) == ["empty.de", "out.en"]


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_an_interrupted_run_continues_to_an_uninterrupted_runs_output(
    source, tmp_path, capsys, error
):
    output = tmp_path / "out.en"
    output.write_text("an older output\n", encoding="utf-8")
    with pytest.raises(error):
        stream_lines([str(source)], str(output), Upper(9, error), OPTIONS, 4, progress=False)
    assert output.read_text(encoding="utf-8") == "an older output\n"  # untouched until the end
    partial = tmp_path / "out.en.partial"
    assert partial.read_text(encoding="utf-8") == expected_output(4)[: len(partial.read_text())]
    assert "holds the first 8 lines; run the same command again" in capsys.readouterr().err
    with partial.open("a", encoding="utf-8") as file:  # a window half-written before a kill -9
        file.write("SATZ 9. (9)\nSA")
    process = Upper()
    stream_lines([str(source)], str(output), process, OPTIONS, 4, progress=False)
    assert process.calls == [9]
    assert "Continuing" in capsys.readouterr().err
    assert output.read_text(encoding="utf-8") == expected_output(4)
    assert not partial.exists() and not (tmp_path / "out.en.partial.json").exists()


def interrupted(source, output, options=OPTIONS):
    with pytest.raises(RuntimeError):
        stream_lines([str(source)], str(output), Upper(9), options, 4, progress=False)


@pytest.mark.parametrize(
    "change, reason",
    [
        ("options", "other options (--beam_size)"),
        ("input", "no longer begins with the 8 lines it holds"),
        ("noresume", "--noresume"),
        ("record", "its record"),
    ],
)
def test_another_input_other_options_or_noresume_start_over(
    source, tmp_path, capsys, change, reason
):
    output = tmp_path / "out.en"
    interrupted(source, output)
    options, resume = OPTIONS, True
    if change == "options":
        options = {"beam_size": 5}
    elif change == "input":
        source.write_text("Neu.\n" + source.read_text(encoding="utf-8"), encoding="utf-8")
    elif change == "noresume":
        resume = False
    else:
        (tmp_path / "out.en.partial.json").unlink()
    capsys.readouterr()
    process = Upper()
    stream_lines([str(source)], str(output), process, options, 4, resume, progress=False)
    err = capsys.readouterr().err
    assert f"Starting {output}.partial over: " in err and reason in err
    assert process.calls == [1, 5, 9]
    assert output.read_text(encoding="utf-8").startswith(
        "NEU. (1)\n" if change == "input" else "SATZ 1. (1)\n"
    )


def test_a_file_appended_to_since_is_continued(source, tmp_path):
    output = tmp_path / "out.en"
    interrupted(source, output)
    with source.open("a", encoding="utf-8") as file:
        file.write("Satz 12.\n")
    process = Upper()
    stream_lines([str(source)], str(output), process, OPTIONS, 4, progress=False)
    assert process.calls == [9]
    assert output.read_text(encoding="utf-8").endswith("SATZ 12. (9)\n")


def test_aligned_inputs_come_as_columns_and_misaligned_ones_are_named(source, tmp_path):
    prefixes = tmp_path / "prefixes.en"
    prefixes.write_text("".join(f"P{n}\n" for n in range(11)), encoding="utf-8")
    seen = []

    def pair(first_line, columns):
        seen.extend(zip(*columns, strict=True))
        return ""

    stream_lines([str(source), str(prefixes)], str(tmp_path / "o"), pair, {}, 4, progress=False)
    assert seen[-1] == ("Satz 11.", "P10")
    for text, message in (
        ("P\n" * 5, "in.de has more lines than .*prefixes.en \\(5\\)"),
        ("P\n" * 12, "prefixes.en has more lines than .*in.de \\(11\\)"),
    ):
        prefixes.write_text(text, encoding="utf-8")
        with pytest.raises(StreamError, match=message):
            stream_lines([str(source), str(prefixes)], str(tmp_path / "o"), pair, {}, 4, False)
    for path, problem in ((tmp_path / "missing", "does not exist"), (tmp_path, "is a directory")):
        with pytest.raises(StreamError, match=f"Cannot read {path}: it {problem}"):
            stream_lines([str(path)], None, pair, {}, 4, progress=False)


def test_standard_input_and_output_stream_without_a_partial_file(monkeypatch, capsys, tmp_path):
    data = "".join(line + "\n" for line in LINES).encode("utf-8")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    monkeypatch.chdir(tmp_path)
    stream_lines(["-"], None, Upper(), OPTIONS, 4, progress=False)
    assert capsys.readouterr().out == expected_output(4)
    assert list(tmp_path.iterdir()) == []


def test_the_record_says_where_reading_stands(source, tmp_path):
    output = tmp_path / "out.en"
    interrupted(source, output)
    record = json.loads((tmp_path / "out.en.partial.json").read_text(encoding="utf-8"))
    assert record["inputs"][0]["lines"] == 8 and record["options"] == OPTIONS
    assert record["output_bytes"] == (tmp_path / "out.en.partial").stat().st_size
