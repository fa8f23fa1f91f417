"""SWF -> Batsim conversion, checked by value on a tiny trace written here."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hdeeprm.errors import InputError
from hdeeprm.workload import (
    DROP_REASONS,
    convert_swf,
    load_job_limits,
    load_workload,
)

# max_cores = 8 in these tests. Fields: id submit wait run alloc cpu usedmem reqproc reqtime
# reqmem status user group exe queue partition preceding think.
TINY = """; Computer: tiny
1 100 5 50 4 -1 2048 4 120 4096 1 1 1 -1 -1 -1 -1 -1
2 110 0 -1 2 -1 -1 2 60 -1 0 1 1 -1 -1 -1 -1 -1
3 130 0 30 3 -1 1500 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1
4 150 0 0 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1
5 160 0 20 16 -1 -1 16 60 -1 1 1 1 -1 -1 -1 -1 -1
6 170 0 10 -1 -1 -1 -1 60 -1 1 1 1 -1 -1 -1 -1 -1
7 -1 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1
8 200 0 100 8 -1 -1 8 300 -1 1 1 1 -1 -1 -1 -1 -1
"""
SPEED = 2.0  # GFLOPS: 2e9 flops per second of run time


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.swf"
    path.write_text(TINY)
    return path


def test_values_of_kept_jobs(tiny: Path) -> None:
    result = convert_swf(tiny, reference_speed=SPEED, max_cores=8, seed=7)
    wl = result.workload
    assert wl.nb_res == 8
    assert [j.id for j in wl.jobs] == ["1", "3", "8"]
    # Times shifted by the first kept submit time (100): 100->0, 130->30, 200->100.
    assert [j.subtime for j in wl.jobs] == [0.0, 30.0, 100.0]
    # Job 1 requests 4 cores; job 3 has no request (-1) and falls back to 3 allocated.
    assert [j.res for j in wl.jobs] == [4, 3, 8]
    p1, p3, p8 = (wl.profiles[j.profile] for j in wl.jobs)
    assert p1.type == "parallel_homogeneous" and p1.com == 0.0
    assert p1.cpu == 50 * 2e9 == 1e11  # run 50 s x 2 GFLOPS
    assert p1.extra["req_time"] == 120.0
    assert p1.extra["req_ops"] == 120 * 2e9 == 2.4e11
    assert p1.extra["mem"] == 4.096  # requested 4096 KB / 1000 (used 2048 KB ignored)
    # Job 3: requested time unknown -> run time 30 s; memory from used 1500 KB -> 1.5 MB.
    assert p3.extra["req_time"] == 30.0 and p3.extra["req_ops"] == 6e10 and p3.cpu == 6e10
    assert p3.extra["mem"] == 1.5
    # Job 8: no memory at all -> 0.
    assert p8.extra["mem"] == 0.0 and p8.cpu == 2e11 and p8.extra["req_ops"] == 6e11


def test_summary_counts_every_drop_and_fallback(tiny: Path) -> None:
    summary = convert_swf(tiny, reference_speed=SPEED, max_cores=8, seed=7).summary
    assert summary.jobs_read == 8 and summary.kept == 3 and summary.skipped == 0
    assert summary.dropped == {
        "unknown_submit_time": 1,  # job 7
        "unknown_run_time": 1,  # job 2
        "zero_run_time": 1,  # job 4
        "no_processors": 1,  # job 6
        "too_many_cores": 1,  # job 5 (16 > 8)
    }
    assert tuple(summary.dropped) == DROP_REASONS and summary.dropped_total == 5
    assert summary.req_time_from_run_time == 1  # job 3
    assert summary.mem_from_used_memory == 1  # job 3
    assert summary.mem_unknown == 1  # job 8
    assert summary.res_from_allocated == 1  # job 3
    assert (summary.first_submit, summary.last_submit) == (100.0, 200.0)
    assert not summary.stopped_early
    text = str(summary)
    assert "kept 3" in text and "too many cores 1" in text and "span 100 s" in text


def test_zero_run_time_can_be_kept(tiny: Path) -> None:
    result = convert_swf(tiny, reference_speed=SPEED, max_cores=8, seed=7, keep_zero_run_time=True)
    assert [j.id for j in result.workload.jobs] == ["1", "3", "4", "8"]
    assert result.workload.profiles["4"].cpu == 0.0
    assert result.summary.dropped["zero_run_time"] == 0


def test_window_with_start_and_time_shift(tiny: Path) -> None:
    result = convert_swf(tiny, reference_speed=SPEED, max_cores=8, seed=7, start=1, nb_jobs=1)
    wl, summary = result.workload, result.summary
    assert [j.id for j in wl.jobs] == ["3"]
    assert wl.jobs[0].subtime == 0.0  # 130 is the new origin
    assert summary.skipped == 1 and summary.kept == 1
    # Reading stops once the window is full: lines for jobs 1, 2, 3 only.
    assert summary.stopped_early and summary.jobs_read == 3
    assert summary.dropped["unknown_run_time"] == 1 and summary.dropped_total == 1


def test_mem_bw_is_seeded_uniform_per_kept_job(tiny: Path) -> None:
    def draws(seed: int) -> list[float]:
        wl = convert_swf(tiny, reference_speed=SPEED, max_cores=8, seed=seed).workload
        return [wl.profiles[j.profile].extra["mem_bw"] for j in wl.jobs]

    expected = np.round(np.random.default_rng(7).uniform(4.0, 24.0, size=3), 2).tolist()
    assert draws(7) == expected == draws(7)
    assert draws(8) != draws(7)
    assert all(4.0 <= bw <= 24.0 and round(bw, 2) == bw for bw in draws(123))


def test_delay_profiles(tiny: Path) -> None:
    result = convert_swf(tiny, reference_speed=SPEED, max_cores=8, seed=7, profile_type="delay")
    p1 = result.workload.profiles["1"]
    assert p1.type == "delay" and p1.delay == 50.0 and p1.cpu is None
    assert p1.extra["req_ops"] == 2.4e11
    no_speed = convert_swf(tiny, reference_speed=None, max_cores=8, seed=7, profile_type="delay")
    assert "req_ops" not in no_speed.workload.profiles["1"].extra


def test_save_writes_workload_and_limits_that_load_back(tiny: Path, tmp_path: Path) -> None:
    result = convert_swf(tiny, reference_speed=SPEED, max_cores=8, seed=7)
    out = tmp_path / "out" / "workload.json"
    result.save(out)
    loaded = load_workload(out)
    assert [(j.id, j.subtime, j.res) for j in loaded.jobs] == [
        ("1", 0.0, 4),
        ("3", 30.0, 3),
        ("8", 100.0, 8),
    ]
    assert loaded.profiles["8"].cpu == 2e11 and loaded.profiles["1"].req_time == 120.0
    limits = load_job_limits(out.parent / "job_limits.json")
    assert limits == result.limits
    # max requested time 300 (job 8), 8 cores, 4.096 MB, largest of the three bandwidth draws.
    bws = np.round(np.random.default_rng(7).uniform(4.0, 24.0, size=3), 2)
    assert (limits.max_time, limits.max_core, limits.max_mem) == (300.0, 8, 4.096)
    assert limits.max_mem_bw == float(bws.max())
    raw = json.loads(out.read_text())
    assert raw["nb_res"] == 8 and raw["conversion"]["seed"] == 7
    assert not list(out.parent.glob(".tmp-*"))  # atomic writes leave nothing behind


def test_header_is_passed_through(tiny: Path) -> None:
    result = convert_swf(tiny, reference_speed=SPEED, max_cores=8, seed=7)
    assert result.header == ["; Computer: tiny"]


def test_no_usable_job_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.swf"
    path.write_text("2 110 0 -1 2 -1 -1 2 60 -1 0 1 1 -1 -1 -1 -1 -1\n")
    with pytest.raises(InputError, match="no usable job in the whole trace") as info:
        convert_swf(path, reference_speed=SPEED, max_cores=8, seed=1)
    assert str(path) in str(info.value) and "unknown_run_time 1" in str(info.value)


def test_start_past_the_end_is_an_input_error(tiny: Path) -> None:
    with pytest.raises(InputError, match="after skipping 3 usable jobs"):
        convert_swf(tiny, reference_speed=SPEED, max_cores=8, seed=1, start=3)


def test_duplicate_job_numbers_are_rejected(tmp_path: Path) -> None:
    line = "1 100 5 50 4 -1 2048 4 120 4096 1 1 1 -1 -1 -1 -1 -1\n"
    path = tmp_path / "dup.swf"
    path.write_text(line + line)
    with pytest.raises(InputError, match="duplicate SWF job number 1"):
        convert_swf(path, reference_speed=SPEED, max_cores=8, seed=1)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"reference_speed": 0.0}, "reference_speed"),
        ({"reference_speed": None}, "required"),
        ({"max_cores": 0}, "max_cores"),
        ({"nb_jobs": 0}, "nb_jobs"),
        ({"start": -1}, "start"),
        ({"profile_type": "msg_par"}, "profile_type"),
    ],
)
def test_bad_arguments(tiny: Path, kwargs: dict, message: str) -> None:
    args = {"reference_speed": SPEED, "max_cores": 8, "seed": 1} | kwargs
    with pytest.raises(InputError, match=message):
        convert_swf(tiny, **args)
