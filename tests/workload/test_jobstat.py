"""hdeeprm-jobstat through click's CliRunner, with percentiles worked out by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from hdeeprm.cli.jobstat import format_number, main, parse_statistic
from hdeeprm.workload import convert_swf

# Sizes 1, 2, 4, 8, 16; requested times 60..300; memory 1000..5000 KB requested (1-5 MB);
# plus one job with unknown run time that the converter rules drop.
SWF = (
    "".join(
        f"{i} {10 * i} 0 50 {size} -1 -1 {size} {60 * i} {1000 * i} 1 1 1 -1 -1 -1 -1 -1\n"
        for i, size in enumerate([1, 2, 4, 8, 16], start=1)
    )
    + "6 70 0 -1 32 -1 -1 32 60 -1 1 1 1 -1 -1 -1 -1 -1\n"
)


@pytest.fixture
def swf(tmp_path: Path) -> Path:
    path = tmp_path / "five.swf"
    path.write_text(SWF)
    return path


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("field", "statistic", "expected"),
    [
        ("size", "min", "1"),
        ("size", "max", "16"),
        ("size", "mean", "6.2"),  # (1+2+4+8+16)/5 = 31/5
        ("size", "median", "4"),
        # Linear percentiles on [1, 2, 4, 8, 16]: rank = q/100 x 4.
        ("size", "p95", "14.4"),  # rank 3.8: 8 + 0.8 x (16 - 8)
        ("size", "p25", "2"),  # rank 1.0
        ("size", "p99.9", "15.968"),  # rank 3.996: 8 + 0.996 x 8
        ("size", "P50", "4"),
        ("req_time", "p95", "288"),  # [60..300]: 240 + 0.8 x 60
        ("mem", "max", "5"),  # 5000 KB -> 5 MB
        ("mem", "mean", "3"),
    ],
)
def test_statistics_on_swf(swf: Path, field: str, statistic: str, expected: str) -> None:
    code, out = _run(swf, field, statistic)
    assert code == 0, out
    assert out.strip() == expected


def test_window_options(swf: Path) -> None:
    # --start 1 --nb-jobs 3 keeps sizes [2, 4, 8]: mean 14/3.
    assert _run(swf, "size", "mean", "--start", "1", "--nb-jobs", "3") == (0, "4.666667\n")
    # --max-cores 4 drops sizes 8 and 16: [1, 2, 4].
    assert _run(swf, "size", "max", "--max-cores", "4") == (0, "4\n")


def test_verbose_prints_unit_and_count(swf: Path) -> None:
    code, out = _run(swf, "mem", "median", "-v")
    assert code == 0
    assert out.strip() == "mem median over 5 jobs of five.swf: 3 MB"


def test_converted_workload_has_mem_bw(swf: Path, tmp_path: Path) -> None:
    out = tmp_path / "workload.json"
    convert_swf(swf, reference_speed=1.0, max_cores=64, seed=3).save(out)
    draws = np.round(np.random.default_rng(3).uniform(4.0, 24.0, size=5), 2)
    assert _run(out, "mem_bw", "max") == (0, f"{format_number(float(draws.max()))}\n")
    assert _run(out, "size", "p95") == (0, "14.4\n")
    assert _run(out, "req_time", "min", "--start", "2") == (0, "180\n")


def test_mem_bw_on_swf_is_a_usage_error(swf: Path) -> None:
    code, out = _run(swf, "mem_bw", "max")
    assert code == 2 and "mem_bw does not exist in SWF" in out


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("cores", "max"), "'req_time', 'size', 'mem', 'mem_bw'"),
        (("size", "avg"), "min, max, mean, median or pNN"),
        (("size", "p101"), "outside 0-100"),
        (("size", "max", "--nb-jobs", "0"), "--nb-jobs"),
    ],
)
def test_usage_errors_exit_2_and_name_allowed_values(
    swf: Path, args: tuple[str, ...], fragment: str
) -> None:
    code, out = _run(swf, *args)
    assert code == 2 and fragment in out


def test_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    code, out = _run(tmp_path / "absent.swf", "size", "max")
    assert code == 2 and "does not exist" in out


def test_bad_file_and_empty_window_exit_2(tmp_path: Path, swf: Path) -> None:
    bad = tmp_path / "bad.swf"
    bad.write_text("1 2 3\n")
    code, out = _run(bad, "size", "max")
    assert code == 2 and "line 1" in out and "expected 18 SWF fields" in out
    assert len(out.strip().splitlines()) == 1
    code, out = _run(swf, "size", "max", "--start", "5")
    assert code == 2 and "no usable job" in out


def test_helpers() -> None:
    assert parse_statistic("p99.9") == ("percentile", 99.9)
    assert parse_statistic("median") == ("median", None)
    assert format_number(36.0) == "36" and format_number(0.1 + 0.2) == "0.3"
