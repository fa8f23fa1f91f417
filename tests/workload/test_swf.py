"""SWF reader/writer: typed records, -1 kept, header kept, gzip, blank lines, precise errors."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from hdeeprm.errors import InputError
from hdeeprm.workload.swf import (
    SWF_FIELDS,
    UNKNOWN,
    SwfJob,
    SwfReader,
    format_swf_line,
    read_swf,
    write_swf,
)

TEXT = """; Version: 2.2
; Computer: test machine

1 0 10 100 4 90.5 2048 4 200 4096 1 7 8 9 1 -1 -1 -1
2   15  -1  -1  2  -1  -1  -1  -1  -1  0  7  8  -1  -1  -1  -1  -1   \t
; a comment in the middle
3 20 0 30 1 -1 -1 1 60 -1 1 3 3 -1 0 -1 2 5
"""


def _write(tmp_path: Path, text: str, name: str = "t.swf") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="latin-1")
    return path


def test_records_are_typed_and_keep_unknown_as_minus_one(tmp_path: Path) -> None:
    jobs, header = read_swf(_write(tmp_path, TEXT))
    assert len(jobs) == 3
    first = jobs[0]
    assert first.job_number == 1 and isinstance(first.job_number, int)
    assert first.submit_time == 0.0 and isinstance(first.submit_time, float)
    assert first.average_cpu_time == 90.5
    assert first.requested_memory == 4096.0
    second = jobs[1]
    assert second.run_time == UNKNOWN and second.requested_processors == UNKNOWN
    assert isinstance(second.requested_processors, int)
    assert jobs[2].preceding_job_number == 2 and jobs[2].think_time == 5.0
    assert len(SWF_FIELDS) == 18 and SWF_FIELDS[8] == "requested_time"
    # Header lines keep their order, wherever they are in the file.
    assert header == ["; Version: 2.2", "; Computer: test machine", "; a comment in the middle"]


def test_gzip_is_read_like_plain(tmp_path: Path) -> None:
    plain = _write(tmp_path, TEXT)
    packed = tmp_path / "t.swf.gz"
    packed.write_bytes(gzip.compress(TEXT.encode()))
    assert read_swf(packed) == read_swf(plain)
    # Detection is by content, not by name: a gzip file without .gz still reads.
    renamed = tmp_path / "noext"
    renamed.write_bytes(packed.read_bytes())
    assert read_swf(renamed)[0] == read_swf(plain)[0]


def test_reader_streams_and_tracks_line_numbers(tmp_path: Path) -> None:
    reader = SwfReader(_write(tmp_path, TEXT))
    iterator = iter(reader)
    assert next(iterator).job_number == 1
    assert reader.line_number == 4  # two header lines and a blank line come first
    assert reader.header == ["; Version: 2.2", "; Computer: test machine"]


def test_integral_floats_in_integer_fields_are_accepted(tmp_path: Path) -> None:
    jobs, _ = read_swf(_write(tmp_path, "1 0 0 5 4.0 -1 -1 4.00 9 -1 1 1 1 1 1 1 1 1\n"))
    assert jobs[0].allocated_processors == 4 and isinstance(jobs[0].allocated_processors, int)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("4 30 0 10 1 -1 -1 1 60 -1 1 3 3 -1 0 -1 -1\n", "expected 18 SWF fields, found 17"),
        ("4 30 0 ten 1 -1 -1 1 60 -1 1 3 3 -1 0 -1 -1 -1\n", "field 4 (run_time)"),
        ("4 30 0 10 1.5 -1 -1 1 60 -1 1 3 3 -1 0 -1 -1 -1\n", "field 5 (allocated_processors)"),
        ("4 30 0 nan 1 -1 -1 1 60 -1 1 3 3 -1 0 -1 -1 -1\n", "must be finite"),
        ("4 30 0 10 1 -1 -1 1 60 -1 1 3 3 -1 0 -1 -1 -1 7\n", "found 19"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = _write(tmp_path, TEXT + "\n" + line)
    with pytest.raises(InputError) as info:
        read_swf(path)
    text = str(info.value)
    # TEXT has 7 lines, then the blank line 8, so the bad line is line 9.
    assert str(path) in text and "line 9" in text and message in text
    assert info.value.where == "line 9"


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        read_swf(tmp_path / "absent.swf")


def test_truncated_gzip_is_an_input_error(tmp_path: Path) -> None:
    data = gzip.compress((TEXT * 50).encode())
    path = tmp_path / "cut.swf.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="cannot read SWF data"):
        read_swf(path)


@pytest.mark.parametrize("name", ["out.swf", "out.swf.gz"])
def test_write_round_trip(tmp_path: Path, name: str) -> None:
    jobs, _ = read_swf(_write(tmp_path, TEXT))
    out = tmp_path / name
    write_swf(jobs, out, ["Generator: test", "; already prefixed"])
    again, header = read_swf(out)
    assert again == jobs
    assert header == ["; Generator: test", "; already prefixed"]


def test_line_format_drops_decimal_point_of_integral_values() -> None:
    job = SwfJob(1, 0.0, -1.0, 12.5, 4, -1, -1, 4, 60.0, -1, 1, -1, -1, -1, 0, -1, -1, -1)
    assert format_swf_line(job) == "1 0 -1 12.5 4 -1 -1 4 60 -1 1 -1 -1 -1 0 -1 -1 -1"
