"""One window replayed under one scheduler, and the figures a comparison reports of it.

Every figure counts every job of the window. The bounded slowdown uses tau = 10 s (seed
``001``'s and RLScheduler's convention). The mean is what schedulers are chosen by; the worst
wait and the worst bounded slowdown say whether the mean was bought by starving someone.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hdeeprm.analysis.metrics import ended_job_metrics
from hdeeprm.comparison.setting import TraceSetting
from hdeeprm.decision import ActionSpace, FixedPair, WorkloadManager
from hdeeprm.decision.workload_manager import SchedulingStrategy
from hdeeprm.simulation import Engine, run
from hdeeprm.workload.model import Workload

#: The core policy that places every started job (identical cores: any would do).
PLACEMENT = ("first", "high_gflops")


@dataclass(frozen=True, slots=True)
class WindowScore:
    """Figures of one window (seconds for waits)."""

    mean_bsld: float
    mean_wait: float
    max_wait: float
    max_bsld: float
    nb_jobs: int

    @staticmethod
    def mean_of(scores: Sequence[WindowScore]) -> WindowScore:
        """Window means of the means; the worst of the worsts."""
        n = len(scores)
        if not n:
            raise ValueError("no window to average")
        return WindowScore(
            math.fsum(s.mean_bsld for s in scores) / n,
            math.fsum(s.mean_wait for s in scores) / n,
            max(s.max_wait for s in scores),
            max(s.max_bsld for s in scores),
            sum(s.nb_jobs for s in scores),
        )


def replay(setting: TraceSetting, workload: Workload, scheduler: SchedulingStrategy) -> WindowScore:
    """Simulate ``workload`` on ``setting``'s platform with ``scheduler`` choosing the jobs."""
    actions = ActionSpace([PLACEMENT], void=False)
    manager = WorkloadManager(
        setting.platform, actions, FixedPair(actions, PLACEMENT), seed=1, scheduler=scheduler
    )
    engine = Engine(setting.sim_platform, workload)
    run(engine, manager)
    return window_score(engine, workload, repr(scheduler))


def window_score(engine: Engine, workload: Workload, who: str) -> WindowScore:
    """The figures of ``workload`` once ``engine`` played it (under ``who``, named if a job
    never ended)."""
    jobs = engine.finished_jobs
    if len(jobs) != len(workload.jobs):
        raise RuntimeError(
            f"{len(workload.jobs) - len(jobs)} jobs of the window never ended under {who}"
        )
    m = ended_job_metrics(jobs)
    return WindowScore(
        m.mean_bounded_slowdown, m.mean_waiting, m.max_waiting, m.max_bounded_slowdown, m.nb_ran
    )


def replay_all(
    setting: TraceSetting,
    workloads: Sequence[Workload],
    make: Callable[[], SchedulingStrategy],
) -> list[WindowScore]:
    """Each workload under a fresh scheduler from ``make``."""
    return [replay(setting, w, make()) for w in workloads]
