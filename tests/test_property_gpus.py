"""Property-based checks of the GPU parsers: a platform with GPU types and a workload with GPU
fields, broken in one place, always end in an InputError naming the file and the key."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from test_property_inputs import PROPERTY, REPO, assert_names_file_and_place, broken

from hdeeprm.errors import InputError
from hdeeprm.platform import load_platform
from hdeeprm.workload import load_workload

SIERRA = json.loads((REPO / "platform_examples" / "cush_sierra.json").read_text())
GPU_WORKLOAD = {
    "nb_res": 256,
    "jobs": [
        {
            "id": "1",
            "subtime": 0,
            "res": 64,
            "profile": "1",
            "gpus": 40,
            "workload_type": "compute",
        },
        {
            "id": "2",
            "subtime": 3,
            "res": 8,
            "profile": "2",
            "gpus": 200,
            "workload_type": "network",
        },
    ],
    "profiles": {
        "1": {"type": "delay", "delay": 5, "req_time": 5},
        "2": {"type": "delay", "delay": 12, "req_time": 12},
    },
}


@PROPERTY
@given(case=broken(SIERRA))
def test_malformed_gpu_platforms_name_file_and_key(tmp_path: Path, case) -> None:
    text, _ = case
    path = tmp_path / "platform.json"
    path.write_text(text)
    try:
        load_platform(path)
    except InputError as error:
        assert_names_file_and_place(error, path)


@PROPERTY
@given(case=broken(GPU_WORKLOAD))
def test_malformed_gpu_workloads_name_file_and_key(tmp_path: Path, case) -> None:
    text, _ = case
    path = tmp_path / "workload.json"
    path.write_text(text)
    try:
        load_workload(path)
    except InputError as error:
        assert_names_file_and_place(error, path)
