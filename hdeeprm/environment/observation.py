"""Observations: a fixed-size view of the queue and the platform in [0, 1] (thesis 3.2.3.1).

Layout of the float32 vector (each observation type is a prefix of the next one, so an agent
trained on ``minimal`` reads the same first 21 values in ``small`` and ``normal``):

==================  =========================================================================
index               value
==================  =========================================================================
0..4                requested time of the queued jobs: min, Q1, median, Q3, max / ``max_time``
5..9                requested cores, same five statistics / ``max_core``
10..14              requested memory per task (MB) / ``max_mem``
15..19              requested memory bandwidth per task (GB/s) / ``max_mem_bw``
20                  queue-size variation ratio: 0.5 no change since the previous observation,
                    0 a drop of ``queue_sensitivity`` or more, 1 a rise of it or more
*small*             + free memory fraction of each node, then free bandwidth fraction of each
                    processor (0 while over-subscribed)
*normal*            + for each core its speed fraction (P-state), then its power fraction, then
                    the remaining fraction of its job's requested time (0 when idle)
==================  =========================================================================

The ``queue`` type (issue 12) extends ``minimal`` with what tells decision situations apart:

==================  =========================================================================
21                  queue length, ``log(1 + n) / log(1 + 10,000)`` (clipped to 1)
22..22+6K-1         the first K = 8 queued jobs in submission order (the head of the queue),
                    6 values each: wait so far ``log(1 + wait) / log(1 + max_time)``,
                    requested cores / ``max_core``, requested time
                    ``log(1 + req_time) / log(1 + max_time)``, memory / ``max_mem``,
                    bandwidth / ``max_mem_bw``, 1 if it can start now else 0; zeros for
                    missing jobs (a present job asks for at least one core)
then 2 per type     per processor type (same cores, GFLOPS, bandwidth and power; in order of
                    first appearance in the platform): free cores / cores of the type, free
                    memory bandwidth / bandwidth of the type (0 when over-subscribed)
==================  =========================================================================

On a platform with GPUs every type above ends with one more value per node type that has GPUs
(in order of first appearance): the free fraction of that type's GPUs. GPU-less platforms keep
the sizes above.

Quartiles use linear interpolation between order statistics (NumPy's default). An empty queue
gives 0 for all 20 statistics. A limit of 0 (no job of the workload asks for that resource)
gives 0; values above the limit (an infinite requested time, say) are clipped to 1.
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import chain
from typing import Protocol

import numpy as np

from hdeeprm.decision import WorkloadManager
from hdeeprm.platform.hierarchy import PSTATE_POWER_FRACTION, PSTATE_SPEED_FRACTION
from hdeeprm.workload.limits import JobLimits

#: The five statistics shown per requested resource.
QUANTILES = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
#: Requested resources shown, in layout order.
RESOURCES = ("req_time", "res", "mem", "mem_bw")
#: Values of the queue part: 4 resources x 5 statistics + variation ratio.
QUEUE_FEATURES = len(RESOURCES) * len(QUANTILES) + 1

_SPEED = np.asarray(PSTATE_SPEED_FRACTION, dtype=np.float64)
_POWER = np.asarray(PSTATE_POWER_FRACTION, dtype=np.float64)


#: Queued jobs shown one by one by the ``queue`` observation (the head of the queue).
HEAD_JOBS = 8
#: Values per head job in the ``queue`` observation.
HEAD_FEATURES = 6
#: Queue length that reads 1 in the ``queue`` observation (log scale).
QUEUE_LENGTH_SCALE = 10_000


def observation_size(
    kind: str,
    nb_nodes: int,
    nb_processors: int,
    nb_cores: int,
    nb_types: int = 0,
    nb_gpu_types: int = 0,
) -> int:
    """Length of an observation of type ``kind`` for a platform of that size (``nb_types``:
    processor types, for ``queue``; ``nb_gpu_types``: node types with GPUs, for every type)."""
    if kind == "minimal":
        return QUEUE_FEATURES + nb_gpu_types
    if kind == "queue":
        return QUEUE_FEATURES + 1 + HEAD_JOBS * HEAD_FEATURES + 2 * nb_types + nb_gpu_types
    if kind == "small":
        return QUEUE_FEATURES + nb_nodes + nb_processors + nb_gpu_types
    if kind == "normal":
        return QUEUE_FEATURES + nb_nodes + nb_processors + 3 * nb_cores + nb_gpu_types
    raise ValueError(f"unknown observation type {kind!r}; expected minimal, queue, small or normal")


def queue_statistics(values: np.ndarray, limits: np.ndarray) -> np.ndarray:
    """The 20 scaled statistics of a ``(4, n)`` array of queued requests.

    ``limits`` holds the four job limits in :data:`RESOURCES` order.
    """
    if values.shape[1] == 0:
        return np.zeros(len(RESOURCES) * len(QUANTILES))
    # inf (unknown requested time) would turn interpolated quartiles into nan; a huge finite
    # value interpolates like it and is clipped to 1 below.
    ordered = np.sort(np.minimum(values, 1e300), axis=1)
    # Linear interpolation between order statistics (np.quantile's default), done by hand:
    # one sort and a few fancy indexings instead of np.quantile's generic machinery.
    pos = QUANTILES * (ordered.shape[1] - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, ordered.shape[1] - 1)
    frac = pos - lo
    low, high = ordered[:, lo], ordered[:, hi]
    stats = low + (high - low) * frac  # (4, 5)
    safe = np.where(limits > 0, limits, 1.0)[:, None]
    scaled = np.where(limits[:, None] > 0, stats / safe, 0.0)
    return np.clip(scaled, 0.0, 1.0).ravel()


def processor_types(manager: WorkloadManager) -> tuple[list[int], list[list[int]]]:
    """Group processors by (cores, GFLOPS per core, bandwidth, watts per core), types in order
    of first appearance: ``(type of each processor, processors of each type)``."""
    pool = manager.pool
    index: dict[tuple[int, float, float, float], int] = {}
    proc_type: list[int] = []
    type_procs: list[list[int]] = []
    for p, cores in enumerate(pool.proc_cores):
        first = cores[0] if cores else None
        key = (
            len(cores),
            pool.core_peak[first] if first is not None else 0.0,
            pool.proc_mem_bw[p],
            pool.core_power[first] if first is not None else 0.0,
        )
        t = index.setdefault(key, len(type_procs))
        if t == len(type_procs):
            type_procs.append([])
        type_procs[t].append(p)
        proc_type.append(t)
    return proc_type, type_procs


@lru_cache(maxsize=4096)
def _picks(n: int) -> tuple[tuple[int, int, float], ...]:
    """Per statistic of :data:`QUANTILES`, the two order statistics of ``n`` sorted values it
    interpolates between and the weight of the upper one (NumPy's linear method)."""
    top = n - 1
    picks = []
    for q in (0.0, 0.25, 0.5, 0.75, 1.0):
        pos = q * top
        lo = math.floor(pos)
        picks.append((lo, min(lo + 1, top), pos - lo))
    return tuple(picks)


def sorted_statistics(ordered: tuple[list[float], ...], limits: list[float]) -> list[float]:
    """:func:`queue_statistics` from already sorted values (one ascending list per resource,
    as :meth:`~hdeeprm.decision.job_queue.JobQueue.track_sorted` keeps them): the
    same arithmetic, so the same bits, without sorting or NumPy."""
    n = len(ordered[0])
    if n == 0:
        return [0.0] * (len(RESOURCES) * len(QUANTILES))
    if n == 1:  # the commonest queue: the five statistics interpolate the same value alike
        out: list[float] = []
        for values, limit in zip(ordered, limits):
            if limit > 0:
                low = values[0]
                value = (low + (low - low) * 0.0) / limit  # the general case's operations
                value = 0.0 if value < 0.0 else 1.0 if value > 1.0 else value
                out += (value, value, value, value, value)
            else:
                out += (0.0, 0.0, 0.0, 0.0, 0.0)
        return out
    picks = _picks(n)
    out = []
    for values, limit in zip(ordered, limits):
        if limit > 0:
            for lo, hi, frac in picks:
                low = values[lo]
                value = (low + (values[hi] - low) * frac) / limit
                out.append(0.0 if value < 0.0 else 1.0 if value > 1.0 else value)
        else:
            out.extend((0.0, 0.0, 0.0, 0.0, 0.0))
    return out


def variation_ratio(size: int, previous: int, sensitivity: float) -> float:
    """Queue-size variation relative to the previous observation, mapped to [0, 1].

    ``(size - previous) / previous`` (an empty previous queue counts as 1 job, so any arrival
    into an empty queue reads as a rise) scaled so that +-``sensitivity`` reaches 1 / 0.
    """
    change = (size - previous) / max(previous, 1)
    return float(min(1.0, max(0.0, 0.5 + change / (2.0 * sensitivity))))


class Observer(Protocol):
    """What an environment reads from its observation builder: the observation's length and
    a fresh observation of the current state."""

    size: int

    def build(self) -> np.ndarray: ...


class ObservationBuilder:
    """Builds observations of one type for one workload manager (vectorised over the pool).

    Args:
        kind: ``minimal``, ``queue``, ``small`` or ``normal``.
        manager: the workload manager whose queue and core pool are observed.
        limits: the job limits that scale the queue statistics.
        queue_sensitivity: the variation that saturates the variation ratio (thesis: 0.05).
    """

    def __init__(
        self, kind: str, manager: WorkloadManager, limits: JobLimits, queue_sensitivity: float
    ) -> None:
        pool = manager.pool
        self.kind = kind
        self.manager = manager
        #: Processor type of each processor, and the processors of each type.
        self.proc_type, self.type_procs = processor_types(manager)
        self.size = observation_size(
            kind,
            len(pool.node_capacity),
            len(pool.proc_mem_bw),
            pool.nb_cores,
            len(self.type_procs),
            len(manager.gpu_pool.types),
        )
        #: Whether the GPU features are appended (only on platforms with GPUs).
        self._gpus = bool(manager.gpu_pool.types)
        self._type_cores = [sum(len(pool.proc_cores[p]) for p in ps) for ps in self.type_procs]
        self._type_bw = [math.fsum(pool.proc_mem_bw[p] for p in ps) for ps in self.type_procs]
        self._log_time = math.log1p(limits.max_time) if 0 < limits.max_time < math.inf else 0.0
        self.limits = np.array(
            [limits.max_time, limits.max_core, limits.max_mem, limits.max_mem_bw], dtype=float
        )
        if queue_sensitivity <= 0:
            raise ValueError("queue_sensitivity must be positive")
        self.queue_sensitivity = float(queue_sensitivity)
        self._node_capacity = np.asarray(pool.node_capacity, dtype=float)
        self._proc_bw = np.asarray(pool.proc_mem_bw, dtype=float)
        self.previous_queue = 0
        self._limits = [float(v) for v in self.limits]
        self._sorted = manager.job_queue.track_sorted()
        #: The queued jobs (the scheduler's list, cleared in place, never replaced).
        self._queued = manager.job_queue.jobs

    def reset(self) -> None:
        """Forget the previous queue size (a new episode starts with an empty queue)."""
        self.previous_queue = 0

    def build(self, *, update: bool = True) -> np.ndarray:
        """The observation of the manager's current state (float32, values in [0, 1]).

        With ``update`` the queue size is remembered for the next variation ratio.
        """
        manager = self.manager
        n = len(self._queued)
        stats = sorted_statistics(self._sorted, self._limits)
        # variation_ratio inline (the same operations: min(1, max(0, x)) as comparisons)
        previous = self.previous_queue
        change = (n - previous) / (previous if previous > 1 else 1)
        ratio = 0.5 + change / (2.0 * self.queue_sensitivity)
        ratio = ratio if ratio > 0.0 else 0.0
        stats.append(ratio if ratio < 1.0 else 1.0)
        if update:
            self.previous_queue = n
        if self.kind == "minimal":
            if self._gpus:
                stats.extend(manager.gpu_pool.free_by_type().tolist())
            # The same float32 of each value as np.array(stats, dtype=np.float32), cheaper.
            return np.fromiter(stats, np.float32, len(stats))
        if self.kind == "queue":
            stats.extend(self._queue_part(n))
            if self._gpus:
                stats.extend(manager.gpu_pool.free_by_type().tolist())
            return np.array(stats, dtype=np.float32)
        out = np.empty(self.size, dtype=np.float64)
        out[:QUEUE_FEATURES] = stats
        if self.kind != "minimal":
            pool = manager.pool
            at = QUEUE_FEATURES
            nodes = len(self._node_capacity)
            free_mem = np.asarray(pool.node_free_mem, dtype=np.float64)
            cap = np.where(self._node_capacity > 0, self._node_capacity, 1.0)
            out[at : at + nodes] = np.where(self._node_capacity > 0, free_mem / cap, 0.0)
            at += nodes
            procs = len(self._proc_bw)
            demand = np.asarray(pool.proc_demand, dtype=np.float64)
            bw = np.where(self._proc_bw > 0, self._proc_bw, 1.0)
            out[at : at + procs] = np.where(self._proc_bw > 0, 1.0 - demand / bw, 0.0)
            at += procs
            if self.kind == "normal":
                cores = pool.nb_cores
                pstates = pool.pstates()
                out[at : at + cores] = _SPEED[pstates]
                out[at + cores : at + 2 * cores] = _POWER[pstates]
                out[at + 2 * cores : at + 3 * cores] = self._remaining(cores)
                at += 3 * cores
            if self._gpus:
                out[at:] = manager.gpu_pool.free_by_type()
        np.clip(out, 0.0, 1.0, out=out)
        return out.astype(np.float32)

    def _queue_part(self, n: int) -> list[float]:
        """Queue length, the head jobs and the free share of each processor type."""
        manager = self.manager
        pool = manager.pool
        out = [min(1.0, math.log1p(n) / math.log1p(QUEUE_LENGTH_SCALE))]
        log_time = self._log_time
        _, max_core, max_mem, max_bw = self._limits
        now = manager.now
        head = manager.job_queue.head(HEAD_JOBS)
        for job in head:
            wait = now - job.subtime
            req = job.req_time
            out += (
                min(1.0, math.log1p(wait) / log_time) if log_time and wait > 0 else 0.0,
                min(1.0, job.res / max_core) if max_core > 0 else 0.0,
                min(1.0, math.log1p(req) / log_time) if log_time and req < math.inf else 1.0,
                min(1.0, job.mem / max_mem) if max_mem > 0 else 0.0,
                min(1.0, job.mem_bw / max_bw) if max_bw > 0 else 0.0,
                1.0 if manager.fits_now(job.res, job.mem, job.gpus) else 0.0,
            )
        out += [0.0] * (HEAD_FEATURES * (HEAD_JOBS - len(head)))
        free, demand = pool.proc_free, pool.proc_demand
        for procs, cores, bw in zip(self.type_procs, self._type_cores, self._type_bw):
            out.append(sum(len(free[p]) for p in procs) / cores if cores else 0.0)
            headroom = bw - math.fsum(demand[p] for p in procs)
            out.append(min(1.0, max(0.0, headroom / bw)) if bw > 0 else 0.0)
        return out

    def _remaining(self, cores: int) -> np.ndarray:
        """Per core: 1 - elapsed / requested time of the job it runs (0 when idle)."""
        remaining = np.zeros(cores, dtype=np.float64)
        running = self.manager.running
        if not running:
            return remaining
        now = self.manager.now
        jobs = list(running.values())
        n = len(jobs)
        starts = np.fromiter((j.start for j in jobs), np.float64, n)
        reqs = np.fromiter((j.req_time for j in jobs), np.float64, n)
        sizes = np.fromiter((len(j.alloc) for j in jobs), np.int64, n)
        cores_of = np.fromiter(chain.from_iterable(j.alloc for j in jobs), np.int64, sizes.sum())
        with np.errstate(divide="ignore", invalid="ignore"):
            fractions = np.where(
                np.isinf(reqs),  # no estimate: the job may run for ever
                1.0,
                np.where(reqs > 0, 1.0 - (now - starts) / np.where(reqs > 0, reqs, 1.0), 0.0),
            )
        remaining[cores_of] = np.repeat(fractions, sizes)
        return remaining
