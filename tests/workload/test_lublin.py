"""Lublin-Feitelson generator: determinism, bounds, the model's own statistics."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from hdeeprm.errors import InputError
from hdeeprm.workload import (
    LublinParams,
    SwfReader,
    generate_lublin,
    lublin_workload,
    write_lublin_swf,
)
from hdeeprm.workload.lublin import COMMON_REQUESTS, _gamma_cdf, bucket_weights


def _arrays(jobs: list) -> dict[str, np.ndarray]:
    return {
        "submit": np.array([j.submit_time for j in jobs]),
        "run": np.array([j.run_time for j in jobs]),
        "size": np.array([j.allocated_processors for j in jobs]),
        "req": np.array([j.requested_time for j in jobs]),
    }


def test_same_seed_same_jobs_other_seed_other_jobs() -> None:
    assert generate_lublin(300, 64, seed=5) == generate_lublin(300, 64, seed=5)
    assert generate_lublin(300, 64, seed=5) != generate_lublin(300, 64, seed=6)


@pytest.mark.parametrize("nb_cores", [1, 100, 256])
def test_records_are_sane(nb_cores: int) -> None:
    jobs = generate_lublin(2000, nb_cores, seed=11)
    a = _arrays(jobs)
    assert [j.job_number for j in jobs] == list(range(1, 2001))
    assert a["size"].min() >= 1 and a["size"].max() <= nb_cores
    assert np.all(a["size"] == [j.requested_processors for j in jobs])
    assert np.all(a["submit"] >= 0) and np.all(np.diff(a["submit"]) >= 0)
    assert np.all(a["submit"] == np.floor(a["submit"]))
    # Run times: whole seconds, at least 1 s, log at most 12 (about 45 h).
    assert a["run"].min() >= 1 and a["run"].max() <= math.exp(12)
    assert np.all(a["run"] == np.floor(a["run"]))
    # Requested times never undercut the run time and are common values (or whole hours).
    assert np.all(a["req"] >= a["run"])
    assert all(r in COMMON_REQUESTS or r % 3600 == 0 for r in a["req"])
    assert all(j.status == 1 and j.queue_number == 1 and j.used_memory == -1 for j in jobs)


def test_single_core_machine_has_only_serial_jobs() -> None:
    assert {j.allocated_processors for j in generate_lublin(200, 1, seed=1)} == {1}


def test_batch_statistics_follow_the_model() -> None:
    a = _arrays(generate_lublin(20000, 256, seed=2))
    size = a["size"]
    # Serial probability 0.2927; the power-of-two share is at least pow2_prob 0.6686 (other
    # parallel draws can land on a power of two too). 20,000 draws: standard error ~0.003.
    assert abs(np.mean(size == 1) - 0.2927) < 0.015
    pow2 = np.mean((size > 1) & ((size & (size - 1)) == 0))
    assert 0.6686 - 0.015 < pow2 < 0.70
    # The hyper-gamma run time has mean ~10,150 s for these parameters (numerical integral of
    # the truncated mixture over the model's size distribution); the sample is heavy-tailed.
    assert 9000 < a["run"].mean() < 11500


def test_whole_sample_parameters_resemble_the_reference_trace() -> None:
    # lublin_256.swf.gz (reference lublin99, typeless, 256 processors, 10,000 jobs) has serial
    # 0.249, median size 8, median run time 137 s, median inter-arrival 116 s.
    a = _arrays(generate_lublin(10000, 256, seed=1, params=LublinParams.all_jobs(256)))
    assert abs(np.mean(a["size"] == 1) - 0.244) < 0.02
    assert np.median(a["size"]) == 8
    assert 100 < np.median(a["run"]) < 190
    assert 90 < np.median(np.diff(a["submit"])) < 150


def test_daily_cycle() -> None:
    weights = bucket_weights(6.1271, 5.2740)
    assert weights.shape == (48,) and weights.mean() == pytest.approx(1.0)
    # Busiest half-hour in the early afternoon, quietest in the early morning.
    assert 22 <= int(np.argmax(weights)) <= 32 and int(np.argmin(weights)) < 16
    # The incomplete gamma agrees with closed forms: shape 1 is the exponential distribution.
    assert _gamma_cdf(2.0, 1.0, 1.0) == pytest.approx(1 - math.exp(-2.0), rel=1e-12)
    assert _gamma_cdf(10.0, 1.0, 2.0) == pytest.approx(1 - math.exp(-5.0), rel=1e-12)
    # Shape 2, scale 1: P = 1 - e^-x (1 + x); x = 1 (series branch) and x = 7 (fraction).
    assert _gamma_cdf(1.0, 2.0, 1.0) == pytest.approx(1 - 2 * math.exp(-1.0), rel=1e-12)
    assert _gamma_cdf(7.0, 2.0, 1.0) == pytest.approx(1 - 8 * math.exp(-7.0), rel=1e-12)


def test_write_swf_with_header_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "lublin.swf.gz"
    jobs = write_lublin_swf(path, 100, 32, seed=9)
    reader = SwfReader(path)
    assert list(reader) == jobs
    assert any("seed 9" in line for line in reader.header)
    assert "; MaxProcs: 32" in reader.header
    assert any("serial_prob=0.2927" in line for line in reader.header)


def test_direct_workload() -> None:
    result = lublin_workload(50, 16, seed=4, reference_speed=2.0)
    jobs = generate_lublin(50, 16, seed=4)
    wl = result.workload
    assert wl.nb_res == 16 and len(wl.jobs) == 50 and result.summary.kept == 50
    first = wl.profiles[wl.jobs[0].profile]
    assert wl.jobs[0].subtime == 0.0
    assert first.cpu == jobs[0].run_time * 2e9
    assert first.extra["req_time"] == jobs[0].requested_time and first.extra["mem"] == 0.0
    assert result.limits.max_core <= 16


def test_bad_arguments() -> None:
    with pytest.raises(InputError, match="nb_cores"):
        generate_lublin(10, 0, seed=1)
    with pytest.raises(InputError, match="nb_jobs"):
        generate_lublin(0, 8, seed=1)
    with pytest.raises(InputError, match="max_factor"):
        generate_lublin(10, 8, seed=1, max_request_factor=0.5)
