"""The job-selection environment's fast paths against the statements they replace: the fit
test and visible jobs (``_look`` / ``_look_reference``), the EASY pass (``_backfill_around`` /
``_backfill_reference``), the observation (``build`` / ``build_reference``, with the
cluster's ``features_reference``) and the starvation guard's choices (``_guard_slots`` /
``_guard_slots_reference``, with ``max_wait``). Two environments play the same random
workload with the same actions, one through the fast paths and one through the references,
on the 4-core
learning platform (one node type, node memory) or the tiny GPU platform of the CuSH tests
(three node types, two with GPUs; jobs with GPUs and workload types); observations (bit for
bit), rewards, infos and the jobs' start and end times must agree at every step."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from gpu_helpers import TINY
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rl_helpers import LEARNING_PLATFORM

from hdeeprm.environment import JobSelectionEnv
from hdeeprm.workload.model import JobSpec, Profile, Workload

PROPERTY = settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


class ReferenceEnv(JobSelectionEnv):
    """Every fast path replaced by its reference."""

    _look = JobSelectionEnv._look_reference
    _backfill_around = JobSelectionEnv._backfill_reference
    _guard_slots = JobSelectionEnv._guard_slots_reference

    def _make_observer(self, manager: Any) -> Any:
        observer = super()._make_observer(manager)
        observer.build = observer.build_reference
        return observer


#: (gap to the previous submission, cores, requested time, run time / requested, memory MB
#: per task or 0, bandwidth, GPUs, workload type): ties of submission times, jobs running
#: past their request, tasks larger than a core's share of the tiny platform's node memory
#: (4,500 of 8,000 MB for 2 cores: one per node, so at most 3 such tasks, and never more:
#: a job that can never fit is rejected, which this test does not need).
JOB = st.tuples(
    st.sampled_from([0.0, 0.0, 0.5, 1.0, 3.0, 7.5]),
    st.integers(1, 4),
    st.sampled_from([1.0, 2.0, 5.0, 10.0, 40.0]),
    st.sampled_from([0.2, 0.5, 1.0, 1.5]),
    st.sampled_from([0.0, 100.0, 1500.0, 3000.0, 4500.0]),
    st.sampled_from([0.0, 4.0, 12.0]),
    st.sampled_from([0, 0, 1, 2, 5]),
    st.sampled_from([None, "compute", "network"]),
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


def _workload(jobs: list[tuple], no_memory: bool, gpus: bool, nb_res: int) -> Workload:
    specs, profiles, t = [], {}, 0.0
    for i, (gap, res, req, ratio, mem, bw, nb_gpus, kind) in enumerate(jobs):
        t += gap
        if mem > 4000.0:
            res = min(res, 3)
        extra: dict[str, Any] = {}
        if gpus and nb_gpus:
            extra["gpus"] = nb_gpus
            if kind is not None:
                extra["workload_type"] = kind
        specs.append(JobSpec(f"j{i}", t, res, f"p{i}", extra=extra))
        profiles[f"p{i}"] = Profile(
            f"p{i}",
            "delay",
            delay=req * ratio,
            extra={"req_time": req, "mem": 0.0 if no_memory else mem, "mem_bw": bw},
        )
    return Workload(nb_res, specs, profiles)


@PROPERTY
@given(
    jobs=st.lists(JOB, min_size=1, max_size=24),
    tiny=st.booleans(),
    no_memory=st.booleans(),
    backfill=st.booleans(),
    slots=st.integers(1, 6),
    log_features=st.booleans(),
    max_wait=st.sampled_from([None, None, 0.0, 2.0, 10.0]),
    seed=st.integers(0, 2**16),
)
def test_fast_paths_agree_with_their_references(
    jobs: list[tuple],
    tiny: bool,
    no_memory: bool,
    backfill: bool,
    slots: int,
    log_features: bool,
    max_wait: float | None,
    seed: int,
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        platform = LEARNING_PLATFORM
        if tiny:
            platform = folder / "tiny.json"
            platform.write_text(json.dumps(TINY))
        options = {
            "seed": 1,
            "platform_file_path": str(platform),
            "pybatsim": {
                "env": {"objective": "avg_job_slowdown", "actions": {"void": False}},
                "agent": {"type": "LEARNING", "run": "train"},
            },
        }
        (folder / "options.json").write_text(json.dumps(options))
        _workload(jobs, no_memory, tiny, 6 if tiny else 4).save(folder / "workload.json")
        kwargs = {"queue_slots": slots, "backfill": backfill, "log_features": log_features}
        kwargs["max_wait"] = max_wait
        fast, ref = (
            kind.from_options(
                folder / "options.json", folder / name, folder / "workload.json", **kwargs
            )
            for kind, name in ((JobSelectionEnv, "fast"), (ReferenceEnv, "reference"))
        )
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
