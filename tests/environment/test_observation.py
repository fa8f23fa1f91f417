"""Observation values on hand-built queues and platform states."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from hdeeprm.decision import ActionSpace, JobRecord, WorkloadManager
from hdeeprm.environment import ObservationBuilder, observation_size, variation_ratio
from hdeeprm.platform import load_platform
from hdeeprm.workload.limits import JobLimits

REPO = Path(__file__).resolve().parents[2]
LIMITS = JobLimits(max_time=100.0, max_core=8, max_mem=1000.0, max_mem_bw=20.0)


def manager() -> WorkloadManager:
    platform = load_platform(REPO / "platform_examples" / "learning.json")
    return WorkloadManager(platform, ActionSpace(None, void=True), seed=0)


def push(m: WorkloadManager, jobs: list[tuple[float, int, float, float]]) -> list[JobRecord]:
    records = []
    for i, (req, res, mem, bw) in enumerate(jobs):
        record = JobRecord(str(i), i, 0.0, res, req, mem, bw)
        m.job_queue.push(record)
        records.append(record)
    return records


def test_minimal_quartiles_by_hand() -> None:
    m = manager()
    builder = ObservationBuilder("minimal", m, LIMITS, queue_sensitivity=0.5)
    push(
        m,
        [
            (10.0, 1, 100.0, 4.0),
            (20.0, 2, 100.0, 8.0),
            (40.0, 4, 500.0, 12.0),
            (100.0, 8, 2000.0, 24.0),
        ],
    )
    obs = builder.build()
    assert obs.dtype == np.float32 and obs.shape == (21,)
    # 4 values, linear interpolation: Q1 at position 0.75, median 1.5, Q3 2.25.
    # fmt: off
    expected = [
        # time / 100: 10, 10 + .75 * 10 = 17.5, (20 + 40) / 2 = 30, 40 + .25 * 60 = 55, 100
        0.1, 0.175, 0.3, 0.55, 1.0,
        # cores / 8: 1, 1.75, 3, 4 + .25 * 4 = 5, 8
        0.125, 0.21875, 0.375, 0.625, 1.0,
        # memory / 1000: 100, 100, 300, 500 + .25 * 1500 = 875, 2000 -> clipped to 1
        0.1, 0.1, 0.3, 0.875, 1.0,
        # bandwidth / 20: 4, 4 + .75 * 4 = 7, 10, 12 + .25 * 12 = 15, 24 -> clipped to 1
        0.2, 0.35, 0.5, 0.75, 1.0,
        # queue 0 -> 4 jobs: +400% (an empty queue counts as 1), clipped to 1
        1.0,
    ]
    # fmt: on
    np.testing.assert_allclose(obs, expected, rtol=1e-6)
    # no change: 0.5; one job fewer (4 -> 3): -25% with sensitivity 0.5 -> 0.5 - 0.25
    assert builder.build()[20] == 0.5
    m.job_queue.remove(m.job_queue.jobs[0])
    assert builder.build()[20] == pytest.approx(0.25)


def test_empty_queue_unknown_time_and_zero_limits() -> None:
    m = manager()
    limits = JobLimits(max_time=50.0, max_core=4, max_mem=0.0, max_mem_bw=10.0)
    builder = ObservationBuilder("minimal", m, limits, queue_sensitivity=0.05)
    obs = builder.build()
    np.testing.assert_array_equal(obs, [0.0] * 20 + [0.5])  # empty queue, no variation
    push(m, [(math.inf, 2, 300.0, 5.0)])
    obs = builder.build()
    # infinite requested time reads as the limit; memory limit 0 reads 0
    np.testing.assert_allclose(obs[:20], [1.0] * 5 + [0.5] * 5 + [0.0] * 5 + [0.5] * 5)


def test_small_and_normal_platform_parts() -> None:
    m = manager()
    builder = ObservationBuilder("normal", m, LIMITS, queue_sensitivity=0.05)
    assert builder.size == observation_size("normal", 1, 2, 4) == 21 + 1 + 2 + 12
    pool = m.pool
    # job j on core 0 (8000 MB, 24 GB/s, req 10 s) and k on core 1 (8000 MB, 16 GB/s, no
    # requested time), both on processor 0 (32 GB/s): 40 > 32 -> over-subscribed, P1
    pool.take(0, "j", 8000.0, 24.0)
    pool.take(1, "k", 8000.0, 16.0)
    pool.settle([0, 1], 0.0)
    m.running["j"] = JobRecord("j", 0, 0.0, 1, 10.0, 8000.0, 24.0, alloc=(0,), start=0.0)
    m.running["k"] = JobRecord("k", 1, 0.0, 1, math.inf, 8000.0, 16.0, alloc=(1,), start=0.0)
    m.now = 2.5
    obs = builder.build()
    platform_part = obs[21:]
    # fmt: off
    np.testing.assert_allclose(
        platform_part,
        [
            0.5,  # node: 32000 - 16000 MB free of 32000
            0.0, 1.0,  # processor 0 over-subscribed (free bandwidth < 0 -> 0), processor 1 idle
            0.75, 0.75, 0.0, 0.0,  # speed fractions: P1, P1, P3, P3
            1.0, 1.0, 0.05, 0.05,  # power fractions
            0.75, 1.0, 0.0, 0.0,  # remaining: 1 - 2.5 / 10; unknown request: 1; idle: 0
        ],
        rtol=1e-6,
    )
    # fmt: on
    small = ObservationBuilder("small", m, LIMITS, queue_sensitivity=0.05).build()
    np.testing.assert_array_equal(small, obs[:24])


def test_variation_ratio_clipping() -> None:
    assert variation_ratio(10, 10, 0.2) == 0.5
    assert variation_ratio(11, 10, 0.2) == pytest.approx(0.75)  # +10% of a 20% range
    assert variation_ratio(13, 10, 0.2) == 1.0  # +30% clipped
    assert variation_ratio(5, 10, 0.2) == 0.0  # -50% clipped
    assert variation_ratio(0, 0, 0.2) == 0.5


def test_incremental_sorted_statistics_equal_a_full_sort(tmp_path) -> None:
    """The minimal observation read from the scheduler's sorted lists is, bit for bit, the
    statistics of a full NumPy sort of the queue (including infinite requested times)."""
    import numpy as np
    from rl_helpers import random_jobs, write_options, write_workload

    from hdeeprm.environment import HeterogeneousClusterEnv, queue_statistics
    from hdeeprm.environment.observation import sorted_statistics

    jobs = random_jobs(80, seed=9)
    jobs[5][4]["req_time"] = float("inf")
    env = HeterogeneousClusterEnv.from_options(
        write_options(tmp_path / "opt", void=True), tmp_path / "run", write_workload(tmp_path, jobs)
    )
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    done, checked = False, 0
    while not done:
        queue = env.manager.job_queue.jobs
        values = np.array([[j.req_time, j.res, j.mem, j.mem_bw] for j in queue]).T.reshape(4, -1)
        expected = queue_statistics(values, env._observer.limits).astype(np.float32)
        assert np.array_equal(obs[:20], expected)
        checked += len(queue) > 3
        obs, _, done, _, _ = env.step(int(rng.integers(env.action_space.n)))
    assert checked > 5
    assert sorted_statistics(([], [], [], []), [1.0, 1.0, 1.0, 1.0]) == [0.0] * 20
    zero = sorted_statistics(([1.0, 3.0], [1, 2], [5.0, 6.0], [2.0, 2.0]), [4.0, 0.0, 6.0, 4.0])
    assert zero[:5] == [0.25, 0.375, 0.5, 0.625, 0.75] and zero[5:10] == [0.0] * 5


@pytest.mark.parametrize("sensitivity", [0.05, 0.2, 0.5])
def test_variation_entry_is_variation_ratio_bit_for_bit(sensitivity: float) -> None:
    """The builder computes the variation entry inline; it must be the float32 of
    ``variation_ratio`` exactly, across rises, drops, clipping and the empty queue. By hand,
    with sensitivity 0.2: 0 -> 1 job is +100% (an empty queue counts as 1): clipped to 1;
    10 -> 11 is +10%: 0.5 + 0.1 / 0.4 = 0.75; 11 -> 5 is -55%: clipped to 0."""
    m = manager()
    builder = ObservationBuilder("minimal", m, LIMITS, queue_sensitivity=sensitivity)
    sizes = [0, 1, 1, 2, 11, 10, 11, 5, 0, 0, 3, 1]
    records: list[JobRecord] = []
    previous, seq = 0, 0
    for size in sizes:
        while len(records) < size:
            records.append(JobRecord(str(seq), seq, 0.0, 1, 10.0, 100.0, 1.0))
            m.job_queue.push(records[-1])
            seq += 1
        while len(records) > size:
            m.job_queue.remove(records.pop())
        obs = builder.build()
        assert obs[20] == np.float32(variation_ratio(size, previous, sensitivity))
        if sensitivity == 0.2 and (previous, size) in {(0, 1), (10, 11), (11, 5)}:
            assert obs[20] == {(0, 1): 1.0, (10, 11): 0.75, (11, 5): 0.0}[(previous, size)]
        previous = size
