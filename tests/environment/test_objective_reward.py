"""Rewards add up to the objective: whole episodes against ``hdeeprm-metrics``.

For every objective, the rewards of whole episodes (random actions, so many decision points,
waiting, over-subscription) are summed and compared with the objective computed independently:

* from the engine's job times at full precision with
  :func:`hdeeprm.analysis.metrics.job_metrics` (the function behind ``hdeeprm-metrics``):
  equal to 1e-9 relative (float rounding of the telescoped sum);
* from the episode's Batsim output files with ``summarize_run`` (what ``hdeeprm-metrics``
  prints; utilisation from the allocations and times in ``out_jobs.csv``): equal to 1e-5,
  because the files store times to 6 decimals.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from rl_helpers import LEARNING_PLATFORM, random_jobs, write_options, write_workload

from hdeeprm.analysis.metrics import job_metrics, summarize_run
from hdeeprm.analysis.runfolder import RunFolder
from hdeeprm.environment import HeterogeneousClusterEnv
from hdeeprm.environment.objective_reward import TIME_UNIT
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import options_from_json
from hdeeprm.platform import load_platform

OBJECTIVES = (
    "avg_job_slowdown",
    "avg_job_completion",
    "avg_utilization",
    "makespan",
    "energy_consumption",
    "edp",
)
REPO = Path(__file__).resolve().parents[2]


def p_max(platform_file: Path) -> float:
    """Every core at full load: the platform's power in P0 (W)."""
    return sum(core.power for core in load_platform(platform_file).cores)


def signed(objective: str, jobs, energy: float, busy: float, cores: int, power: float) -> float:
    """An objective in reward units, signed as the rewards are (utilisation +, costs -)."""
    if objective == "avg_job_slowdown":
        return -jobs.mean_slowdown
    if objective == "avg_job_completion":
        return -jobs.mean_turnaround / TIME_UNIT
    if objective == "makespan":
        return -jobs.makespan / TIME_UNIT
    if objective == "energy_consumption":
        return -energy / (power * TIME_UNIT)
    if objective == "edp":
        return -energy * jobs.makespan / (power * TIME_UNIT**2)
    return busy / (cores * jobs.makespan)


def exact_return(objective: str, env: HeterogeneousClusterEnv, power: float) -> float:
    """The objective from the engine's job times (full precision) through ``job_metrics``."""
    engine = env.engine
    ran = [j for j in engine.finished_jobs if j.start_time is not None]
    jobs = job_metrics(
        [j.spec.subtime for j in ran], [j.start_time for j in ran], [j.finish_time for j in ran]
    )
    busy = sum(len(j.alloc) * (j.finish_time - j.start_time) for j in ran)
    return signed(objective, jobs, engine.consumed_energy, busy, engine.nb_hosts, power)


def expected_return(objective: str, folder: Path, power: float) -> float:
    """The episode's objective from its output files, in reward units, signed."""
    summary = summarize_run(folder)
    jobs = summary.jobs
    if objective == "avg_job_slowdown":
        return -jobs.mean_slowdown
    if objective == "avg_job_completion":
        return -jobs.mean_turnaround / TIME_UNIT
    if objective == "makespan":
        return -jobs.makespan / TIME_UNIT
    if objective == "energy_consumption":
        return -summary.energy_j / (power * TIME_UNIT)
    if objective == "edp":
        return -summary.energy_j * jobs.makespan / (power * TIME_UNIT**2)
    run = RunFolder(folder)
    table = run.jobs
    index, low, high = run.allocations
    duration = (table.finish - table.start)[index]
    busy = float(np.sum((high - low + 1) * duration))
    return busy / (run.nb_cores * jobs.makespan)


def episode_return(env: HeterogeneousClusterEnv, seed: int, folder: Path) -> tuple[float, int]:
    env.reset(seed=seed, options={"trace": True})
    rng = np.random.default_rng(seed)
    total, steps, done = 0.0, 0, False
    while not done:
        _, reward, done, _, _ = env.step(int(rng.integers(env.action_space.n)))
        total += reward
        steps += 1
    env.write_outputs(folder)
    return total, steps


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_episode_return_is_the_objective(tmp_path, objective) -> None:
    # Windows of 25 of 60 jobs: submissions shifted to start at 0, as hdeeprm-metrics assumes
    # for makespan and energy (both measured from t = 0).
    options = write_options(
        tmp_path / "opt",
        objective=objective,
        void=True,
        episodes={"window_jobs": 25, "train_jobs": [0, 60]},
    )
    workload = write_workload(tmp_path / "wl", random_jobs(60, seed=11))
    env = HeterogeneousClusterEnv.from_options(options, tmp_path / "run", workload)
    power = p_max(LEARNING_PLATFORM)
    returns = []
    for seed in range(2):
        folder = tmp_path / f"out{seed}"
        total, steps = episode_return(env, seed, folder)
        assert steps > 10
        assert total == pytest.approx(exact_return(objective, env, power), rel=1e-9)
        assert total == pytest.approx(expected_return(objective, folder, power), rel=1e-5)
        returns.append(total)
    assert len(set(returns)) > 1  # different windows and actions, different objectives


def test_gaia_window_returns_match_metrics(tmp_path, gaia_trace) -> None:
    platform = REPO / "platform_examples" / "gaia.json"
    raw = {
        "seed": 1,
        "nb_jobs": 700,
        "workload_file_path": str(gaia_trace),
        "platform_file_path": str(platform),
        "pybatsim": {
            "env": {
                "objective": "avg_job_slowdown",
                "observation": "minimal",
                "episodes": {"window_jobs": 300, "train_jobs": [0, 700]},
            },
            "agent": {"type": "LEARNING"},
        },
    }
    inputs = prepare_inputs(options_from_json(raw, tmp_path / "options.json"), tmp_path)
    power = p_max(platform)
    for objective in ("avg_job_slowdown", "avg_utilization", "edp"):
        env = HeterogeneousClusterEnv(inputs=inputs)
        env.objective = objective
        env.reset(seed=0)  # the same window for every objective
        folder = tmp_path / objective
        total, _ = episode_return(env, 0, folder)
        assert total == pytest.approx(exact_return(objective, env, power), rel=1e-9)
        assert total == pytest.approx(expected_return(objective, folder, power), rel=1e-5)
