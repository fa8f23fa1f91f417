"""CuSH's heuristics (FCFS, SJF, DRF, Rand) and the scenario runner, worked by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest
from gpu_helpers import TINY

from hdeeprm.environment.job_pickers import CushPicker, cush_key
from hdeeprm.scenarios.cush import CushScenario
from hdeeprm.workload.model import JobSpec, Profile, Workload


def job(seq: int, subtime: float, req: float, res: int, gpus: int) -> SimpleNamespace:
    return SimpleNamespace(seq=seq, subtime=subtime, req_time=req, res=res, gpus=gpus)


JOBS = [job(0, 0.0, 5.0, 8, 1), job(1, 0.0, 3.0, 1, 6), job(2, 1.0, 1.0, 2, 2)]


@pytest.mark.parametrize(
    ("name", "best"),
    [
        ("FCFS", 1),  # 0 and 1 arrived together: the shorter one (1)
        ("SJF", 2),  # shortest requested time
        ("DRF", 2),  # dominant shares on 16 cores / 8 GPUs: 0.5, 0.75, 0.25
    ],
)
def test_heuristic_choices(name: str, best: int) -> None:
    assert CushPicker(name).choose(JOBS, 16, 8) == best
    assert min(range(3), key=lambda i: cush_key(name, 16, 8)(JOBS[i])) == best


def test_random_picker_is_seeded_and_unknown_names_refused() -> None:
    first = [CushPicker("Rand", 3).choose(JOBS, 16, 8) for _ in range(1)]
    picker = CushPicker("Rand", 3)
    assert [picker.choose(JOBS, 16, 8)] == first
    with pytest.raises(ValueError, match="unknown CuSH heuristic"):
        CushPicker("LJF")


def _tiny_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    return path


def test_sjf_depth_first_by_hand(tmp_path: Path) -> None:
    """Tiny platform of tests/decision/test_gpus.py (nodes of 2 cores + 4, 2, 0 GPUs).

    At 0 SJF starts C (1 s, 1 core + 2 GPUs: node 0, packed: no compute penalty), then B (2 s,
    1 + 1 on node 0: packed network job, penalty 1.0 -> 4 s); A (2 cores + 4 GPUs) does not
    fit (3 GPUs free). At 1 C ends: A goes to node 0 (1 core, GPUs 0, 1, 3) and node 1 (1 core,
    1 GPU): 2 nodes of n_min 1, n_max 3, spread 0.5, compute penalty 0.25 -> 5 s, 1 to 6.
    NTAT = (1 + 1 + 6 / 5) / 3; wait = (0 + 0 + 1) / 3 t.
    """
    scenario = CushScenario(_tiny_file(tmp_path))
    specs = [
        JobSpec("A", 0.0, 2, "A", extra={"gpus": 4, "workload_type": "compute"}),
        JobSpec("B", 0.0, 1, "B", extra={"gpus": 1, "workload_type": "network"}),
        JobSpec("C", 0.0, 1, "C", extra={"gpus": 2, "workload_type": "compute"}),
    ]
    profiles = {
        name: Profile(name, "delay", delay=d, extra={"req_time": d})
        for name, d in (("A", 4.0), ("B", 2.0), ("C", 1.0))
    }
    result = scenario.run(Workload(6, specs, profiles), "SJF", "DF")
    assert math.isclose(result.ntat, (1 + 1 + 1.2) / 3)
    assert math.isclose(result.wait, 1 / 3)
    assert math.isclose(result.penalty, (0 + 1.0 + 0.25) / 3)


def test_sierra_scenario_is_deterministic() -> None:
    scenario = CushScenario()
    jobs = scenario.jobset(11)
    assert len(jobs.jobs) == 20
    runs = [scenario.run(jobs, "Rand", "BF", seed=5) for _ in range(2)]
    assert runs[0] == runs[1]
    for name in ("FCFS", "SJF", "DRF"):
        result = scenario.run(jobs, name, "DF")
        assert result.ntat >= 1.0 and result.wait >= 0.0
        # Depth-first packs: network jobs are penalised, compute jobs are not.
        assert 0.0 <= result.penalty <= 1.0


@pytest.mark.parametrize(("policy", "finish"), [("depth_first", 20.0), ("breadth_first", 10.0)])
def test_job_selection_env_with_gpus_and_service_time(tmp_path: Path, policy, finish) -> None:
    """One network job of 2 cores + 5 GPUs for 10 s on the tiny platform: packed (depth-first)
    it pays the full network penalty (x 2), spread over the 3 nodes (breadth-first) none."""
    from hdeeprm.environment import JobSelectionEnv
    from hdeeprm.environment.job_pickers import run_episode
    from hdeeprm.platform import load_platform
    from hdeeprm.simulation.service_time import ServiceTimeModel

    platform_file = _tiny_file(tmp_path)
    workload = Workload(
        6,
        [JobSpec("X", 0.0, 2, "X", extra={"gpus": 5, "workload_type": "network"})],
        {"X": Profile("X", "delay", delay=10.0, extra={"req_time": 10.0})},
    )
    workload.save(tmp_path / "w.json")
    options = {
        "seed": 1,
        "platform_file_path": str(platform_file),
        "pybatsim": {
            "env": {"objective": "avg_job_slowdown", "actions": {"void": False}},
            "agent": {"type": "LEARNING", "run": "train", "hidden": 8, "lr": 0.01, "gamma": 0.9},
        },
    }
    (tmp_path / "o.json").write_text(json.dumps(options))
    env = JobSelectionEnv.from_options(
        tmp_path / "o.json", tmp_path / "run", tmp_path / "w.json", core_policy=policy
    )
    env.service_time = ServiceTimeModel.from_platform(load_platform(platform_file))
    run_episode(env, CushPicker("FCFS"))
    (job,) = env.engine.finished_jobs
    assert (job.start_time, job.finish_time, len(job.gpus)) == (0.0, finish, 5)


def test_summit_like_variant_has_six_gpus_per_node() -> None:
    scenario = CushScenario(gpus_per_node=6)
    assert len(scenario.platform.gpus) == 768
    assert {len(node.gpus) for node in scenario.platform.nodes} == {6}
    assert scenario.model.gpus_per_node == 6
    assert max(job.gpus for job in scenario.jobset(1).jobs) <= 768 // 2


@pytest.mark.parametrize(("policy", "finish", "reward"), [(0, 20.0, -1.0), (1, 10.0, 0.0)])
def test_two_step_policy_selector_sees_the_locality_penalty(
    tmp_path: Path, policy: int, finish: float, reward: float
) -> None:
    """CuSH's policy selector choosing depth- or breadth-first for one network job (2 cores +
    5 GPUs, 10 s) on the tiny platform: its reward is minus the penalty (cores all equal)."""
    from hdeeprm.environment import JobSelectionEnv
    from hdeeprm.platform import load_platform
    from hdeeprm.simulation.service_time import ServiceTimeModel

    platform_file = _tiny_file(tmp_path)
    Workload(
        6,
        [JobSpec("X", 0.0, 2, "X", extra={"gpus": 5, "workload_type": "network"})],
        {"X": Profile("X", "delay", delay=10.0, extra={"req_time": 10.0})},
    ).save(tmp_path / "w.json")
    options = {
        "seed": 1,
        "platform_file_path": str(platform_file),
        "pybatsim": {
            "env": {"objective": "avg_job_slowdown", "actions": {"void": False}},
            "agent": {"type": "LEARNING", "run": "train", "hidden": 8, "lr": 0.01, "gamma": 0.9},
        },
    }
    (tmp_path / "o.json").write_text(json.dumps(options))
    env = JobSelectionEnv.from_options(
        tmp_path / "o.json",
        tmp_path / "run",
        tmp_path / "w.json",
        queue_slots=2,
        policies=["depth_first", "breadth_first"],
    )
    env.service_time = ServiceTimeModel.from_platform(load_platform(platform_file))
    env.reset(seed=0)
    _, _, done, _, info = env.step((0, policy))
    assert done and info["policy_reward"] == reward
    (job,) = env.engine.finished_jobs
    assert job.finish_time == finish
