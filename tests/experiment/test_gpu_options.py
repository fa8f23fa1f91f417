"""The options keys of the GPU model: ``gpus_per_task`` (SWF and synthetic jobs get GPUs) and
``service_time`` (CuSH's locality penalties in classic runs and environments)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from gpu_helpers import TINY

from hdeeprm.errors import InputError
from hdeeprm.experiment.run import run_classic
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import load_options


def _options(tmp_path: Path, pair: str = "first-depth_first", **top: Any) -> Path:
    platform = tmp_path / "tiny.json"
    platform.write_text(json.dumps(TINY))
    raw = {
        "seed": 5,
        "platform_file_path": str(platform),
        "pybatsim": {
            "env": {"actions": {"selection": [{"first": ["depth_first", "breadth_first"]}]}},
            "agent": {"type": "CLASSIC", "policy_pair": pair},
        },
        **top,
    }
    path = tmp_path / "options.json"
    path.write_text(json.dumps(raw))
    return path


def test_gpus_per_task_gives_synthetic_jobs_gpus(tmp_path: Path) -> None:
    options = load_options(
        _options(tmp_path, gpus_per_task=1, synthetic_workload={"model": "lublin", "nb_jobs": 40})
    )
    assert options.gpus_per_task == 1 and options.service_time is None
    inputs = prepare_inputs(options, tmp_path / "run")
    assert all(job.gpus == job.res for job in inputs.workload.jobs)
    run_classic(inputs)
    with open(tmp_path / "run" / "out_gpus.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 40
    requested = {job.id: job.res for job in inputs.workload.jobs}
    assert all(int(row["nb_gpus"]) == requested[row["job_id"]] for row in rows)
    # hdeeprm-clean knows it as an output of the run.
    from hdeeprm.analysis.clean import plan_clean

    plan = plan_clean(tmp_path / "run")
    assert tmp_path / "run" / "out_gpus.csv" in plan.files


def test_service_time_option_in_classic_runs(tmp_path: Path) -> None:
    """One network job of 2 cores + 5 GPUs for 10 s: packed depth-first, it takes 20 s."""
    workload = {
        "nb_res": 6,
        "jobs": [
            {
                "id": "X",
                "subtime": 0,
                "res": 2,
                "profile": "X",
                "gpus": 5,
                "workload_type": "network",
            }
        ],
        "profiles": {"X": {"type": "delay", "delay": 10, "req_time": 10}},
    }
    custom = tmp_path / "w.json"
    custom.write_text(json.dumps(workload))
    for policy, finish in (("depth_first", 20.0), ("breadth_first", 10.0)):
        options = load_options(_options(tmp_path, f"first-{policy}", service_time={"network": 1.0}))
        assert options.service_time == {"compute": 0.5, "network": 1.0}
        inputs = prepare_inputs(options, tmp_path / policy, custom_workload=custom)
        run_classic(inputs)
        with open(tmp_path / policy / "out_jobs.csv", newline="") as handle:
            (row,) = list(csv.DictReader(handle))
        assert float(row["finish_time"]) == finish


@pytest.mark.parametrize(
    ("top", "where"),
    [
        ({"gpus_per_task": -1}, "gpus_per_task"),
        ({"gpus_per_task": 1.5}, "gpus_per_task"),
        ({"service_time": {"cpu": 1}}, "service_time.cpu"),
        ({"service_time": {"network": -0.5}}, "service_time.network"),
        ({"service_time": [0.5, 1.0]}, "service_time"),
    ],
)
def test_bad_gpu_options_name_the_key(tmp_path: Path, top: dict[str, Any], where: str) -> None:
    with pytest.raises(InputError) as info:
        load_options(_options(tmp_path, **top))
    assert info.value.where == where and "options.json" in str(info.value)
