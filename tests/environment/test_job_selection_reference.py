"""The job-selection environment's fast paths against the statements they replace: the fit
test and visible jobs (``_look`` / ``_look_reference``), the EASY pass (``_backfill_around`` /
``_backfill_reference``) and the observation (``build`` / ``build_reference``, with the
cluster's ``features_reference``). Two environments play the same random workload on the
4-core learning platform (two node types, per-node memory) with the same actions, one through
the fast paths and one through the references; observations (bit for bit), rewards, infos and
the jobs' start and end times must agree at every step."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rl_helpers import write_options, write_workload

from hdeeprm.environment import JobSelectionEnv

PROPERTY = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


class ReferenceEnv(JobSelectionEnv):
    """Every fast path replaced by its reference."""

    _look = JobSelectionEnv._look_reference
    _backfill_around = JobSelectionEnv._backfill_reference

    def _make_observer(self, manager: Any) -> Any:
        observer = super()._make_observer(manager)
        observer.build = observer.build_reference
        return observer


#: (gap to the previous submission, cores, requested time, run time / requested, memory MB
#: per task or 0, bandwidth): ties of submission times, jobs running past their request,
#: tasks larger than a node's memory share.
JOB = st.tuples(
    st.sampled_from([0.0, 0.0, 0.5, 1.0, 3.0, 7.5]),
    st.integers(1, 4),
    st.sampled_from([1.0, 2.0, 5.0, 10.0, 40.0]),
    st.sampled_from([0.2, 0.5, 1.0, 1.5]),
    st.sampled_from([0.0, 100.0, 1500.0, 3000.0]),
    st.sampled_from([0.0, 4.0, 12.0]),
)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray):
        return (
            isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and a.tobytes() == b.tobytes()
        )
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float):
        return isinstance(b, float) and a.hex() == b.hex()
    return bool(a == b)


@PROPERTY
@given(
    jobs=st.lists(JOB, min_size=1, max_size=24),
    no_memory=st.booleans(),
    backfill=st.booleans(),
    slots=st.integers(1, 6),
    log_features=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_fast_paths_agree_with_their_references(
    jobs: list[tuple[float, int, float, float, float, float]],
    no_memory: bool,
    backfill: bool,
    slots: int,
    log_features: bool,
    seed: int,
) -> None:
    rows, t = [], 0.0
    for i, (gap, res, req, ratio, mem, bw) in enumerate(jobs):
        t += gap
        extra = {"req_time": req, "mem": 0.0 if no_memory else mem, "mem_bw": bw}
        rows.append((f"j{i}", t, res, req * ratio * 4.2e9, extra))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        options = write_options(folder / "opt")
        workload = write_workload(folder, rows)
        kwargs = {"queue_slots": slots, "backfill": backfill, "log_features": log_features}
        fast = JobSelectionEnv.from_options(options, folder / "run", workload, **kwargs)
        ref = ReferenceEnv.from_options(options, folder / "run2", workload, **kwargs)
        obs_f, info_f = fast.reset(seed=seed)
        obs_r, info_r = ref.reset(seed=seed)
        assert _same(obs_f, obs_r) and _same(info_f, info_r)
        rng = np.random.default_rng(seed)
        done = fast.finished
        assert done == ref.finished
        while not done:
            valid = np.flatnonzero(info_f["action_mask"])
            action = int(valid[rng.integers(len(valid))])
            if rng.random() < 0.1:  # sometimes a masked action (played as do nothing)
                action = int(rng.integers(slots + 1))
            assert [j.id for j in fast.visible_jobs] == [j.id for j in ref.visible_jobs]
            obs_f, r_f, done, _, info_f = fast.step(action)
            obs_r, r_r, done_r, _, info_r = ref.step(action)
            assert done == done_r
            assert _same(obs_f, obs_r) and _same(r_f, r_r) and _same(info_f, info_r)
        ends = {j.id: (j.start_time, j.finish_time) for j in fast.engine.finished_jobs}
        assert ends == {j.id: (j.start_time, j.finish_time) for j in ref.engine.finished_jobs}
