"""Fixed job pickers for :class:`~hdeeprm.environment.job_selection.JobSelectionEnv`.

A heuristic picker ranks the *visible* jobs by one of the orderings of
:mod:`hdeeprm.scheduling.orderings` (FCFS, SPF, WFP3, UNICEP, F1, ...; the predicted run
time is the requested time) and picks the first. It acts in the same environment as a
learned agent, through the same actions, so results compare like for like:

* without backfilling, if the first-ranked job does not fit now the picker **does nothing**
  and waits for it (no job jumps the queue: the heuristic as a plain list scheduler);
* with backfilling, it picks the first-ranked job whatever its size and the environment
  backfills around it (EASY with that ordering over the visible queue).

``SJF`` is accepted as another name of ``SPF`` (shortest requested time first).

:class:`CushPicker` plays CuSH's baselines (section 4.1), on jobs that request CPUs and GPUs:
``FCFS`` (earliest submission, ties to the shortest requested time), ``SJF`` (shortest
requested time, ties to the earliest submission), ``DRF`` (Dominant Resource Fairness: the
smallest dominant share ``max(cores / platform cores, gpus / platform GPUs)``) and ``Rand``
(uniform, seeded). As in DeepRM and CuSH, the heuristic ranks only the visible jobs that fit
now (the others are masked), so a job that does not fit never blocks a smaller one; it does
nothing when none fits. :func:`cush_key` is the ranking, shared with the scenario runner
(:mod:`hdeeprm.scenarios.cush`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from hdeeprm.scheduling.orderings import ORDERINGS, sort_key

#: The RLScheduler baselines.
BASELINES = ("FCFS", "SJF", "WFP3", "UNICEP", "F1")
ALIASES = {"SJF": "SPF"}


class _View:
    """What an ordering reads from a queued job (``pred``: the requested time)."""

    __slots__ = ("seq", "subtime", "res", "pred", "slot")

    def __init__(self, record: Any, slot: int) -> None:
        self.seq = record.seq
        self.subtime = record.subtime
        self.res = record.res
        self.pred = record.req_time
        self.slot = slot


class HeuristicPicker:
    """Pick the visible job an ordering ranks first (see the module docstring).

    Args:
        ordering: an ordering name of :mod:`hdeeprm.scheduling.orderings`, or ``SJF``.
    """

    def __init__(self, ordering: str) -> None:
        name = ALIASES.get(ordering.upper(), ordering.upper())
        if name not in ORDERINGS:
            known = ", ".join(sorted(set(ORDERINGS) | set(ALIASES)))
            raise ValueError(f"unknown ordering {ordering!r}; expected one of {known}")
        self.name = ordering
        self.ordering = name

    def rank(self, env: Any) -> list[int]:
        """Slots of the visible jobs, best first."""
        key = sort_key(self.ordering, env.manager.now)
        views = [_View(job, slot) for slot, job in enumerate(env.visible_jobs)]
        return [view.slot for view in sorted(views, key=key)]

    def __call__(self, env: Any) -> int:
        """The action for ``env``'s current state."""
        return first_or_wait(env, self.rank(env))


def first_or_wait(env: Any, ranked: list[int]) -> int:
    """A list scheduler's action: the first-ranked slot if it may start now, else do nothing
    (the job waits at the head); when do nothing is invalid (it could never end), the first
    ranked job that may start. With backfilling every visible job may be picked, so this is
    the first-ranked one; while the environment's starvation guard reserves a starving job,
    it is the first-ranked job that may backfill around it (EASY with this ordering)."""
    mask = env.action_masks()
    if ranked and mask[ranked[0]]:
        return ranked[0]
    if getattr(env, "backfill", False):
        return next((slot for slot in ranked if mask[slot]), int(env.do_nothing))
    if mask[env.do_nothing] or not ranked:
        return int(env.do_nothing)
    return next(slot for slot in ranked if mask[slot])


#: What :class:`ScorePicker` reads of a queued job, each as ``log2(1 + value)``.
SCORE_FEATURES = ("res", "mem", "mem_bw", "req_time", "wait")


class ScorePicker:
    """Pick the visible job with the lowest linear score ``w . phi(job)`` (ties: the earliest
    submitted), a plain list scheduler like :class:`HeuristicPicker` without backfilling: if
    that job does not fit now it does nothing and waits for it.

    ``phi(job)`` is ``log2(1 + x)`` of each :data:`SCORE_FEATURES` (requested cores, memory,
    memory bandwidth, requested time, wait so far in seconds), all known at the decision.
    Weights ``(1, 0, 0, 0, 0)`` rank by requested cores alone: :class:`HeuristicPicker`'s
    ``SQF`` to the decision. The weights are what :mod:`hdeeprm.training.score_search`
    learns. With ``cores_first`` the jobs are ranked by requested cores first and the score
    only breaks ties between jobs of equal size (``SQF`` with a learned tie-break; any
    weights of zero but the cores' play ``SQF``).

    **Starvation guard.** A learned score may rank some job last for ever (a wide job behind a
    stream of narrow ones). With ``max_wait`` (seconds), every visible job that has waited at
    least that long ranks before all the others, the longest-waiting first; as the picker
    waits for its first-ranked job, no job submitted after a starving one starts before it
    any more. A job's wait is then bounded by ``max_wait`` plus the time the platform needs to
    free its cores for the starving jobs ahead of it. ``None`` (the default) keeps the plain
    score.

    Args:
        weights: one weight per feature of :data:`SCORE_FEATURES`.
        cores_first: rank by requested cores, then by the score.
        max_wait: the starvation guard's bound in seconds, or ``None``.
    """

    def __init__(
        self, weights: Any, cores_first: bool = False, max_wait: float | None = None
    ) -> None:
        if max_wait is not None and not (
            isinstance(max_wait, (int, float)) and 0 <= max_wait < math.inf
        ):
            raise ValueError(f"max_wait must be non-negative seconds or None, got {max_wait!r}")
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (len(SCORE_FEATURES),) or not np.all(np.isfinite(w)):
            raise ValueError(
                f"weights must be {len(SCORE_FEATURES)} finite numbers "
                f"({', '.join(SCORE_FEATURES)}), got {weights!r}"
            )
        self.weights = w
        self.cores_first = cores_first
        self.max_wait = None if max_wait is None else float(max_wait)
        self._w = tuple(float(x) for x in w)

    def score(self, job: Any, now: float) -> float:
        """``w . phi(job)`` at time ``now``."""
        w_res, w_mem, w_bw, w_req, w_wait = self._w
        req = job.req_time if math.isfinite(job.req_time) else 1e300
        return (
            w_res * math.log2(1.0 + job.res)
            + w_mem * math.log2(1.0 + job.mem)
            + w_bw * math.log2(1.0 + job.mem_bw)
            + w_req * math.log2(1.0 + req)
            + w_wait * math.log2(1.0 + max(0.0, now - job.subtime))
        )

    def rank(self, env: Any) -> list[int]:
        """Slots of the visible jobs, best first."""
        now = env.manager.now
        jobs = env.visible_jobs
        if self.cores_first:
            ranked = sorted(
                range(len(jobs)),
                key=lambda s: (jobs[s].res, self.score(jobs[s], now), jobs[s].seq),
            )
        else:
            ranked = sorted(range(len(jobs)), key=lambda s: (self.score(jobs[s], now), jobs[s].seq))
        if self.max_wait is None:
            return ranked
        bound = now - self.max_wait
        starving = sorted(
            (s for s in ranked if jobs[s].subtime <= bound),
            key=lambda s: (jobs[s].subtime, jobs[s].seq),
        )
        if not starving:
            return ranked
        first = set(starving)
        return starving + [s for s in ranked if s not in first]

    def __call__(self, env: Any) -> int:
        """The action for ``env``'s current state."""
        return first_or_wait(env, self.rank(env))


#: CuSH's baselines (:class:`CushPicker`).
CUSH_HEURISTICS = ("FCFS", "SJF", "DRF", "Rand")


def cush_key(name: str, nb_cores: int, nb_gpus: int) -> Callable[[Any], tuple[float, ...]]:
    """Sort key of CuSH's ``FCFS``, ``SJF`` or ``DRF`` over job records (best first); ties
    end on the submission order ``seq``."""
    if name == "FCFS":
        return lambda job: (job.subtime, job.req_time, job.seq)
    if name == "SJF":
        return lambda job: (job.req_time, job.subtime, job.seq)
    if name == "DRF":
        cores = float(max(nb_cores, 1))
        gpus = float(max(nb_gpus, 1))
        return lambda job: (max(job.res / cores, job.gpus / gpus), job.seq)
    raise ValueError(f"unknown CuSH heuristic {name!r}; expected one of {CUSH_HEURISTICS}")


class CushPicker:
    """CuSH's baseline ``name`` (module docstring) as a picker of the job-selection
    environment. ``seed`` seeds ``Rand``."""

    def __init__(self, name: str, seed: int = 0) -> None:
        if name not in CUSH_HEURISTICS:
            raise ValueError(f"unknown CuSH heuristic {name!r}; expected one of {CUSH_HEURISTICS}")
        self.name = name
        self.rng = np.random.default_rng(seed)

    def choose(self, jobs: list[Any], nb_cores: int, nb_gpus: int) -> int:
        """Index in ``jobs`` (jobs that fit now, in queue order) of the one to start."""
        if self.name == "Rand":
            return int(self.rng.integers(len(jobs)))
        key = cush_key(self.name, nb_cores, nb_gpus)
        return min(range(len(jobs)), key=lambda i: key(jobs[i]))

    def __call__(self, env: Any) -> int:
        """The action for ``env``'s current state."""
        mask = env.action_masks()
        slots = [slot for slot in range(len(env.visible_jobs)) if mask[slot]]
        if not slots:
            return int(env.do_nothing)
        manager = env.manager
        jobs = [env.visible_jobs[slot] for slot in slots]
        return slots[self.choose(jobs, manager.pool.nb_cores, manager.gpu_pool.nb_gpus)]


def run_episode(
    env: Any, picker: Any, seed: int | None = None, **reset_options: Any
) -> dict[str, float]:
    """Play one episode with ``picker(env) -> action`` (``env.reset(seed=seed,
    options=reset_options)``, e.g. ``window=k``); return its objective and counts."""
    env.reset(seed=seed, options=reset_options or None)
    total, steps, done = 0.0, 0, env.finished
    while not done:
        _, reward, done, _, info = env.step(picker(env))
        total += reward
        steps += 1
    return {"objective": env.objective_value(), "return": total, "steps": steps}
