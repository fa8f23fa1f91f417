"""Synthetic rigid parallel jobs: the Lublin-Feitelson (2003) workload model.

U. Lublin and D. G. Feitelson, "The workload on parallel supercomputers: modeling the
characteristics of rigid jobs", JPDC 63(11), 2003. The model draws, per job:

* **size**: serial with probability ``serial_prob``; otherwise ``2**x`` with ``x`` from a
  two-stage uniform (``[u_low, u_med]`` with probability ``u_prob``, else ``[u_med, u_hi]``),
  ``x`` rounded to an integer (a power-of-two size) with probability ``pow2_prob``; sizes are
  rounded and capped at the machine (``u_hi = log2(nb_cores)``).
* **run time**: ``exp`` of a hyper-gamma: ``gamma(a1, b1)`` with probability
  ``p = pa * size + pb`` (clipped to [0, 1]), else ``gamma(a2, b2)`` (shape, scale); draws of
  the log above 12 (about 45 h) are redrawn, as in the reference implementation.
* **arrivals**: inter-arrival ``exp(gamma(aarr * arar, barr))`` (log above 13 redrawn),
  stretched by a daily cycle: the day is 48 half-hour buckets weighted by the mass of
  ``gamma(anum, bnum)`` over each bucket (the fitted curve is shifted cyclically by 11 buckets,
  the model's ``CYCLIC_DAY_START``), normalised to mean 1; an inter-arrival "pays" each
  bucket's weight per 1,800 s it crosses, so arrivals are dense at the daily peak (early
  afternoon) and sparse at night.

Parameters are the paper's fits (:meth:`LublinParams.batch` for batch jobs, the default;
:meth:`LublinParams.all_jobs` for the "whole sample" fit the reference ``lublin99`` program uses
when job types are not distinguished). The model has no requested time; hdeeprm derives one
(:func:`requested_times`): run time x a factor drawn log-uniformly in ``[1, max_factor]``
(default 10: users over-estimate, rarely by more than an order of magnitude), rounded *up* to
the next value users typically type (1, 2, 5, 10, 15, 20, 30, 45 min; 1, 1.5, 2, 3, 4, 5, 6, 8,
10, 12, 16, 18, 20, 24, 30, 36, 48 h; whole hours beyond), so requested >= run time always.

Randomness: one ``numpy.random.SeedSequence(seed)`` spawns independent streams for arrivals,
sizes, run times and requests, so the same ``(nb_jobs, nb_cores, seed, params)`` always gives
the same jobs, and changing one aspect's parameters leaves the others' draws unchanged.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from hdeeprm.errors import InputError
from hdeeprm.workload.budget import check_synthetic_size
from hdeeprm.workload.convert import ConversionResult, convert_records
from hdeeprm.workload.swf import SwfJob, write_swf

#: Seconds in one bucket of the daily cycle (48 half-hours).
BUCKET_SECONDS = 1800.0
BUCKETS = 48
#: The model's day starts at bucket 11 (the fit's cyclic shift).
CYCLIC_DAY_START = 11
#: Logs of run times / inter-arrival times above these are redrawn (reference implementation).
MAX_LOG_RUN_TIME = 12.0
MAX_LOG_INTERARRIVAL = 13.0
#: Requested-time values users typically type, seconds.
COMMON_REQUESTS: tuple[float, ...] = tuple(
    [m * 60.0 for m in (1, 2, 5, 10, 15, 20, 30, 45)]
    + [h * 3600.0 for h in (1, 1.5, 2, 3, 4, 5, 6, 8, 10, 12, 16, 18, 20, 24, 30, 36, 48)]
)


@dataclass(frozen=True, slots=True)
class LublinParams:
    """Parameters of the Lublin-Feitelson model (names as in the paper / ``lublin99``)."""

    serial_prob: float
    pow2_prob: float
    u_low: float
    u_med: float
    u_hi: float
    u_prob: float
    a1: float
    b1: float
    a2: float
    b2: float
    pa: float
    pb: float
    aarr: float
    barr: float
    anum: float
    bnum: float
    arar: float
    kind: str = "batch"

    @staticmethod
    def _size_bounds(
        nb_cores: int, u_low: float, med_below_hi: float
    ) -> tuple[float, float, float]:
        if isinstance(nb_cores, bool) or not isinstance(nb_cores, int) or nb_cores < 1:
            raise InputError(f"nb_cores must be an integer >= 1, got {nb_cores!r}")
        u_hi = math.log2(nb_cores)
        low = min(u_low, u_hi)
        med = min(max(u_hi - med_below_hi, low), u_hi)
        return low, med, u_hi

    @classmethod
    def batch(cls, nb_cores: int) -> LublinParams:
        """The paper's fit for batch jobs, sizes scaled to a machine of ``nb_cores`` cores
        (``u_hi = log2(nb_cores)``, ``u_med = u_hi - 2`` as the fit for 128 nodes has)."""
        low, med, hi = cls._size_bounds(nb_cores, 1.2, 2.0)
        return cls(
            serial_prob=0.2927, pow2_prob=0.6686, u_low=low, u_med=med, u_hi=hi, u_prob=0.875,
            a1=6.57, b1=0.823, a2=639.1, b2=0.0156, pa=-0.003, pb=0.6986,
            aarr=6.0415, barr=0.8531, anum=6.1271, bnum=5.2740, arar=1.0519, kind="batch",
        )  # fmt: skip

    @classmethod
    def all_jobs(cls, nb_cores: int) -> LublinParams:
        """The paper's whole-sample fit (no batch/interactive split), as ``lublin99`` uses when
        job types are off; ``u_med = u_hi - 2.5``."""
        low, med, hi = cls._size_bounds(nb_cores, 0.8, 2.5)
        return cls(
            serial_prob=0.244, pow2_prob=0.576, u_low=low, u_med=med, u_hi=hi, u_prob=0.86,
            a1=4.2, b1=0.94, a2=312.0, b2=0.03, pa=-0.0054, pb=0.78,
            aarr=10.2303, barr=0.4871, anum=8.1737, bnum=3.9631, arar=1.0225, kind="all",
        )  # fmt: skip

    def with_changes(self, **changes: Any) -> LublinParams:
        """A copy with some parameters replaced (e.g. a busier arrival rate via ``aarr``)."""
        return replace(self, **changes)


def _gamma_cdf(x: float, shape: float, scale: float) -> float:
    """Regularised lower incomplete gamma P(shape, x/scale): series below shape+1, Lentz's
    continued fraction above (Numerical Recipes 6.2)."""
    x /= scale
    if x <= 0:
        return 0.0
    log_front = -x + shape * math.log(x) - math.lgamma(shape)
    if x < shape + 1:
        term = total = 1.0 / shape
        a = shape
        for _ in range(10_000):
            a += 1
            term *= x / a
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return total * math.exp(log_front)
    tiny = 1e-300
    b = x + 1 - shape
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - shape)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return 1.0 - math.exp(log_front) * h


def bucket_weights(anum: float, bnum: float) -> np.ndarray:
    """Relative arrival intensity of the 48 half-hour buckets of a day, mean 1."""
    weights = np.zeros(BUCKETS)
    for i in range(CYCLIC_DAY_START, BUCKETS + CYCLIC_DAY_START):
        weights[(i - 1) % BUCKETS] = _gamma_cdf(i + 0.5, anum, bnum) - _gamma_cdf(
            i - 0.5, anum, bnum
        )
    return weights / weights.mean()


def _bounded_gamma(
    rng: np.random.Generator, shape: float, scale: float, size: int, bound: float
) -> np.ndarray:
    """``size`` gamma draws, each redrawn while above ``bound``."""
    out = rng.gamma(shape, scale, size)
    bad = np.flatnonzero(out > bound)
    while bad.size:
        out[bad] = rng.gamma(shape, scale, bad.size)
        bad = bad[out[bad] > bound]
    return out


def arrival_times(
    nb_jobs: int, params: LublinParams, rng: np.random.Generator, start_hour: int = 0
) -> np.ndarray:
    """Arrival times (s from the start, non-decreasing floats) of ``nb_jobs`` jobs."""
    weights = bucket_weights(params.anum, params.bnum).tolist()
    logs = _bounded_gamma(
        rng, params.aarr * params.arar, params.barr, nb_jobs, MAX_LOG_INTERARRIVAL
    )
    points_per_job = (np.exp(logs) / BUCKET_SECONDS).tolist()
    times = np.empty(nb_jobs)
    bucket = (start_hour * BUCKETS) // 24
    now = points = reminder = 0.0
    for index, gained in enumerate(points_per_job):
        points += gained
        step = 0.0
        weight = weights[bucket]
        while points > weight:
            points -= weight
            bucket = (bucket + 1) % BUCKETS
            step += BUCKET_SECONDS
            weight = weights[bucket]
        new_reminder = points / weight
        step += BUCKET_SECONDS * (new_reminder - reminder)
        reminder = new_reminder
        now += step
        times[index] = now
    return times


def job_sizes(nb_jobs: int, params: LublinParams, rng: np.random.Generator) -> np.ndarray:
    """Job sizes (cores, ints in [1, 2**u_hi])."""
    u = rng.random(nb_jobs)
    first_stage = rng.random(nb_jobs) <= params.u_prob
    position = rng.random(nb_jobs)
    low = np.where(first_stage, params.u_low, params.u_med)
    high = np.where(first_stage, params.u_med, params.u_hi)
    exponent = low + position * (high - low)
    pow2 = (u > params.serial_prob) & (u <= params.serial_prob + params.pow2_prob)
    exponent = np.where(pow2, np.floor(exponent + 0.5), exponent)
    sizes = np.floor(np.power(2.0, exponent) + 0.5).astype(np.int64)
    sizes = np.minimum(sizes, int(math.floor(2.0**params.u_hi + 0.5)))
    sizes[u <= params.serial_prob] = 1
    return sizes


def run_times(sizes: np.ndarray, params: LublinParams, rng: np.random.Generator) -> np.ndarray:
    """Run times (whole seconds >= 1) from the size-dependent hyper-gamma."""
    n = sizes.size
    p = np.clip(params.pa * sizes + params.pb, 0.0, 1.0)
    logs = np.empty(n)
    todo = np.arange(n)
    while todo.size:
        first = rng.random(todo.size) <= p[todo]
        draw = np.where(
            first,
            rng.gamma(params.a1, params.b1, todo.size),
            rng.gamma(params.a2, params.b2, todo.size),
        )
        logs[todo] = draw
        todo = todo[draw > MAX_LOG_RUN_TIME]
    return np.maximum(np.floor(np.exp(logs)), 1.0)


def requested_times(
    runs: np.ndarray, rng: np.random.Generator, max_factor: float = 10.0
) -> np.ndarray:
    """Requested times >= run times: run x log-uniform factor in [1, max_factor], rounded up to
    a common user value (whole hours beyond 48 h)."""
    if not math.isfinite(max_factor) or max_factor < 1:
        raise InputError(f"max_factor must be >= 1, got {max_factor!r}")
    factor = np.exp(rng.random(runs.size) * math.log(max_factor))
    target = runs * factor
    common = np.asarray(COMMON_REQUESTS)
    index = np.searchsorted(common, target, side="left")
    beyond = index >= common.size
    rounded = common[np.minimum(index, common.size - 1)]
    # Past the largest common value, users ask for the largest or the next whole hour.
    late = np.maximum(common[-1], np.ceil(runs / 3600.0) * 3600.0)
    return np.where(beyond, late, rounded)


def generate_lublin(
    nb_jobs: int,
    nb_cores: int,
    seed: int,
    *,
    params: LublinParams | None = None,
    start_hour: int = 0,
    max_request_factor: float = 10.0,
) -> list[SwfJob]:
    """``nb_jobs`` SWF records from the Lublin-Feitelson model for ``nb_cores`` cores.

    ``params`` defaults to :meth:`LublinParams.batch` for ``nb_cores``. Records carry submit
    time (whole seconds), run time, size as both allocated and requested processors,
    requested time, status 1 and queue 1 for batch jobs; other fields are -1 (unknown).
    """
    if isinstance(nb_jobs, bool) or not isinstance(nb_jobs, int) or nb_jobs < 1:
        raise InputError(f"nb_jobs must be an integer >= 1, got {nb_jobs!r}")
    check_synthetic_size(nb_jobs)
    if not isinstance(start_hour, int) or not 0 <= start_hour <= 23:
        raise InputError(f"start_hour must be an integer hour 0-23, got {start_hour!r}")
    params = LublinParams.batch(nb_cores) if params is None else params
    streams = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(4)]
    arrivals = np.floor(arrival_times(nb_jobs, params, streams[0], start_hour))
    sizes = job_sizes(nb_jobs, params, streams[1])
    sizes = np.minimum(sizes, nb_cores)
    runs = run_times(sizes, params, streams[2])
    requests = requested_times(runs, streams[3], max_request_factor)
    queue = 1 if params.kind == "batch" else -1
    return [
        SwfJob(i + 1, sub, -1.0, run, size, -1.0, -1.0, size, req, -1.0, 1, -1, -1, -1, queue,
               -1, -1, -1.0)
        for i, (sub, run, size, req) in enumerate(
            zip(arrivals.tolist(), runs.tolist(), sizes.tolist(), requests.tolist())
        )
    ]  # fmt: skip


def lublin_header(
    nb_jobs: int, nb_cores: int, seed: int, params: LublinParams, max_request_factor: float = 10.0
) -> list[str]:
    """SWF header comments recording the generator, its parameters and the seed."""
    values = ", ".join(
        f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}" for k, v in asdict(params).items()
    )
    return [
        "; Version: 2.2",
        "; Computer: synthetic (Lublin-Feitelson 2003 model, generated by hdeeprm)",
        f"; Note: model parameters: {values}",
        f"; Note: requested time = run time x log-uniform[1, {max_request_factor:g}], rounded up "
        "to common user values",
        f"; Note: seed {seed}",
        f"; MaxJobs: {nb_jobs}",
        f"; MaxRecords: {nb_jobs}",
        f"; MaxNodes: {nb_cores}",
        f"; MaxProcs: {nb_cores}",
    ]


def write_lublin_swf(
    path: str | os.PathLike[str],
    nb_jobs: int,
    nb_cores: int,
    seed: int,
    *,
    params: LublinParams | None = None,
    start_hour: int = 0,
    max_request_factor: float = 10.0,
) -> list[SwfJob]:
    """Generate jobs and write them as an SWF file (``.gz`` compressed) with a header."""
    params = LublinParams.batch(nb_cores) if params is None else params
    jobs = generate_lublin(
        nb_jobs,
        nb_cores,
        seed,
        params=params,
        start_hour=start_hour,
        max_request_factor=max_request_factor,
    )
    write_swf(jobs, path, lublin_header(nb_jobs, nb_cores, seed, params, max_request_factor))
    return jobs


def lublin_workload(
    nb_jobs: int,
    nb_cores: int,
    seed: int,
    *,
    reference_speed: float,
    params: LublinParams | None = None,
    profile_type: str = "parallel_homogeneous",
    start_hour: int = 0,
    max_request_factor: float = 10.0,
    mem_bw_range: tuple[float, float] = (4.0, 24.0),
) -> ConversionResult:
    """Generate jobs and convert them straight to a Batsim workload (no file in between).

    The same ``seed`` drives the model and the converter's ``mem_bw`` draws. Memory is unknown
    in the model, so every job's ``mem`` is 0.
    """
    params = LublinParams.batch(nb_cores) if params is None else params
    jobs = generate_lublin(
        nb_jobs,
        nb_cores,
        seed,
        params=params,
        start_hour=start_hour,
        max_request_factor=max_request_factor,
    )
    return convert_records(
        jobs,
        reference_speed=reference_speed,
        max_cores=nb_cores,
        seed=seed,
        profile_type=profile_type,
        source=f"lublin(nb_jobs={nb_jobs}, nb_cores={nb_cores}, seed={seed})",
        header=lublin_header(nb_jobs, nb_cores, seed, params, max_request_factor),
        mem_bw_range=mem_bw_range,
    )
