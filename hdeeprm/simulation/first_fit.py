"""Reference decision systems for the embedded engine (tests, benchmarks, baselines)."""

from __future__ import annotations

import heapq
from collections import deque

from hdeeprm.simulation.engine import SimJob
from hdeeprm.simulation.events import (
    JOB_COMPLETED,
    JOB_SUBMITTED,
    SIMULATION_BEGINS,
    Decision,
    ExecuteJob,
    Message,
    RejectJob,
)


class FirstFitFCFS:
    """First-come first-served with no backfilling, on the lowest free host ids.

    Jobs start in submission order; the queue head starts as soon as ``res`` hosts are free,
    on the ``res`` lowest free ids, and nothing overtakes it. Jobs asking for more hosts than
    the platform has are rejected (they could never run). Free hosts live in a min-heap, so
    starting a job costs O(res log n), whatever the platform size.
    """

    def __init__(self) -> None:
        self.queue: deque[SimJob] = deque()
        self.free: list[int] = []
        self.nb_hosts = 0

    def handle(self, message: Message) -> list[Decision]:
        """Update the queue and free hosts from ``message``; start what can start now."""
        decisions: list[Decision] = []
        free = self.free
        for event in message.events:
            kind = event.type
            if kind == JOB_SUBMITTED:
                job = event.data["job"]
                if job.spec.res > self.nb_hosts:
                    decisions.append(RejectJob(job.id))
                else:
                    self.queue.append(job)
            elif kind == JOB_COMPLETED:
                for host in event.data["alloc"]:
                    heapq.heappush(free, host)
            elif kind == SIMULATION_BEGINS:
                self.nb_hosts = event.data["nb_resources"]
                self.free = free = list(range(self.nb_hosts))
        queue = self.queue
        pop = heapq.heappop
        while queue and queue[0].spec.res <= len(free):
            job = queue.popleft()
            decisions.append(ExecuteJob(job.id, [pop(free) for _ in range(job.spec.res)]))
        return decisions
