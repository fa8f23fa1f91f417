"""GPU fields from SWF traces (which record none) and CuSH's seeded job sets."""

from __future__ import annotations

from pathlib import Path

import pytest

from hdeeprm.errors import InputError
from hdeeprm.workload import convert_swf
from hdeeprm.workload.cush import generate_cush_jobset

SWF = "\n".join(
    [
        "; a three-job trace",
        "1 0 10 100 4 -1 1024 4 200 2048 1 1 1 1 1 -1 -1 -1",
        "2 5 0 50 2 -1 -1 2 60 -1 1 1 1 1 1 -1 -1 -1",
        "3 9 3 70 1 -1 512 1 80 512 1 1 1 1 1 -1 -1 -1",
    ]
)


def _convert(tmp_path: Path, **kwargs):
    path = tmp_path / "t.swf"
    path.write_text(SWF + "\n")
    return convert_swf(path, reference_speed=1.0, max_cores=8, seed=0, **kwargs)


def test_swf_mapping_gives_gpus_per_task(tmp_path: Path) -> None:
    plain = _convert(tmp_path).workload
    assert all("gpus" not in job.extra for job in plain.jobs)
    mapped = _convert(tmp_path, gpus_per_task=2).workload
    assert [(job.res, job.gpus) for job in mapped.jobs] == [(4, 8), (2, 4), (1, 2)]
    assert mapped.extra["conversion"]["gpus_per_task"] == 2
    assert "gpus_per_task" not in plain.extra["conversion"]


@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_swf_mapping_refuses_bad_values(tmp_path: Path, bad) -> None:
    with pytest.raises(InputError, match="gpus_per_task must be a non-negative integer"):
        _convert(tmp_path, gpus_per_task=bad)


def test_cush_jobset_follows_the_paper() -> None:
    sets = [generate_cush_jobset(cpus=256, gpus=512, seed=seed) for seed in range(50)]
    jobs = [(wl, job) for wl in sets for job in wl.jobs]
    assert all(len(wl.jobs) == 20 for wl in sets)
    lengths = [wl.profiles[job.profile].delay for wl, job in jobs]
    assert min(lengths) >= 1 and max(lengths) <= 20
    short = sum(length <= 10 for length in lengths) / len(lengths)
    assert 0.70 < short < 0.80  # 75 % expected; 1,000 jobs
    assert all(0 <= job.subtime < 10 and job.subtime == int(job.subtime) for _, job in jobs)
    assert all(1 <= job.res <= 256 and 1 <= job.gpus <= 512 for _, job in jobs)
    # Dominant resource: 25-50 % of one total (64-128 CPUs or 128-256 GPUs), 5-10 % of the other.
    for _, job in jobs:
        cpu, gpu = job.res / 256, job.gpus / 512
        assert (0.24 <= cpu <= 0.51 and 0.04 <= gpu <= 0.11) or (
            0.24 <= gpu <= 0.51 and 0.04 <= cpu <= 0.11
        )
    kinds = {job.workload_type for _, job in jobs}
    assert kinds == {"compute", "network"}
    # req_time is the duration; the same seed gives the same set.
    assert all(
        wl.profiles[job.profile].req_time == wl.profiles[job.profile].delay for wl, job in jobs
    )
    again = generate_cush_jobset(cpus=256, gpus=512, seed=7)
    assert again.to_json() == sets[7].to_json()
    assert again.to_json() != sets[8].to_json()


@pytest.mark.parametrize(
    ("kwargs", "text"),
    [
        ({"cpus": 0}, "cpus must be a positive integer"),
        ({"nb_jobs": 2.5}, "nb_jobs must be a positive integer"),
        ({"max_length": 1}, "max_length must be at least 2"),
        ({"short_fraction": 1.5}, "short_fraction must be in [0, 1]"),
        ({"time_unit": 0.0}, "time_unit must be a positive number"),
    ],
)
def test_cush_jobset_bad_arguments(kwargs, text: str) -> None:
    args = {"cpus": 256, "gpus": 512, "seed": 0, **kwargs}
    with pytest.raises(InputError, match=text.replace("[", r"\[").replace("]", r"\]")):
        generate_cush_jobset(**args)
