"""A deterministic filler with a scheduling delay, for pybatsim 3.2.1 (run by file path:
``pybatsim tests/batsim/schedulers/delayedFiller.py``).

pybatsim's own ``fillerSched`` answers 5 ms after each message, which is what the delay tests
need, but walks its waiting jobs as a Python ``set`` of job objects, an order that depends on
memory addresses: two runs on the same Batsim differ (measured: 611 of 1,000 KTH allocations).
This one keeps the waiting jobs in submission order and starts, on each message, every job
that fits on the lowest free hosts, then answers ``DELAY`` seconds later.
"""

from batsim.batsim import BatsimScheduler
from procset import ProcSet

DELAY = 0.005


class DelayedFiller(BatsimScheduler):
    def onAfterBatsimInit(self):
        self.waiting = []
        self.free = ProcSet((0, self.bs.nb_compute_resources - 1))

    def _fill(self):
        started = []
        still = []
        for job in self.waiting:
            if job.requested_resources <= len(self.free):
                hosts = ProcSet(*list(self.free)[: job.requested_resources])
                job.allocation = hosts
                self.free -= hosts
                started.append(job)
            else:
                still.append(job)
        self.waiting = still
        self.bs.consume_time(DELAY)
        if started:
            self.bs.execute_jobs(started)

    def onJobSubmission(self, job):
        if job.requested_resources > self.bs.nb_compute_resources:
            self.bs.reject_jobs([job])
        else:
            self.waiting.append(job)
            self._fill()

    def onJobCompletion(self, job):
        self.free |= job.allocation
        self._fill()
