"""CuSH's two-step agent on CuSH job sets: environments, one job set per episode, evaluation.

The heuristics of :mod:`hdeeprm.scenarios.cush` run a job set through the engine directly;
the learned agent needs :class:`~hdeeprm.environment.JobSelectionEnv`, whose episodes are
windows of one workload. Here an episode is one whole CuSH job set instead
(:class:`JobSetEpisodes`): training episodes draw a set among the training seeds, evaluation
episode ``k`` is the ``k``-th held-out set. The environment has CuSH's two allocation
policies (``depth_first``, ``breadth_first``) for its policy selector and the scenario's
service-time model, so the policy selector is rewarded with minus the locality penalty.

The environment's reward adds up to minus the average bounded slowdown (``tau = 10 s``). With
``time_unit >= 10`` s every job runs at least ``tau``, so that is exactly minus the job set's
**NTAT** (turnaround / service time, both including the penalty): the job selector is
trained on the paper's metric. :func:`play_jobset` measures NTAT and wait the way
:meth:`~hdeeprm.scenarios.cush.CushScenario.run` does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hdeeprm.analysis.metrics import ended_job_metrics
from hdeeprm.environment.episodes import WorkloadEpisodes
from hdeeprm.environment.job_selection import JobSelectionEnv
from hdeeprm.inputs import ExperimentInputs, prepare_inputs
from hdeeprm.options import load_options
from hdeeprm.scenarios.cush import CUSH_POLICIES, CushResult, CushScenario
from hdeeprm.workload.model import JobSpec, Profile, Workload

#: The policy selector's choices, in CuSH's order (DF, BF).
AGENT_POLICIES: tuple[str, ...] = (CUSH_POLICIES["DF"], CUSH_POLICIES["BF"])


#: CuSH's job sets as episodes: one whole set per episode.
JobSetEpisodes = WorkloadEpisodes


def merged_jobsets(jobsets: Sequence[Workload]) -> Workload:
    """All job sets as one workload (job ids ``k:id``): it only sizes the observation's job
    limits, which must bound every set's jobs."""
    jobs: list[JobSpec] = []
    profiles: dict[str, Profile] = {}
    for k, jobset in enumerate(jobsets):
        for job in jobset.jobs:
            name = f"{k}:{job.id}"
            old = jobset.profiles[job.profile]
            profiles[name] = Profile(name, old.type, delay=old.delay, extra=dict(old.extra))
            jobs.append(JobSpec(name, job.subtime, job.res, name, job.walltime, dict(job.extra)))
    jobs.sort(key=lambda job: job.subtime)
    return Workload(jobsets[0].nb_res, jobs, profiles, "cush_jobsets")


def prepare_agent_inputs(
    scenario: CushScenario,
    platform_file: str | os.PathLike[str],
    jobsets: Sequence[Workload],
    folder: str | os.PathLike[str],
    *,
    seed: int = 0,
) -> ExperimentInputs:
    """Write an options file and the merged job sets into ``folder`` (created; a run folder
    of hdeeprm's own) and prepare the environment inputs, with the scenario's penalties."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    options = {
        "seed": seed,
        "platform_file_path": str(Path(platform_file).resolve()),
        "service_time": {"compute": scenario.model.compute, "network": scenario.model.network},
        "pybatsim": {
            "env": {"objective": "avg_job_slowdown", "actions": {"void": False}},
            "agent": {"type": "CLASSIC", "policy_pair": "shortest-high_gflops"},
        },
    }
    (folder / "options.json").write_text(json.dumps(options, indent=2))
    merged_jobsets(jobsets).save(folder / "jobsets.json")
    return prepare_inputs(
        load_options(folder / "options.json"), folder, custom_workload=folder / "jobsets.json"
    )


@dataclass(frozen=True)
class CushEnvFactory:
    """A picklable recipe for a :class:`JobSelectionEnv` whose episodes are ``jobsets``."""

    inputs: ExperimentInputs
    jobsets: tuple[Workload, ...]
    split: str = "train"
    queue_slots: int = 5
    policies: tuple[str, ...] = AGENT_POLICIES

    def __call__(self) -> JobSelectionEnv:
        env = JobSelectionEnv(
            inputs=self.inputs,
            split="all",
            queue_slots=self.queue_slots,
            policies=self.policies,
        )
        env.windows = JobSetEpisodes(self.jobsets, self.split)
        env.split = self.split
        return env


def play_jobset(
    env: JobSelectionEnv, act: Callable[[JobSelectionEnv], Any], k: int, time_unit: float
) -> CushResult:
    """Play evaluation job set ``k`` with ``act(env) -> action``; NTAT, wait (in ``t``) and
    mean penalty as :meth:`CushScenario.run` measures them."""
    env.reset(options={"window": k})
    done = env.finished
    while not done:
        _, _, done, _, _ = env.step(act(env))
    assert env.engine is not None
    jobs = env.engine.finished_jobs
    metrics = ended_job_metrics(jobs)
    penalty = sum(j.service_factor - 1.0 for j in jobs) / len(jobs)
    return CushResult(metrics.mean_slowdown, metrics.mean_waiting / time_unit, penalty)


__all__ = [
    "AGENT_POLICIES",
    "CushEnvFactory",
    "JobSetEpisodes",
    "merged_jobsets",
    "play_jobset",
    "prepare_agent_inputs",
]
