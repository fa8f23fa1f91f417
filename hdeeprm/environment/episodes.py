"""Episodes as windows of the workload: sampled for training, fixed for evaluation.

A window is ``window_jobs`` consecutive jobs of the loaded workload (job indices in submission
order). Its submission times are shifted so that its first job is submitted at t = 0: every
window starts on an idle platform, like a whole-workload run. Windows are slices of the
workload already in memory (new job entries sharing the profiles), never files.

* ``train``: each reset draws a window start uniformly from ``train_jobs`` with the
  environment's ``np_random``, so the sequence of windows follows the environment's seed.
* ``eval``: ``eval_windows`` window starts drawn once from ``eval_seed`` and ``eval_jobs``
  alone, sorted; window ``k`` is the same whatever ran before, and so is the seed of its random
  policies (:meth:`EpisodeWindows.eval_seed_of`).
* ``val``: the same for validation: ``val_windows`` fixed windows drawn from ``val_seed`` and
  ``val_jobs`` (a range of the training part, used to choose checkpoints and seeds).
* ``all``: the whole workload, unshifted (the behaviour without an ``episodes`` block).

``train_sampling: "load"`` (and ``val_sampling: "load"`` for the validation windows) draws a
window start with probability proportional to the window's *offered load*
(:func:`window_loads`: its work over the platform's capacity while it arrives), instead of
uniformly: on a trace that is mostly idle (Gaia on its 2,280-core platform) most uniform
windows give every policy the same objective and teach nothing; busy windows are where the
policy choice matters. The loads come from the trace and the platform alone (no simulation),
and only jobs of the range being drawn from count, so training and validation never look at
the held-out jobs. Evaluation windows are always uniform.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from hdeeprm.errors import InputError
from hdeeprm.options import EpisodeOptions
from hdeeprm.workload import Workload
from hdeeprm.workload.model import JobSpec

#: The values of the environment's ``split`` argument.
SPLITS = ("train", "eval", "val", "all")
#: Splits whose episodes are fixed windows, chosen with ``reset(options={"window": k})``.
FIXED_SPLITS = ("eval", "val")
WHERE = "pybatsim.env.episodes"


class Episodes(Protocol):
    """What an environment asks of its episodes (:class:`EpisodeWindows`, or whole job sets):
    which one to play next, its workload, and the seed of a fixed evaluation episode."""

    @property
    def nb_eval_windows(self) -> int:
        """Number of fixed episodes ``reset(options={"window": k})`` selects."""

    def eval_seed_of(self, k: int) -> int: ...

    def choose(self, rng: np.random.Generator, window: int | None) -> tuple[int, int | None]: ...

    def length(self) -> int: ...

    def workload_at(self, first: int) -> Workload: ...


class EpisodeWindows:
    """The windows an environment's episodes run on.

    Args:
        workload: the whole loaded workload (jobs in submission order).
        episodes: the options' ``episodes`` block, or ``None`` (only ``split="all"``).
        split: ``train``, ``eval``, ``val`` or ``all``.
        source: the options file, named in errors.
        capacity: ``(cores, speed)`` of the platform, the mean core speed in flops per second
            (needed by ``"load"`` sampling only).
    """

    def __init__(
        self,
        workload: Workload,
        episodes: EpisodeOptions | None,
        split: str,
        source: str | None = None,
        capacity: tuple[int, float] | None = None,
    ) -> None:
        if split not in SPLITS:
            raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
        self.workload = workload
        self.episodes = episodes
        self.split = split
        n = len(workload.jobs)
        where = source or "<options>"
        if split != "all" and episodes is None:
            raise InputError(
                f"split={split!r} needs an episodes block in the options "
                '(e.g. "episodes": {"window_jobs": 4000, "train_jobs": [0, 30000]})',
                where,
                WHERE,
            )
        if episodes is not None:
            for key, bounds in (
                ("train_jobs", episodes.train_jobs),
                ("eval_jobs", episodes.eval_jobs),
                ("val_jobs", episodes.val_jobs),
            ):
                if bounds is not None and bounds[1] > n:
                    raise InputError(
                        f"[{bounds[0]}, {bounds[1]}) goes past the end of the workload, which "
                        f"has {n} jobs (indices 0..{n - 1})",
                        where,
                        f"{WHERE}.{key}",
                    )
            if split == "eval" and episodes.eval_jobs is None:
                raise InputError(
                    "split='eval' needs eval_jobs: [start, end] in the episodes block",
                    where,
                    f"{WHERE}.eval_jobs",
                )
            if split == "val" and episodes.val_jobs is None:
                raise InputError(
                    "split='val' needs val_jobs: [start, end] (a range of the training part) in "
                    "the episodes block",
                    where,
                    f"{WHERE}.val_jobs",
                )
        self._loads: np.ndarray | None = None
        self._train_p: np.ndarray | None = None
        if episodes is not None and "load" in (episodes.train_sampling, episodes.val_sampling):
            if capacity is None:
                raise ValueError("load sampling needs the platform's capacity (cores, speed)")
            self._loads = window_loads(workload, episodes.window_jobs, *capacity)
            if split == "train" and episodes.train_sampling == "load":
                self._train_p = load_weights(
                    self._loads, episodes.train_jobs, episodes.window_jobs, where, "train_jobs"
                )
        self._eval_starts: list[int] = []
        self._val_starts: list[int] = []
        if episodes is not None:
            self._eval_starts = _draw_starts(
                episodes.eval_jobs, episodes.window_jobs, episodes.eval_windows, episodes.eval_seed
            )
            val_p = None
            if episodes.val_sampling == "load" and episodes.val_jobs is not None:
                assert self._loads is not None
                val_p = load_weights(
                    self._loads, episodes.val_jobs, episodes.window_jobs, where, "val_jobs"
                )
            self._val_starts = _draw_starts(
                episodes.val_jobs,
                episodes.window_jobs,
                episodes.val_windows,
                episodes.val_seed,
                val_p,
            )
        #: Fixed windows that ``reset(options={"window": k})`` selects in this split.
        self._fixed = self._val_starts if split == "val" else self._eval_starts
        self._next_eval = 0
        self._cache: dict[int, Workload] = {}

    @property
    def nb_eval_windows(self) -> int:
        """Number of fixed windows of this split: the validation windows with ``split="val"``,
        otherwise the evaluation windows (0 without ``eval_jobs``)."""
        return len(self._fixed)

    @property
    def eval_starts(self) -> list[int]:
        """First job index of each evaluation window, ascending."""
        return list(self._eval_starts)

    @property
    def val_starts(self) -> list[int]:
        """First job index of each validation window, ascending (empty without ``val_jobs``)."""
        return list(self._val_starts)

    def eval_seed_of(self, k: int) -> int:
        """Seed of the random policies in fixed window ``k`` of this split (``eval_seed``, or
        ``val_seed`` with ``split="val"``, and ``k``)."""
        assert self.episodes is not None
        base = self.episodes.val_seed if self.split == "val" else self.episodes.eval_seed
        seq = np.random.SeedSequence([base, k])
        return int(seq.generate_state(2, np.uint64)[0] >> np.uint64(1))

    def choose(self, rng: np.random.Generator, window: int | None) -> tuple[int, int | None]:
        """``(first job index, evaluation window index or None)`` of the next episode."""
        if self.split == "all":
            if window is not None:
                raise ValueError("reset(options={'window': k}) needs split='eval' or 'val'")
            return 0, None
        assert self.episodes is not None
        if self.split == "train":
            if window is not None:
                raise ValueError("reset(options={'window': k}) needs split='eval' or 'val'")
            lo, hi = self.episodes.train_jobs
            if self._train_p is not None:
                return lo + int(rng.choice(len(self._train_p), p=self._train_p)), None
            return int(rng.integers(lo, hi - self.episodes.window_jobs + 1)), None
        if window is None:
            window = self._next_eval
        if isinstance(window, bool) or not isinstance(window, (int, np.integer)):
            raise ValueError(f"window must be an integer, got {window!r}")
        starts = self._fixed
        if not 0 <= window < len(starts):
            kind = "validation" if self.split == "val" else "evaluation"
            raise ValueError(
                f"window {window} does not exist: there are {len(starts)} {kind} "
                f"windows (0..{len(starts) - 1})"
            )
        window = int(window)
        self._next_eval = (window + 1) % len(starts)
        return starts[window], window

    def length(self) -> int:
        """Jobs per episode."""
        if self.split == "all" or self.episodes is None:
            return len(self.workload.jobs)
        return self.episodes.window_jobs

    def workload_at(self, first: int) -> Workload:
        """The workload of the episode starting at job ``first`` (shifted to start at t = 0)."""
        if self.split == "all":
            return self.workload
        cached = self._cache.get(first)
        if cached is not None:
            return cached
        window = window_workload(self.workload, first, self.length())
        if self.split in FIXED_SPLITS:  # few fixed windows: keep them
            self._cache[first] = window
        return window


def _draw_starts(
    bounds: tuple[int, int] | None,
    window_jobs: int,
    count: int,
    seed: int,
    p: np.ndarray | None = None,
) -> list[int]:
    """``count`` window starts drawn (with replacement) from ``bounds`` with ``seed`` alone,
    uniformly or with probabilities ``p`` (one per start), sorted; empty without ``bounds``."""
    if bounds is None:
        return []
    lo, hi = bounds
    rng = np.random.default_rng(seed)
    if p is not None:
        return sorted(lo + int(i) for i in rng.choice(len(p), size=count, p=p))
    draws = rng.integers(lo, hi - window_jobs + 1, size=count)
    return sorted(int(s) for s in draws)


def load_weights(
    loads: np.ndarray, bounds: tuple[int, int], window_jobs: int, source: str, key: str
) -> np.ndarray:
    """Probabilities of the window starts of ``bounds`` (``[lo, hi - window_jobs]``),
    proportional to their offered loads (an infinite load, all jobs at one instant, counts as
    the largest finite one, or 1). An error naming ``key`` if every window is empty of work."""
    lo, hi = bounds
    weights = np.array(loads[lo : hi - window_jobs + 1], dtype=float)
    finite = weights[np.isfinite(weights)]
    weights[~np.isfinite(weights)] = finite.max() if finite.size and finite.max() > 0 else 1.0
    total = weights.sum()
    if not total > 0:
        raise InputError(
            f"load sampling: no window of [{lo}, {hi}) has any work to weigh it by",
            source,
            f"{WHERE}.{key}",
        )
    return weights / total


class WorkloadEpisodes:
    """Episodes that are whole workloads given in a list (CuSH's job sets, the windows of a
    comparison): ``split`` ``"train"`` draws one per episode, ``"eval"`` plays workload ``k``
    for ``window=k`` (in turn without)."""

    def __init__(self, workloads: Sequence[Workload], split: str) -> None:
        if not workloads:
            raise ValueError("no workloads")
        if split not in ("train", "eval"):
            raise ValueError(f"split must be 'train' or 'eval', got {split!r}")
        self.workloads = list(workloads)
        self.split = split
        self._next = 0

    @property
    def nb_eval_windows(self) -> int:
        return len(self.workloads) if self.split == "eval" else 0

    def eval_seed_of(self, k: int) -> int:
        return int(k)

    def choose(self, rng: np.random.Generator, window: int | None) -> tuple[int, int | None]:
        if self.split == "train":
            if window is not None:
                raise ValueError("reset(options={'window': k}) needs split='eval'")
            return int(rng.integers(len(self.workloads))), None
        k = self._next if window is None else int(window)
        if not 0 <= k < len(self.workloads):
            raise ValueError(f"episode {k} does not exist (0..{len(self.workloads) - 1})")
        self._next = (k + 1) % len(self.workloads)
        return k, k

    def length(self) -> int:
        return max(len(w.jobs) for w in self.workloads)

    def workload_at(self, first: int) -> Workload:
        return self.workloads[first]


def window_workload(workload: Workload, first: int, count: int) -> Workload:
    """Jobs ``first .. first + count - 1`` of ``workload``, submission times shifted so the
    first one is submitted at t = 0; profiles are shared, not copied."""
    jobs = workload.jobs[first : first + count]
    if not jobs:
        raise ValueError(f"no jobs in [{first}, {first + count})")
    return Workload(
        workload.nb_res, shifted_jobs(jobs), workload.profiles, workload.name, workload.extra
    )


def shifted_jobs(jobs: Sequence[JobSpec]) -> list[JobSpec]:
    """``jobs`` (in submission order) with submission times shifted so the first is at 0."""
    t0 = jobs[0].subtime
    return [
        JobSpec(job.id, job.subtime - t0, job.res, job.profile, job.walltime, job.extra)
        for job in jobs
    ]


def job_work(workload: Workload, speed: float) -> np.ndarray:
    """Each job's work in core-seconds at ``speed`` flops per second per core (the platform's
    mean core speed): ``res x cpu / speed`` for ``parallel_homogeneous`` profiles (``cpu`` is
    per core), ``cpu / speed`` for ``parallel_homogeneous_total``, ``res x delay`` for
    ``delay``; otherwise ``res x`` the requested time, or 0 when nothing says how long it runs."""
    if speed <= 0:
        raise ValueError(f"speed must be positive, got {speed}")
    out = np.zeros(len(workload.jobs))
    for i, job in enumerate(workload.jobs):
        profile = workload.profiles.get(job.profile)
        if profile is None:
            continue
        if profile.type == "parallel_homogeneous" and profile.cpu is not None:
            out[i] = job.res * profile.cpu / speed
        elif profile.type == "parallel_homogeneous_total" and profile.cpu is not None:
            out[i] = profile.cpu / speed
        elif profile.type == "delay" and profile.delay is not None:
            out[i] = job.res * profile.delay
        else:
            requested = job.walltime if job.walltime is not None else profile.req_time
            out[i] = job.res * requested if requested is not None else 0.0
    return out


def window_loads(workload: Workload, window_jobs: int, cores: int, speed: float) -> np.ndarray:
    """Offered load of the window starting at each job index ``s`` (``len(jobs) - window_jobs
    + 1`` values): the window's work (:func:`job_work`) over the platform's capacity during the
    window's submissions, ``cores x (last subtime - first subtime)``. Above 1 the window brings
    more work than the platform can do while it arrives, so jobs queue. A window whose jobs
    all arrive at once (span 0) gets ``inf`` if it has work. Prefix sums: O(jobs)."""
    n = len(workload.jobs)
    if not 0 < window_jobs <= n:
        raise ValueError(f"window_jobs must be in 1..{n}, got {window_jobs}")
    if cores <= 0:
        raise ValueError(f"cores must be positive, got {cores}")
    work = np.concatenate(([0.0], np.cumsum(job_work(workload, speed))))
    sub = np.array([job.subtime for job in workload.jobs], dtype=float)
    starts = np.arange(n - window_jobs + 1)
    total = work[starts + window_jobs] - work[starts]
    span = (sub[starts + window_jobs - 1] - sub[starts]) * cores
    with np.errstate(divide="ignore", invalid="ignore"):
        loads = np.where(span > 0, total / np.where(span > 0, span, 1.0), np.inf)
    return np.where((span <= 0) & (total <= 0), 0.0, loads)
