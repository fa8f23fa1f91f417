"""Backfilling schedulers: EASY, EASY-SJBF and conservative backfilling (thesis 4.3, 5.2, 6.2).

The workload manager delegates "which queued jobs start now?" to a :class:`BackfillScheduler`
(see :class:`hdeeprm.decision.WorkloadManager`'s ``scheduler`` argument): it reports every
submission and completion, and at each decision point calls :meth:`BackfillScheduler.schedule`
with two callables, ``free()`` (free cores now) and ``start(record)`` (ask the resource manager
to place the job with the run's core policy; ``False`` if it cannot be placed now).

EASY(P_R, P_B, theta) at a decision point (thesis Algorithms 1 and 2):

1. correct the running jobs that outlived their prediction (:mod:`.corrections`);
2. walk the primary queue in ``P_R`` order, jobs that waited more than ``theta`` first in FCFS
   order; start each job that fits, until one does not: it is the *head*;
3. reserve the head at the earliest predicted time enough cores are free (the *shadow time*),
   counting the cores spare then (the *extra* cores);
4. walk the backfilling queue in ``P_B`` order and start every job that fits now and either
   is predicted to end by the shadow time or uses only extra cores (which it then consumes).

EASY-SJBF is EASY with ``P_B = SPF`` (Tsafrir et al.). Conservative backfilling books every
queued job, in primary order, at the earliest time its cores are predicted free for its whole
predicted run without moving an earlier booking, and starts the jobs booked now. Bookings are
recomputed at each decision point, so they move earlier when a job ends before its prediction
and later when a prediction is corrected.

Costs per decision point: EASY walks the primary queue up to the head, the running jobs by
predicted end only until the head's cores are counted, and, for FCFS and static backfilling
orderings, only the queued jobs whose request could still start (:mod:`.candidates`: requests
needing more cores than are free, dominated by a refused one, or too long for the reservation
with too many cores are skipped whole); static orderings are kept sorted as jobs arrive (never
re-sorted), dynamic ones (LEXP, SEXP, WFP3, UNICEP) are sorted once per decision point and
walked in full. A pass after submissions alone, with the same head and reservation, walks only
the new jobs (:meth:`BackfillScheduler._only_fresh_can_start`). Conservative backfilling costs
O(queue x profile steps) per decision point, as it inherently must.
"""

from __future__ import annotations

import logging
import math
from bisect import bisect_left, insort
from collections.abc import Callable, Iterable, Iterator
from heapq import heapify, heappop, heapreplace
from typing import TYPE_CHECKING, Any

from hdeeprm.scheduling.candidates import CandidateIndex
from hdeeprm.scheduling.config import SchedulerConfig
from hdeeprm.scheduling.contiguous import ContiguousCores
from hdeeprm.scheduling.corrections import advance
from hdeeprm.scheduling.jobs import QueuedJob as JobRecord
from hdeeprm.scheduling.jobs import StartJob
from hdeeprm.scheduling.orderings import DYNAMIC, canonical, sort_key, static_key
from hdeeprm.scheduling.predictors import Ave2, Clairvoyant, Predictor, RequestedTime
from hdeeprm.scheduling.profile import RunningEnds, StepProfile

if TYPE_CHECKING:
    from hdeeprm.scheduling.contiguous import Span

LOG = logging.getLogger("hdeeprm.scheduling")


#: A job's user and real run time not read yet (:class:`SchedJob` reads them on first use).
_UNREAD: Any = object()


class SchedJob:
    """The scheduler's view of one job (queued or running).

    ``user`` and ``actual`` (:func:`job_facts`) are read from the workload entry on first use
    unless given: only some predictors need them (``requested`` never does), and reading them
    was a few attribute lookups and dictionary reads per submitted job."""

    __slots__ = (
        "record",
        "seq",
        "subtime",
        "res",
        "mem",
        "req",
        "_user",
        "_actual",
        "pred",
        "start",
        "run_pred",
        "corrections",
        "gpus",
    )

    def __init__(
        self, record: JobRecord, req: float, user: int | None = _UNREAD, actual: float = _UNREAD
    ) -> None:
        self.record = record
        self.seq: int = record.seq
        self.subtime: float = record.subtime
        self.res: int = record.res
        self.mem: float = getattr(record, "mem", 0.0)
        self.gpus: int = getattr(record, "gpus", 0)
        self.req = req
        self._user = user
        self._actual = actual
        #: Predicted run time at submission (what orderings read).
        self.pred = req
        self.start = math.nan
        #: Current predicted run time from the start (grows with corrections).
        self.run_pred = req
        self.corrections = 0

    def _read_facts(self) -> None:
        user, actual = job_facts(self.record)
        if self._user is _UNREAD:
            self._user = user
        if self._actual is _UNREAD:
            self._actual = actual

    @property
    def user(self) -> int | None:
        """The job's user id (``None``: unknown)."""
        if self._user is _UNREAD:
            self._read_facts()
        return self._user

    @property
    def actual(self) -> float:
        """The real run time at the reference speed (NaN: unknown)."""
        if self._actual is _UNREAD:
            self._read_facts()
        return self._actual

    @property
    def predicted_end(self) -> float:
        return self.start + self.run_pred


def job_facts(record: JobRecord) -> tuple[int | None, float]:
    """User id and real run time at the reference speed of an engine job, from its workload
    entry (job field ``user``, else profile field ``user``; ``delay``, or ``cpu`` flops /
    (``req_ops`` / ``req_time``)). Unknown values are ``None`` / NaN."""
    job = record.job
    spec = getattr(job, "spec", job)
    profile: Any = getattr(job, "profile", None)  # the engine's job is not typed here
    if isinstance(profile, str) or profile is None:
        profile = getattr(spec, "profile", None)
    pextra = getattr(profile, "extra", None) or {}
    jextra = getattr(spec, "extra", None) or {}
    user = jextra.get("user", pextra.get("user"))
    user = int(user) if isinstance(user, (int, float)) and not isinstance(user, bool) else None
    actual = math.nan
    ptype = getattr(profile, "type", None)
    if ptype == "delay" and profile.delay is not None:
        actual = float(profile.delay)
    elif profile is not None and getattr(profile, "cpu", None) is not None:
        req_ops, req_time = pextra.get("req_ops"), pextra.get("req_time")
        if req_ops and req_time:
            cpu = float(profile.cpu)
            if ptype == "parallel_homogeneous_total":
                cpu /= max(record.res, 1)
            actual = cpu * float(req_time) / float(req_ops)
    return user, actual


def make_predictor(config: SchedulerConfig) -> Predictor:
    """The predictor the configuration names."""
    name = config.triple.predictor
    if name == "requested":
        return RequestedTime()
    if name == "clairvoyant":
        return Clairvoyant()
    if name == "ave2":
        return Ave2()
    if name == "regression":
        from hdeeprm.scheduling.regression import OnlineRegression

        return OnlineRegression(config.triple.loss)
    raise ValueError(f"unknown predictor {name!r}")


class BackfillScheduler:
    """EASY / EASY-SJBF / conservative backfilling over the workload manager's queue.

    Args:
        config: the heuristic triple, orderings and threshold.
        predictor: overrides the one ``config`` names (for tests and agents).
        orderings: further orderings :meth:`use_orderings` may switch to during a run (an
            agent choosing the ordering at each decision point); their static sort orders are
            kept from the first submission on.
    """

    def __init__(
        self,
        config: SchedulerConfig,
        predictor: Predictor | None = None,
        *,
        orderings: Iterable[str] = (),
    ) -> None:
        self.config = config
        self._predictor_given = predictor is not None
        self.predictor = predictor if predictor is not None else make_predictor(config)
        self.variant = config.triple.variant
        self.primary = canonical(config.primary)
        self.backfill = canonical(config.backfill)
        self.theta = config.theta
        self.correction = config.triple.correction
        #: Queued jobs in submission (= FCFS) order.
        self.queue: dict[int, SchedJob] = {}
        #: Running jobs by submission number.
        self.running: dict[int, SchedJob] = {}
        self.ends = RunningEnds()
        #: Sorted ``(key, seq)`` lists of the static orderings in use (FCFS is ``queue``).
        self._sorted: dict[str, list[tuple[float, int]]] = {}
        for name in sorted({self.primary, self.backfill, *map(canonical, orderings)}):
            if name not in DYNAMIC and name != "FCFS":
                self._sorted[name] = []
        #: The queue by ``(cores, memory per task)`` in FCFS and every static ordering kept
        #: sorted: the backfilling walk visits only requests that could start (see
        #: :mod:`.candidates`).
        self._candidates = CandidateIndex(["FCFS", *self._sorted])
        self._warned_actual = False
        self._clairvoyant = config.triple.predictor == "clairvoyant"
        #: ``(cores, memory per task)`` lower corners of the requests the resource manager
        #: refuses now (:meth:`_launch`): this pass's refusals and the proven ones kept.
        self._refused: list[tuple[int, float]] = []
        #: The refusals proven by the fit capacity, kept from pass to pass (moved as jobs
        #: end: :meth:`_carried_refusals`).
        self._proven: list[tuple[int, float]] = []
        #: Length of :attr:`_proven` when it was last made a staircase.
        self._stairs = 0
        #: Tasks of the jobs ended since the last pass, and their largest memory per task.
        self._freed_tasks = 0
        self._freed_mem = 0.0
        #: Whether the proven refusals are void (a reset, an interrupted pass).
        self._void = True
        #: The fit capacity of the pass's ``start`` (``start.capacity``), if it has one.
        self._capacity: Callable[[float], int] | None = None
        #: During a pass, ``start.counted`` (else ``start``): places a job the fit capacity
        #: just admitted (``None`` between passes: not kept, so the scheduler pickles).
        self._counted: Callable[[JobRecord], bool] | None = None
        #: Memory per task (``> 0``) of the jobs ``start`` refused so far (:meth:`_try`).
        self._refused_mems: set[float] = set()
        #: Jobs submitted since the last pass, in submission order.
        self._fresh: list[SchedJob] = []
        #: Whether something since the last pass may let an older queued job start (a
        #: completion, a correction, an ordering switch): see :meth:`_backfill_fresh`.
        self._loosened = True
        #: The last EASY pass's head (reserved job; ``None`` if it had none), its shadow
        #: time, and the free and spare cores left when its backfilling walk ended.
        self._last_head: SchedJob | None = None
        self._last_shadow = math.inf
        self._last_now = math.nan
        self._last_free = 0
        self._last_extra = 0
        #: Whether refusals are exact per ``(cores, memory per task)``: no job asked for GPUs,
        #: which the refusal shortcut does not see (:meth:`_launch`).
        self._cores_and_memory_only = True
        #: Whether every prediction made is at least 1 s (the predictors' floor), so a job
        #: reserved "now" lets no queued job end by its reservation
        #: (:meth:`_only_fresh_can_start`).
        self._predictions_from_1s = True
        #: Jobs started by backfilling (not at the head of the primary queue).
        self.nb_backfilled = 0
        #: Corrections applied to running jobs.
        self.nb_corrections = 0
        #: Work counters (tests and benchmarks): decision points, backfilling walks over the
        #: whole queue (candidate index or scan), walks over the jobs submitted since the last
        #: pass only, and queued jobs the backfilling walks tested against the reservation
        #: (those needing no more cores than free).
        self.nb_passes = 0
        self.nb_full_walks = 0
        self.nb_fresh_walks = 0
        self.nb_examined = 0
        #: Free core ranges and running jobs' ranges (``hosts: "contiguous"``), built at the
        #: first pass, when every core is free.
        self._contiguous: ContiguousCores | None = None
        #: ``(time, is a completion, seq)`` since the last pass (``hosts: "contiguous"``).
        self._events: list[tuple[float, bool, int]] = []

    # --- lifecycle ----------------------------------------------------------------------
    def reset(self) -> None:
        """Empty queue, nothing running, a fresh predictor (unless one was given)."""
        self.queue.clear()
        self.running.clear()
        self.ends.clear()
        for lst in self._sorted.values():
            lst.clear()
        self._candidates.clear()
        self._fresh.clear()
        self._loosened = True
        self._void = True
        self._proven.clear()
        self._refused_mems.clear()
        self._last_head = None
        self._cores_and_memory_only = True
        self._predictions_from_1s = True
        if not self._predictor_given:
            self.predictor = make_predictor(self.config)
        self.nb_backfilled = 0
        self.nb_corrections = 0
        self.nb_passes = self.nb_full_walks = self.nb_fresh_walks = self.nb_examined = 0
        self._contiguous = None
        self._events.clear()

    def submitted(self, record: JobRecord, now: float) -> None:
        """A job entered the queue."""
        if self._clairvoyant:  # its warning comes at submission: the facts are read now
            user, actual = job_facts(record)
            if math.isnan(actual):
                if not self._warned_actual:
                    LOG.warning(
                        "clairvoyant predictor: job %s has no readable run time; "
                        "using its requested time",
                        record.id,
                    )
                    self._warned_actual = True
                actual = record.req_time
            job = SchedJob(record, record.req_time, user, actual)
        else:  # user and real run time read if the predictor asks
            job = SchedJob(record, record.req_time)
        job.pred = self.predictor.predict(job, now)
        job.run_pred = job.pred
        if not job.pred >= 1.0:
            self._predictions_from_1s = False
        self.queue[job.seq] = job
        self._fresh.append(job)
        if getattr(record, "gpus", 0):
            self._cores_and_memory_only = False
        self._candidates.add(job)
        for name, lst in self._sorted.items():
            insort(lst, (static_key(name)(job), job.seq))
        if self.config.hosts == "contiguous":
            self._events.append((now, False, job.seq))

    def completed(self, record: JobRecord, now: float) -> None:
        """A running job ended (its cores are already free)."""
        self._loosened = True
        alloc = getattr(record, "alloc", None)
        self._freed_tasks += len(alloc) if alloc else record.res
        mem = getattr(record, "mem", 0.0)
        if mem > self._freed_mem:
            self._freed_mem = mem
        job = self.running.pop(record.seq, None)
        if job is None:
            return
        self.ends.remove(job.seq, job.predicted_end)
        if self._contiguous is not None:
            self._events.append((now, True, job.seq))  # its range is freed in its turn
        self.predictor.observe(job, now - job.start, now)

    # --- queue orders -------------------------------------------------------------------
    def _order(self, name: str, now: float, done: set[int]) -> Iterator[SchedJob]:
        """Queued jobs (not in ``done``) in ordering ``name``."""
        queue = self.queue
        # The queue and the sorted lists are not modified during a pass (started jobs are
        # forgotten at its end), so they are iterated in place, without copies.
        if name == "FCFS":
            for job in queue.values():
                if job.seq not in done:
                    yield job
        elif name in self._sorted:
            for _, seq in self._sorted[name]:
                if seq not in done:
                    yield queue[seq]
        else:
            for job in sorted(queue.values(), key=sort_key(name, now)):
                if job.seq not in done:
                    yield job

    def _primary_order(self, now: float, done: set[int]) -> Iterator[SchedJob]:
        theta = self.theta
        if theta is None:
            yield from self._order(self.primary, now, done)
            return
        cutoff = now - theta
        urgent: set[int] = set()
        for job in self.queue.values():  # FCFS order: the overdue jobs are a prefix
            if job.subtime >= cutoff:
                break
            if job.seq not in done:
                urgent.add(job.seq)
                yield job
        for job in self._order(self.primary, now, done):
            if job.seq not in urgent:
                yield job

    # --- decisions ----------------------------------------------------------------------
    def _correct(self, now: float) -> None:
        ends, name = self.ends, self.correction
        expired = ends.expired(now)
        if expired:
            self._loosened = True  # a reservation may move earlier (an overdue job)
        for seq in expired:
            job = self.running[seq]
            self.nb_corrections += advance(job, name, now)
            pred = job.run_pred
            if self._contiguous is not None:
                self._contiguous.moved(seq, job.start + pred)
            if job.start + pred <= now:
                ends.mark_overdue(seq)  # at the requested time: may end at any instant
            else:
                ends.add(seq, job.start + pred, job.res)

    def _launch(
        self,
        job: SchedJob,
        now: float,
        start: StartJob,
        done: set[int],
        cores: range | None = None,
    ) -> bool:
        # Within one pass the platform only fills up, and the tasks a job can place are
        # monotone in its cores and memory per task: a job needing at least the cores and the
        # memory of one already refused is refused too, without a costly allocation attempt.
        # (Not for given cores: another range may hold the memory one refused did not.)
        if cores is None:
            res, mem = job.res, job.mem
            for r, m in self._refused:
                if res >= r and mem >= m:
                    return False
            return self._try(job, now, start, done)
        if not start(job.record, cores):
            return False
        self._started(job, now, done)
        return True

    def _try(self, job: SchedJob, now: float, start: StartJob, done: set[int]) -> bool:
        """Ask the resource manager to start ``job`` (not dominated by a refused request: the
        caller checked), and remember a refusal.

        A job of ``mem > 0`` MB per task and no GPUs, of a size refused before, is first
        measured against the fit capacity (``start.capacity``): ``start`` accepts it exactly
        when ``res <= capacity`` (:meth:`WorkloadManager.fit_capacity`), so a refusal costs
        that one count instead of a refused ``start`` followed by the count (RICC: about 2
        million refusals). Sizes never refused are not counted first: the workload manager
        answers a size it does not keep counts for by a pass over the nodes that stops as
        soon as the tasks fit, where a count would go through every node. A job the count
        admits is placed by ``start.counted`` when ``start`` has one (the same placement,
        without the workload manager asking again whether it fits)."""
        mem = job.mem
        capacity = self._capacity
        if capacity is not None and mem in self._refused_mems and not job.gpus and self.count_first:
            most = capacity(mem)
            if most < job.res:
                self._refused.append((most + 1, mem))
                self._proven.append((most + 1, mem))
                return False
            placed = (self._counted or start)(job.record)  # set during a pass
        else:
            placed = start(job.record)
        if not placed:
            # Only a job asking for no GPUs proves that (cores, memory) cannot fit: one
            # refused for want of GPUs says nothing of a job that needs none.
            if not job.gpus:
                if mem > 0.0:
                    self._refused_mems.add(mem)
                least, proven = self._refused_from(job.res, mem, start)
                self._refused.append((least, mem))
                if proven:
                    self._proven.append((least, mem))
            return False
        self._started(job, now, done)
        return True

    def _started(self, job: SchedJob, now: float, done: set[int]) -> None:
        done.add(job.seq)
        job.start = now
        self.running[job.seq] = job
        self.predictor.started(job, now)
        self.ends.add(job.seq, now + job.run_pred, job.res)

    @staticmethod
    def _refused_from(res: int, mem: float, start: StartJob) -> tuple[int, bool]:
        """The fewest tasks of ``mem`` MB each that are now refused, after a job of ``res`` such
        tasks was, and whether the fit capacity proves it: ``res`` (unproven), or one more than
        the tasks that fit when the workload manager says how many (``start.capacity``,
        :meth:`WorkloadManager.fit_capacity`). That count only shrinks while no job ends (jobs
        only start) and as the memory per task grows, so every request of at least that many
        tasks of at least ``mem`` MB is refused until a job ends, not only those of at least
        ``res`` tasks (late in RICC, where the free cores' nodes lack memory, about one refused
        request in three then needs asking)."""
        capacity = getattr(start, "capacity", None)
        if capacity is None or mem <= 0.0:
            return res, False
        most = capacity(mem)
        return (most + 1, True) if most < res else (res, False)

    def _carried_refusals(self) -> list[tuple[int, float]]:
        """The refusals a pass starts with: those the fit capacity proved in earlier passes,
        moved by the jobs ended since.

        While no job ends the platform only fills up: every fit capacity is at most what it
        was, and a refusal ``(r, m)`` (every request of ``r``+ tasks of ``m``+ MB) still
        holds. A job ending frees ``c`` tasks of ``u`` MB on a node: that node's count for
        tasks of ``m >= u`` MB, ``min(free cores, (free memory + tol) // m)``, grows by at
        most ``c`` (``c`` more cores, and ``ceil(c u / m) <= c`` more tasks' memory), one more
        for the rounding of the memory sum: ``2 c`` in all. So after jobs of ``T`` tasks in
        all, each of at most ``m`` MB per task, ``(r + 2 T, m)`` still holds; a refusal of
        ``m`` below the memory per task of a job that ended is dropped (memory freed in large
        pieces can open cores that memory held back; and the workload manager's count of
        small tasks switches to the free cores once no large task runs, which this bound
        does not follow). Those carried over are kept as a staircase (none covers another),
        so the list a walk scans per request stays short."""
        proven = self._proven
        if self._void or not self.carry_refusals:
            self._void = False
            self._freed_tasks, self._freed_mem = 0, 0.0
            proven.clear()
            self._stairs = 0
            return []
        # Nothing proven since the staircase was built: it is one still (a common bump and
        # dropping steps keep it one), so it needs no sort.
        grown = len(proven) != self._stairs
        if self._freed_tasks:
            bump, least = 2 * self._freed_tasks, self._freed_mem
            self._freed_tasks, self._freed_mem = 0, 0.0
            proven = [(r + bump, m) for r, m in proven if m >= least]
        if grown and len(proven) > 1:
            proven.sort()
            kept: list[tuple[int, float]] = []
            lowest = math.inf
            for r, m in proven:  # by cores: kept if it needs less memory than all before
                if m < lowest:
                    kept.append((r, m))
                    lowest = m
            proven = kept
        self._proven = proven
        self._stairs = len(proven)
        return list(proven)

    def schedule(self, now: float, free: Callable[[], int], start: StartJob) -> None:
        """Start the jobs the variant chooses at ``now`` (via ``start``)."""
        if self.config.hosts == "contiguous":
            self._fresh.clear()  # one pass per event there: no walk of the new jobs alone
            self._schedule_per_event(now, free, start)
            return
        if not self.queue:
            self._fresh.clear()
            self._last_head = None
            return
        self.nb_passes += 1
        self._correct(now)
        done: set[int] = set()
        self._refused = self._carried_refusals()
        self._capacity = getattr(start, "capacity", None)
        self._counted = getattr(start, "counted", start)
        completed = False
        try:
            if self.variant == "conservative":
                self._conservative(now, free, start, done)
                self._last_head = None
            else:
                self._easy(now, free, start, done)
            completed = True
        finally:
            self._counted = None
            self._forget(done)
            self._fresh.clear()
            # An interrupted pass leaves no state to build on: the next pass is a full one.
            self._loosened = not completed
            self._void = self._void or not completed

    def _forget(self, done: set[int]) -> None:
        queue = self.queue
        candidates = self._candidates
        for seq in done:
            job = queue.pop(seq)
            candidates.remove(job)
            for name, lst in self._sorted.items():
                i = bisect_left(lst, (static_key(name)(job), seq))
                del lst[i]

    def _easy(self, now: float, free: Callable[[], int], start: StartJob, done: set[int]) -> None:
        head = None
        primary_started = False
        # FCFS without a threshold is the queue's own order; ``done`` only holds jobs the
        # walk already passed (it starts empty), so the queue is walked as it is.
        if self.primary == "FCFS" and self.theta is None and not done:
            jobs: Iterable[SchedJob] = self.queue.values()
        else:
            jobs = self._primary_order(now, done)
        for job in jobs:
            if job.res <= free() and self._launch(job, now, start, done):
                primary_started = True
                continue
            head = job
            break
        if head is None:
            self._last_head = None
            return
        avail = free()
        shadow, extra = self.ends.shadow(head.res, avail, now)
        done.add(head.seq)  # not a backfilling candidate
        try:
            if not primary_started and self._only_fresh_can_start(head, now, avail, shadow, extra):
                self.nb_fresh_walks += 1
                extra = self._backfill_fresh(now, free, start, done, shadow, extra)
            elif self.backfill in self._candidates:
                self.nb_full_walks += 1
                extra = self._backfill_indexed(now, free, start, done, shadow, extra)
            else:
                self.nb_full_walks += 1
                extra = self._backfill_scan(now, free, start, done, shadow, extra)
        finally:
            done.discard(head.seq)
        self._last_head, self._last_now = head, now
        self._last_shadow, self._last_free, self._last_extra = shadow, free(), extra

    #: Whether the refusals the fit capacity proves are kept for the next passes while no job
    #: ends (:meth:`_carried_refusals`), and whether a size refused before is counted before
    #: ``start`` is asked (:meth:`_try`); ``False`` asks as the earlier versions did (tests
    #: compare both).
    carry_refusals = True
    count_first = True

    #: Whether a pass may walk only the jobs submitted since the last pass when nothing else
    #: changed (:meth:`_only_fresh_can_start`); ``False`` walks the whole queue at every pass
    #: (tests compare both).
    fresh_walks = True

    def _only_fresh_can_start(
        self, head: SchedJob, now: float, avail: int, shadow: float, extra: int
    ) -> bool:
        """Whether no job queued at the last pass can be backfilled now, so the walk may visit
        only the jobs submitted since (the primary walk started nothing and stopped at
        ``head``, with ``avail`` cores free, reserved at ``shadow`` with ``extra`` spare).

        Every older queued job was turned down by the last pass's walk (or its primary walk
        started it) for one of three reasons, each still true now when: *more cores than free*
        -- no more are free now than when that walk ended; *refused by the resource manager*
        (or dominated by a refused request) -- no job ended since, so the platform only filled
        up; *would end after the reservation and needs more than the spare cores* -- the
        reservation is no later (and ``now`` is later) and no more cores are spare than when
        that walk ended -- or both reservations are "now" (the head has the cores but not the
        memory: on RICC, most passes after a submission), where no job of at least 1 s ends by
        the reservation. Nothing loosened since (no job ended, no prediction was corrected, no
        ordering switched), the same head and no threshold (jobs become urgent with time
        alone) are required too; the free, spare and shadow comparisons make the rest exact
        (e.g. ties of predicted ends at the shadow time can change the spare cores). GPU
        requests turn this off: the refusal shortcut of :meth:`_launch` does not see GPUs, so
        a full walk may refuse a new job a walk of the new jobs alone would try.
        """
        return (
            self.fresh_walks
            and not self._loosened
            and head is self._last_head
            and self.theta is None
            and self._cores_and_memory_only
            and avail <= self._last_free
            and extra <= self._last_extra
            and (
                shadow <= self._last_shadow
                or (
                    shadow == now
                    and self._last_shadow == self._last_now
                    and self._predictions_from_1s
                )
            )
        )

    def _backfill_fresh(
        self,
        now: float,
        free: Callable[[], int],
        start: StartJob,
        done: set[int],
        shadow: float,
        extra: int,
    ) -> int:
        """The backfilling walk over the jobs submitted since the last pass only, in the
        backfilling ordering (the same relative order as in the whole queue); returns the
        cores still spare at the shadow time."""
        fresh = [job for job in self._fresh if job.seq not in done]
        if len(fresh) > 1 and self.backfill != "FCFS":
            fresh.sort(key=sort_key(self.backfill, now))
        for job in fresh:
            if job.res > free():
                continue
            self.nb_examined += 1
            extra = self._backfill_one(job, now, start, done, shadow, extra)
        return extra

    def _backfill_one(
        self,
        job: SchedJob,
        now: float,
        start: StartJob,
        done: set[int],
        shadow: float,
        extra: int,
    ) -> int:
        """Start ``job`` if it cannot delay the head's reservation: it ends by the shadow
        time, or fits in the ``extra`` cores spare then. Returns the cores still spare."""
        ends_in_time = now + job.run_pred <= shadow
        if not ends_in_time and job.res > extra:
            return extra
        if self._launch(job, now, start, done):
            self.nb_backfilled += 1
            if not ends_in_time:
                extra -= job.res
        return extra

    def _schedule_per_event(self, now: float, free: Callable[[], int], start: StartJob) -> None:
        """``hosts: "contiguous"``: one EASY pass after each submission and completion, in
        the order the simulator reported them, as pybatsim decides (its ``easyBackfill``
        schedules on every event). Events of earlier instants (completions while nothing was
        queued, where such a pass starts nothing) are only applied."""
        if self._contiguous is None:
            if self.running:
                raise RuntimeError("contiguous hosts: jobs started outside the scheduler")
            self._contiguous = ContiguousCores(free())
        contiguous = self._contiguous
        events = self._events
        self._events = []
        self._correct(now)
        self._refused = []
        #: Jobs submitted in this batch stay invisible until their turn; started ones join.
        done = {seq for _, ended, seq in events if not ended}
        started: set[int] = set()
        try:
            for t, ended, seq in events:
                if ended:
                    contiguous.ended(seq)
                else:
                    done.discard(seq)
                if t < now:
                    continue
                before = len(done)
                self._easy_contiguous(now, free, start, done)
                if len(done) > before:
                    started.update(s for s in done if s in self.running)
        finally:
            self._forget(started)

    def _easy_contiguous(
        self, now: float, free: Callable[[], int], start: StartJob, done: set[int]
    ) -> None:
        """EASY on contiguous core ranges (pybatsim's ``easyBackfill``; :mod:`.contiguous`)."""
        contiguous = self._contiguous
        assert contiguous is not None
        ranges = contiguous.ranges
        head = None
        for job in self._primary_order(now, done):
            span = ranges.first_fit(job.res)
            if span is not None and self._launch_span(job, now, start, done, span, contiguous):
                continue
            head = job
            break
        if head is None or len(self.queue) - len(done) < 2:
            return  # nothing else waits: no reservation (the ranges' fill ends stay as they are)
        first, last, shadow = contiguous.reservation(head.res)
        marks = ranges.limit(first, last, max(shadow, now) - now)
        done.add(head.seq)  # not a backfilling candidate
        try:
            for job in self._order(self.backfill, now, done):
                span = ranges.first_fit(job.res, job.run_pred)
                if span is not None and self._launch_span(job, now, start, done, span, contiguous):
                    self.nb_backfilled += 1
        finally:
            done.discard(head.seq)
            ranges.unlimit(marks)

    def _launch_span(
        self,
        job: SchedJob,
        now: float,
        start: StartJob,
        done: set[int],
        span: Span,
        contiguous: ContiguousCores,
    ) -> bool:
        lo, hi = span.carve(job.res)
        if not self._launch(job, now, start, done, range(lo, hi + 1)):
            return False
        contiguous.ranges.take(span, job.res)
        contiguous.started(job.seq, lo, hi, job.predicted_end)
        return True

    def _backfill_indexed(
        self,
        now: float,
        free: Callable[[], int],
        start: StartJob,
        done: set[int],
        shadow: float,
        extra: int,
    ) -> int:
        """The backfilling walk over the candidate index: the same jobs started in the same
        order as :meth:`_backfill_scan`, without visiting requests that cannot start; returns
        the cores still spare at the shadow time.

        The buckets' lists are merged in the backfilling ordering (a heap with one entry per
        bucket) and a bucket is dropped, with all its jobs, as soon as it cannot hold a job that
        starts: it needs more cores than are free, the cores and memory of a refused request
        (:meth:`_launch`), or more than the spare cores while its shortest job ends after the
        reservation. Each of these only tightens during the walk, so it is asked when the
        bucket enters the heap and before each of its jobs; the test, the merge and the
        reservation test of :meth:`_backfill_one` are inlined (this loop runs for every job a
        walk visits: millions on RICC)."""
        refused = self._refused
        # The free cores change only when a job starts: read once and after each start.
        avail = free()
        name = self.backfill
        heap = []
        # The buckets come by ascending cores: one is dominated by a refusal when its memory
        # reaches the least memory refused with at most its cores (the refusals sorted by
        # cores, read once for all the buckets instead of scanned for each).
        steps = sorted(refused) if refused else ()
        k, nb_steps, lowest = 0, len(steps), math.inf
        for bucket in self._candidates.up_to(avail):
            res = bucket.res
            while k < nb_steps and steps[k][0] <= res:
                m = steps[k][1]
                if m < lowest:
                    lowest = m
                k += 1
            if bucket.mem >= lowest:
                continue
            if res > extra and now + bucket.preds[0] > shadow:
                continue
            head = bucket.heads[name]
            key, seq = bucket.keys[name][head]
            heap.append((key, seq, head, bucket))
        if not heap:
            return extra
        heapify(heap)
        queue, tried = self.queue, self._try
        pop, replace = heappop, heapreplace
        examined = backfilled = 0
        while heap:
            _, seq, pos, bucket = heap[0]
            res = bucket.res
            if res > avail:
                pop(heap)
                continue
            if refused:
                mem = bucket.mem
                dominated = False
                for r, m in refused:
                    if res >= r and mem >= m:
                        dominated = True
                        break
                if dominated:
                    pop(heap)
                    continue
            fits_extra = res <= extra
            if not fits_extra and now + bucket.preds[0] > shadow:
                pop(heap)
                continue
            lst = bucket.keys[name]
            pos += 1
            if pos < len(lst):
                key, nxt = lst[pos]
                replace(heap, (key, nxt, pos, bucket))
            else:
                pop(heap)
            if seq in done:
                continue
            examined += 1
            job = queue[seq]
            if now + job.run_pred <= shadow:
                if tried(job, now, start, done):
                    backfilled += 1
                    avail = free()
            elif fits_extra and tried(job, now, start, done):
                backfilled += 1
                extra -= res
                avail = free()
        self.nb_examined += examined
        self.nb_backfilled += backfilled
        return extra

    def _backfill_scan(
        self,
        now: float,
        free: Callable[[], int],
        start: StartJob,
        done: set[int],
        shadow: float,
        extra: int,
    ) -> int:
        """The backfilling walk over every queued job (dynamic orderings, sorted per pass);
        returns the cores still spare at the shadow time."""
        smallest = min(bucket.res for bucket in self._candidates.buckets.values())
        for job in self._order(self.backfill, now, done):
            avail = free()
            if avail < smallest:
                break
            if job.res > avail:
                continue
            self.nb_examined += 1
            extra = self._backfill_one(job, now, start, done, shadow, extra)
        return extra

    def _conservative(
        self, now: float, free: Callable[[], int], start: StartJob, done: set[int]
    ) -> None:
        profile = StepProfile(now, free(), self.ends)
        first = True
        for job in list(self._primary_order(now, done)):
            at = profile.earliest(job.res, job.run_pred)
            if at <= now and job.res <= free() and self._launch(job, now, start, done):
                if not first:
                    self.nb_backfilled += 1
            else:
                first = False
                if math.isinf(at):
                    continue
            profile.reserve(at, job.run_pred, job.res)

    def use_orderings(self, primary: str, backfill: str | None = None) -> None:
        """Switch the primary (and backfilling) ordering from the next pass on. A static
        ordering must be one the scheduler keeps sorted (the configuration's or one named in
        ``orderings`` at construction)."""
        primary = canonical(primary)
        backfill = None if backfill is None else canonical(backfill)
        for name in (primary, backfill):
            if name is None or name in self._sorted or name == "FCFS" or name in DYNAMIC:
                continue
            raise ValueError(f"ordering {name!r} was not named in BackfillScheduler(orderings=...)")
        if primary != self.primary or (backfill is not None and backfill != self.backfill):
            self._loosened = True  # another order may start jobs the last one did not
        self.primary = primary
        if backfill is not None:
            self.backfill = backfill

    # --- views --------------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        return {
            "scheduler": self.config.name,
            "backfilled": self.nb_backfilled,
            "corrections": self.nb_corrections,
        }
