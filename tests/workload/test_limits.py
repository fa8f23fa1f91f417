"""Job limits: computed from a workload, saved/loaded as plain JSON, validated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hdeeprm.errors import InputError
from hdeeprm.workload import (
    JobLimits,
    compute_job_limits,
    job_limits_path,
    load_job_limits,
    save_job_limits,
)
from hdeeprm.workload.model import workload_from_json


def _workload() -> dict:
    return {
        "nb_res": 16,
        "jobs": [
            {"id": "a", "subtime": 0, "res": 2, "profile": "pa"},
            {"id": "b", "subtime": 5, "res": 12, "profile": "pb"},
            {"id": "c", "subtime": 9, "res": 1, "profile": "pc", "walltime": 900},
            {"id": "d", "subtime": 9, "res": 3, "profile": "pd"},
        ],
        "profiles": {
            "pa": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0, "req_time": 600,
                   "mem": 512.5, "mem_bw": 7.25},
            "pb": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0, "req_time": 60,
                   "mem": 100, "mem_bw": 20},
            # No hdeeprm extras: requested time from walltime (c) or delay (d), mem 0.
            "pc": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0},
            "pd": {"type": "delay", "delay": 1200},
        },
    }  # fmt: skip


def test_limits_from_workload() -> None:
    limits = compute_job_limits(workload_from_json(_workload()))
    # max(600, 60, walltime 900, delay 1200) = 1200; max(2, 12, 1, 3) = 12; max mem 512.5;
    # max bandwidth max(7.25, 20) = 20.
    assert limits == JobLimits(max_time=1200.0, max_core=12, max_mem=512.5, max_mem_bw=20.0)


def test_round_trip_is_plain_json(tmp_path: Path) -> None:
    limits = JobLimits(432000.0, 160, 89.734, 23.5)
    path = job_limits_path(tmp_path / "workload.json")
    assert path == (tmp_path / "job_limits.json").resolve()
    save_job_limits(limits, path)
    assert json.loads(path.read_text()) == {
        "max_time": 432000.0,
        "max_core": 160,
        "max_mem": 89.734,
        "max_mem_bw": 23.5,
    }
    assert load_job_limits(path) == limits


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"max_time": 1, "max_core": 1, "max_mem": 1}, "missing key 'max_mem_bw'"),
        ({"max_time": -1, "max_core": 1, "max_mem": 1, "max_mem_bw": 1}, "max_time"),
        ({"max_time": 1, "max_core": 0, "max_mem": 1, "max_mem_bw": 1}, "max_core"),
        ({"max_time": 1, "max_core": 2.5, "max_mem": 1, "max_mem_bw": 1}, "max_core"),
        ({"max_time": 1, "max_core": 1, "max_mem": True, "max_mem_bw": 1}, "max_mem"),
        ({"max_time": 1, "max_core": 1, "max_mem": 1, "max_mem_bw": 1, "x": 1}, "unknown key"),
        ([1, 2], "expected a JSON object"),
    ],
)
def test_invalid_files_name_file_and_key(tmp_path: Path, raw: object, message: str) -> None:
    path = tmp_path / "job_limits.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(InputError, match=message) as info:
        load_job_limits(path)
    assert str(path) in str(info.value)


def test_bad_json_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "job_limits.json"
    path.write_text('{"max_time": 1,\n oops}')
    with pytest.raises(InputError, match="line 2"):
        load_job_limits(path)
    with pytest.raises(InputError, match="not found"):
        load_job_limits(tmp_path / "absent.json")


def test_constructor_validates() -> None:
    with pytest.raises(InputError, match="max_mem"):
        JobLimits(1.0, 1, float("nan"), 1.0)
    with pytest.raises(InputError, match="no jobs"):
        compute_job_limits(workload_from_json({"jobs": [], "profiles": {}}))
