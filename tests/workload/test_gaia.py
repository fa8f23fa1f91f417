"""A converted window of the real UniLu Gaia trace, checked by value (skips without traces).

The first lines of UniLu-Gaia-2014-1.swf.gz are::

    1 0 477768 35541 160 32096 89734 160 108000 -1 1 1 1 1 1 -1 -1 -1
    2 83558 1 432024 36 1320 7566 36 432000 -1 0 2 2 2 1 -1 -1 -1
    3 195861 1 278442 64 278442 34640 64 432000 -1 1 3 3 3 1 -1 -1 -1
    4 278659 2 268225 4 4023 4864 4 345600 -1 1 4 4 4 1 -1 -1 -1
    5 339016 1 305581 24 1783 14805 24 432000 -1 0 5 5 5 1 -1 -1 -1
    6 339299 1 214651 24 358 2560 24 432000 -1 1 5 5 6 1 -1 -1 -1
"""

from __future__ import annotations

from pathlib import Path

from hdeeprm.workload import convert_swf


def test_first_gaia_jobs(gaia_trace: Path) -> None:
    result = convert_swf(gaia_trace, reference_speed=1.0, max_cores=2280, seed=0, nb_jobs=100)
    wl = result.workload
    job = wl.jobs[0]
    profile = wl.profiles[job.profile]
    assert (job.id, job.subtime, job.res) == ("1", 0.0, 160)
    assert profile.cpu == 35541e9  # run 35,541 s x 1 GFLOPS
    assert profile.extra["req_time"] == 108000.0 and profile.extra["req_ops"] == 108000e9
    assert profile.extra["mem"] == 89.734  # requested memory unknown: used 89,734 KB
    assert len(wl.jobs) == 100 and result.summary.stopped_early


def test_gaia_window_after_the_four_early_jobs(gaia_trace: Path) -> None:
    result = convert_swf(
        gaia_trace, reference_speed=1.0, max_cores=2280, seed=0, start=4, nb_jobs=1000
    )
    wl = result.workload
    first, second = wl.jobs[0], wl.jobs[1]
    assert (first.id, first.subtime, first.res) == ("5", 0.0, 24)
    assert second.id == "6" and second.subtime == 339299 - 339016  # 283 s
    assert wl.profiles["5"].cpu == 305581e9 and wl.profiles["5"].extra["mem"] == 14.805
    assert result.summary.skipped == 4 and result.summary.kept == 1000
    assert result.limits.max_core <= 2280


def test_whole_gaia_counts(gaia_trace: Path) -> None:
    result = convert_swf(gaia_trace, reference_speed=1.0, max_cores=2280, seed=0)
    summary = result.summary
    assert summary.jobs_read == 51899
    # 127 jobs have run time -1, one has run time 0; no job asks for more than 516 cores.
    assert summary.dropped["unknown_run_time"] == 127
    assert summary.dropped["zero_run_time"] == 1
    assert summary.dropped_total == 128 and summary.kept == 51771
    # Gaia v1 records no requested memory: every kept job falls back to used memory.
    assert summary.mem_from_used_memory == 51771
    assert result.limits.max_core == 516
